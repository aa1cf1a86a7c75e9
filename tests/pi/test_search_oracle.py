"""grep, find and ls against pi's own tools on the same trees (limits, notices, errors, details)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.pi.pi_tools import PiTools, make_tree, run_ours, swap_root

pytestmark = pytest.mark.oracle

TREE: dict[str, Any] = {
    ".gitignore": "ignored/\n*.log\n",
    "README.md": "Hello World\nsecond line\nhello again\n",
    "src/main.py": "def main():\n    print('hello')\n\n\ndef helper():\n    return 42\n",
    "src/util.py": "HELLO = 1\n# TODO: something\n",
    "src/deep/nested/mod.ts": "export const hello = 'x';\n",
    "src/app.spec.ts": "it('says hello')\n",
    "ignored/skip.py": "hello from ignored\n",
    "build.log": "hello log\n",
    ".hidden/secret.txt": "hello hidden\n",
    "crlf.txt": "first\r\nhello crlf\r\nlast\r\n",
    "long.txt": "hello " + "z" * 700 + "\n",
    "empty_dir": None,
    "Zeta.txt": "z\n",
    "alpha.txt": "a\n",
    "_under.txt": "u\n",
    "-dash.txt": "d\n",
    "1num.txt": "n\n",
    "Éclair.txt": "e\n",
}
MANY = {f"f{i:04d}.txt": f"needle {i}\n" for i in range(150)}


def _sorted_lines(result: dict[str, Any]) -> dict[str, Any]:
    """rg and fd search in parallel: compare their lines as a sorted list, the rest as is."""
    if "ok" not in result:
        return result
    text = result["ok"]["content"][0]["text"]
    body, _, notice = text.partition("\n\n[")
    return {"lines": sorted(body.split("\n")), "notice": notice, "details": result["ok"].get("details")}


async def _both(
    pi_tools: PiTools, tmp_path: Path, tool: str, args: dict[str, Any], files: dict[str, Any], cwd: str = ""
) -> tuple[dict[str, Any], dict[str, Any]]:
    pi_root, our_root = tmp_path / "pi", tmp_path / "ours"
    make_tree(pi_root, files)
    make_tree(our_root, files)
    for root in (pi_root, our_root):  # old fd honours .gitignore only inside a repository
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    theirs = pi_tools.call(
        "execute", tool=tool, cwd=str(pi_root / cwd), args=swap_root(args, str(our_root), str(pi_root))
    )
    theirs.pop("updates", None)
    ours = await run_ours(tool, args, str(our_root / cwd))
    return ours, swap_root(theirs, str(pi_root), str(our_root))


GREP_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("simple", {"pattern": "hello"}, TREE),
    ("ignore case", {"pattern": "hello", "ignoreCase": True}, TREE),
    ("literal", {"pattern": "print('hello')", "literal": True}, TREE),
    ("regex", {"pattern": r"def \w+\(\)"}, TREE),
    ("glob", {"pattern": "hello", "glob": "*.py"}, TREE),
    ("sub path", {"pattern": "hello", "path": "src"}, TREE),
    ("single file", {"pattern": "hello", "path": "README.md"}, TREE),
    ("context", {"pattern": "helper", "context": 2, "path": "src"}, TREE),
    ("context at file start", {"pattern": "Hello World", "context": 3}, TREE),
    ("crlf with context", {"pattern": "crlf", "context": 1}, TREE),
    ("fractional context", {"pattern": "helper", "context": 1.5, "path": "src"}, TREE),
    ("long line cut", {"pattern": "zzzz"}, TREE),
    ("no matches", {"pattern": "nothing-matches-this"}, TREE),
    ("missing path", {"pattern": "x", "path": "nope"}, TREE),
    ("bad regex", {"pattern": "("}, TREE),
    ("limit", {"pattern": "needle", "limit": 5}, MANY),
    ("default limit", {"pattern": "needle"}, MANY),
]


@pytest.mark.parametrize(("args", "files"), [c[1:] for c in GREP_CASES], ids=[c[0] for c in GREP_CASES])
async def test_grep_matches_pi(
    pi_tools: PiTools, tmp_path: Path, args: dict[str, Any], files: dict[str, Any]
) -> None:
    ours, theirs = await _both(pi_tools, tmp_path, "grep", args, files)
    if args.get("limit") or args["pattern"] == "needle":
        # which matches win the race to the limit differs between runs (of pi too): compare the shape
        assert ours["ok"]["details"] == theirs["ok"]["details"]
        assert ours["ok"]["content"][0]["text"].count("\n") == theirs["ok"]["content"][0]["text"].count("\n")
        assert (
            ours["ok"]["content"][0]["text"].split("\n\n[")[1]
            == theirs["ok"]["content"][0]["text"].split("\n\n[")[1]
        )
        return
    if "context" in args:
        assert ours == theirs
        return
    assert _sorted_lines(ours) == _sorted_lines(theirs)


FIND_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("extension", {"pattern": "*.py"}, TREE),
    ("path pattern", {"pattern": "src/**/*.ts"}, TREE),
    ("double star", {"pattern": "**/*.txt"}, TREE),
    ("hidden and gitignore", {"pattern": "*"}, TREE),
    ("sub path", {"pattern": "*.py", "path": "src"}, TREE),
    ("directories get a slash", {"pattern": "nested"}, TREE),
    ("no files", {"pattern": "*.rs"}, TREE),
    ("missing path", {"pattern": "*", "path": "nope"}, TREE),
    ("limit", {"pattern": "*.txt", "limit": 7}, MANY),
]


@pytest.mark.parametrize(("args", "files"), [c[1:] for c in FIND_CASES], ids=[c[0] for c in FIND_CASES])
async def test_find_matches_pi(
    pi_tools: PiTools, tmp_path: Path, args: dict[str, Any], files: dict[str, Any]
) -> None:
    ours, theirs = await _both(pi_tools, tmp_path, "find", args, files)
    if args.get("limit"):
        assert ours["ok"]["details"] == theirs["ok"]["details"]
        assert len(ours["ok"]["content"][0]["text"].split("\n")) == len(
            theirs["ok"]["content"][0]["text"].split("\n")
        )
        return
    assert _sorted_lines(ours) == _sorted_lines(theirs)


LS_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("root", {}, TREE),
    ("sub path", {"path": "src"}, TREE),
    ("empty", {"path": "empty_dir"}, TREE),
    ("a file", {"path": "README.md"}, TREE),
    ("missing", {"path": "nope"}, TREE),
    ("limit", {"limit": 10}, MANY),
    ("default limit", {}, {**MANY, **{f"g{i:03d}": "" for i in range(400)}}),
    ("byte limit", {}, {f"{'n' * 200}{i:03d}": "" for i in range(300)}),
]


@pytest.mark.parametrize(("args", "files"), [c[1:] for c in LS_CASES], ids=[c[0] for c in LS_CASES])
async def test_ls_matches_pi(
    pi_tools: PiTools, tmp_path: Path, args: dict[str, Any], files: dict[str, Any]
) -> None:
    ours, theirs = await _both(pi_tools, tmp_path, "ls", args, files)
    assert ours == theirs
