"""Shared helpers for the prompt tests: file trees, fixture copies, a restricted-privilege switch."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.oracle import PI_FIXTURES, PiOracle

SKILL_FIXTURES = PI_FIXTURES / "skills"
COLLISION_FIXTURES = PI_FIXTURES / "skills-collision"


class Tree:
    """A directory tree in a temp dir, written file by file."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, rel: str) -> str:
        return str(self.root / rel)

    def write(self, rel: str, text: str) -> str:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return str(path)

    def skill(
        self, rel_dir: str, description: str | None = "A skill.", name: str | None = None, extra: str = ""
    ) -> str:
        """Write ``<rel_dir>/SKILL.md`` with the given frontmatter fields."""
        head = []
        if name is not None:
            head.append(f"name: {name}")
        if description is not None:
            head.append(f"description: {description}")
        if extra:
            head.append(extra.rstrip("\n"))
        return self.write(f"{rel_dir}/SKILL.md", "---\n" + "\n".join(head) + "\n---\n\nBody.\n")


def copy_fixtures(src: Path, dst: Path) -> Path:
    """Copy a read-only shared fixture tree somewhere writable."""
    shutil.copytree(src, dst)
    for directory, _, files in os.walk(dst):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)
    return dst


# ---------------------------------------------------------------------------------------------
# Reading as a user without CAP_DAC_OVERRIDE: the tests run as root, which reads chmod-000 files.

_CAP_VERSION_3 = 0x20080522
_DAC_CAPS = (1 << 1) | (1 << 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def can_restrict_reads() -> bool:
    """True when chmod 000 will actually stop this thread from reading (non-root, or caps droppable)."""
    if os.geteuid() != 0:
        return True
    try:
        with reads_restricted():
            return True
    except OSError:
        return False


@contextmanager
def reads_restricted() -> Iterator[None]:
    """Drop CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH from this thread's effective set for a while.

    Capabilities are per thread on Linux, so the code under test (called on this thread) sees
    permission bits like an ordinary user; they are restored on exit.
    """
    if os.geteuid() != 0:
        yield
        return
    libc = _libc()
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    saved = data[0].effective
    data[0].effective = saved & ~_DAC_CAPS
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")
    try:
        yield
    finally:
        data[0].effective = saved
        libc.capset(ctypes.byref(header), data)


class RestrictedOracle(PiOracle):
    """The pi oracle started without DAC-override capabilities (via ``setpriv``), so that pi too
    fails on chmod-000 files while the tests run as root."""

    def __init__(self) -> None:
        root = os.geteuid() == 0
        super().__init__(["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"] if root else [])


def build_rich_tree(tree: Tree) -> tuple[str, str, str]:
    """A workspace exercising every discovery rule; returns (cwd, agent dir, home)."""

    def sk(name: str, desc: str) -> str:
        return f"---\nname: {name}\ndescription: {desc}\n---\nbody\n"

    files = {
        "outer/.agents/skills/above-git/SKILL.md": sk("above-git", "above the git root"),
        "outer/repo/.git/HEAD": "ref",
        "outer/repo/.agents/skills/repo-skill/SKILL.md": sk("repo-skill", "repo level"),
        "outer/repo/.agents/skills/ignored.md": sk("ignored", "root md in .agents is ignored"),
        "outer/repo/AGENTS.MD": "upper-case agents",
        "outer/repo/CLAUDE.md": "claude in repo",
        "outer/repo/app/.pi/skills/user-skill.md": sk("user-skill", "project root md"),
        "outer/repo/app/.pi/skills/proj/SKILL.md": sk("proj", "project dir skill"),
        "outer/repo/app/.pi/skills/proj/nested/SKILL.md": sk("nested", "below a skill root"),
        "outer/repo/app/.pi/skills/skip-me/SKILL.md": sk("skip-me", "excluded by override"),
        "outer/repo/app/.pi/skills/.hidden/SKILL.md": sk("hidden", "dot dir"),
        "outer/repo/app/.pi/skills/node_modules/x/SKILL.md": sk("x", "node_modules"),
        "outer/repo/app/.pi/skills/.gitignore": "ign*/\n",
        "outer/repo/app/.pi/skills/ignme/SKILL.md": sk("ignme", "gitignored"),
        "outer/repo/app/.pi/settings.json": json.dumps(
            {"skills": ["../extra", "-skills/skip-me", "!**/none"]}
        ),
        "outer/repo/app/extra/ext-one/SKILL.md": sk("ext-one", "from project settings"),
        "outer/repo/app/extra/top.md": sk("top", "root md in a settings dir"),
        "outer/repo/app/.agents/skills/app-agents/SKILL.md": sk("app-agents", "cwd .agents"),
        "outer/repo/app/AGENTS.md": "app agents",
        "outer/repo/app/CLAUDE.md": "app claude, shadowed",
        "outer/repo/app/.pi/SYSTEM.md": "custom system",
        "agent/APPEND_SYSTEM.md": "global append",
        "agent/AGENTS.md": "global agents",
        "agent/settings.json": json.dumps({"skills": ["~/shared-skills"]}),
        "agent/skills/user-skill/SKILL.md": sk("user-skill", "loses to the project"),
        "agent/skills/bad/SKILL.md": "---\ndescription: [x\n---\n",
        "home/.agents/skills/home-agents/SKILL.md": sk("home-agents", "home .agents"),
        "home/.agents/skills/home-root.md": sk("home-root", "root md in ~/.agents is ignored"),
        "home/shared-skills/shared/SKILL.md": sk("shared", "user settings with ~"),
    }
    for rel, text in files.items():
        tree.write(rel, text)
    os.symlink(tree.path("outer/repo/app/.pi/skills/proj"), tree.path("agent/skills/proj-link"))
    return tree.path("outer/repo/app"), tree.path("agent"), tree.path("home")
