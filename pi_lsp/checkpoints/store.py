"""The checkpoint store of one workspace: a private git object store driven by the ``git`` program.

Each workspace (a session's ``cwd``, by real path) gets a folder under
``<agentDir>/pi-lsp/checkpoints/<key>/`` holding a bare git directory (``git/``), the index that is
the stat cache of the workspace (``index``), the lock (``lock``), what the server last wrote
(``written.json``) and the undo records (``undo/``). The user's repository is never opened: every
git command gets ``GIT_DIR``/``GIT_INDEX_FILE``/``GIT_WORK_TREE`` of ours in its own environment
(never ``os.environ``, so no tool process sees them) and no system or global git config.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_lsp.agent_dir import agent_dir
from pi_lsp.atomic_file import replace_atomically

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's id of the empty tree (every git knows it without storing it)."""
LOCK_TIMEOUT = 30.0
ATTRIBUTES = b"* -text -eol -filter -ident -working-tree-encoding\n"
"""Overrides any ``.gitattributes`` of the workspace: bytes are stored as they are on disk."""
CONFIG = (
    ("core.bare", "false"),
    ("core.autocrlf", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("core.fsmonitor", "false"),
    ("core.quotePath", "false"),
    ("core.untrackedCache", "true"),
    ("gc.auto", "0"),
    ("index.version", "4"),
)

RESTORING = "restoring.json"
"""The journal of a restore in progress: the paths it writes (their temp files are removed if it
was interrupted)."""
TEMP_NAME = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{8}\.tmp")
"""The temp file a restore writes beside ``name`` (``atomic_file``'s naming; a link's too)."""
NEW_GIT = "git.new-"
"""The git directory being created (renamed to ``git`` once whole)."""
STALE_LOCKS = ("index.lock", "git/packed-refs.lock", "git/refs/pi-lsp/keep.lock", "git/shallow.lock")
"""Lock files a git command killed with us leaves; any of them found under our lock is stale."""

FileState = tuple[str, str] | None
"""A file as git records it: (mode ``100644``/``100755``/``120000``, blob id), or None (absent)."""


def _write_config(path: Path) -> None:
    """Our settings appended to the new store's config (one write instead of a git per key)."""
    sections: dict[str, list[str]] = {}
    for key, value in CONFIG:
        section, name = key.split(".")
        sections.setdefault(section, []).append(f"\t{name} = {value}\n")
    text = "".join(f"[{section}]\n" + "".join(lines) for section, lines in sections.items())
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


class StoreError(Exception):
    """The store could not be read or written (the service reports it as FileError)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"checkpoint store {path}: {reason}")
        self.path = path
        self.reason = reason


def remove_temp_files(cwd: str, path: str) -> None:
    """Remove the temp files an interrupted restore left beside ``path`` (never through a link)."""
    folder, name = os.path.split(os.path.join(cwd, path))
    try:
        if os.path.realpath(folder) != os.path.normpath(folder) or not os.path.isdir(folder):
            return  # a link on the way (the store's cwd is a real path)
        names = os.listdir(folder)
    except OSError:
        return
    for candidate in names:
        match = TEMP_NAME.fullmatch(candidate)
        if match is not None and match["name"] == name:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, candidate))


def checkpoints_root(base: Path | None = None) -> Path:
    return (base if base is not None else agent_dir()) / "pi-lsp" / "checkpoints"


def workspace_key(cwd: str) -> str:
    """The store folder's name for a workspace: its real path, hashed."""
    return hashlib.sha256(os.path.realpath(cwd).encode("utf-8", "surrogateescape")).hexdigest()[:24]


def blob_id(data: bytes) -> str:
    """git's blob id of ``data``, computed here (no process)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Change:
    """One path that differs between two trees."""

    path: str
    before: FileState
    after: FileState

    @property
    def kind(self) -> str:
        if self.before is None:
            return "added"
        return "deleted" if self.after is None else "modified"


class WorkspaceStore:
    """The store of the workspace ``cwd`` under ``root`` (default: the agent dir's)."""

    def __init__(self, cwd: str, root: Path | None = None) -> None:
        self.cwd = os.path.realpath(cwd)
        self.folder = checkpoints_root(root) / workspace_key(self.cwd)
        self.git_dir = self.folder / "git"
        self.index = self.folder / "index"
        self._ready = False
        self._held = threading.local()  # the lock's descriptor in the thread holding it

    # ------------------------------------------------------------------ setup and locking

    def env(self, work_tree: str | None = None, index: Path | None = None) -> dict[str, str]:
        """The environment of our git commands: the caller's without any ``GIT_*``, plus ours."""
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=work_tree or self.cwd,
            GIT_INDEX_FILE=str(index or self.index),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            LC_ALL="C",
        )
        return env

    def ensure(self) -> None:
        """Create the store on first use (idempotent; under the lock). The git directory is made
        whole beside its place (``git.new-*``: init, our config) and renamed into it, so a kill in
        the middle leaves either no store or a complete one; a leftover half is removed."""
        if self._ready:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for leftover in self.folder.glob(NEW_GIT + "*"):
                shutil.rmtree(leftover, ignore_errors=True)
            if not self.git_dir.is_dir():
                fresh = self.folder / f"{NEW_GIT}{os.getpid()}"
                self.git(["init", "--quiet", "--bare", str(fresh)], creating=True)
                _write_config(fresh / "config")
                os.rename(fresh, self.git_dir)
            workspace = os.fsencode(self.cwd) + b"\n"
            marker = self.folder / "workspace"
            if not marker.exists() or marker.read_bytes() != workspace:
                replace_atomically(marker, workspace, mode=0o644)
            info = self.git_dir / "info"
            info.mkdir(exist_ok=True)
            attributes = info / "attributes"
            if not attributes.exists() or attributes.read_bytes() != ATTRIBUTES:
                replace_atomically(attributes, ATTRIBUTES, mode=0o644)
        except OSError as error:
            raise StoreError(str(self.folder), error.strerror or str(error)) from error
        self._ready = True

    @contextlib.contextmanager
    def locked(self, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
        """The store's exclusive lock (other threads and other processes, e.g. a second server)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise StoreError(str(self.folder), error.strerror or str(error)) from error
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as error:
                    if error.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                        raise StoreError(str(self.folder), "timeout: the store stayed locked") from error
                    time.sleep(0.01)
            self._held.fd = fd
            self.ensure()
            self._recover()
            yield
        finally:
            self._held.fd = None
            os.close(fd)  # closing releases the lock (once git children holding it have ended)

    def _recover(self) -> None:
        """Undo what a process killed in the middle of a snapshot or a restore left (under the lock).

        Every git command of ours holds the lock too (it inherits the descriptor), so a lock file
        of git's seen now belongs to a command that is gone; a restore's journal names the files
        whose temp files may lie beside them in the workspace."""
        for name in STALE_LOCKS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.folder / name)
        journal = self.read_json(RESTORING) if (self.folder / RESTORING).exists() else None
        if journal is None:
            return
        for path in journal.get("paths", []) if isinstance(journal, dict) else []:
            remove_temp_files(self.cwd, str(path))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.folder / RESTORING)

    # ------------------------------------------------------------------ running git

    def git(
        self,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        work_tree: str | None = None,
        index: Path | None = None,
        creating: bool = False,
    ) -> bytes:
        """Run ``git args`` on this store; its stdout, or StoreError with git's message.
        ``creating``: ``git init`` of the store, which takes no work tree."""
        env, where, fds = self._git_context(work_tree, index, creating)
        try:
            done = subprocess.run(
                ["git", *args],
                input=stdin,
                capture_output=True,
                env=env,
                cwd=where,
                check=False,
                pass_fds=fds,
            )
        except OSError as error:
            raise StoreError(str(self.folder), f"cannot run git: {error.strerror or error}") from error
        if done.returncode != 0:
            raise self._failed(args, done.stderr, done.returncode)
        return done.stdout

    def git_listing(self, args: Sequence[str], limit: int) -> bytes | None:
        """Run a ``-z`` listing; its stdout, or None as soon as it has named more than ``limit``
        paths (git is stopped then: a huge tree is not walked to its end to be refused)."""
        env, where, fds = self._git_context(None, None, False)
        with tempfile.TemporaryFile() as errors:  # a file: a pipe left unread could fill and block git
            try:
                process = subprocess.Popen(
                    ["git", *args], stdout=subprocess.PIPE, stderr=errors, env=env, cwd=where, pass_fds=fds
                )
            except OSError as error:
                raise StoreError(str(self.folder), f"cannot run git: {error.strerror or error}") from error
            assert process.stdout is not None
            chunks: list[bytes] = []
            count = 0
            with process:
                while chunk := process.stdout.read(1 << 16):
                    chunks.append(chunk)
                    count += chunk.count(b"\0")
                    if count > limit:
                        process.kill()
                        return None
            if process.returncode != 0:
                errors.seek(0)
                raise self._failed(args, errors.read(), process.returncode)
        return b"".join(chunks)

    def _git_context(
        self, work_tree: str | None, index: Path | None, creating: bool
    ) -> tuple[dict[str, str], str, tuple[int, ...]]:
        """The environment, folder and inherited descriptors a git command of this store runs with."""
        env = self.env(work_tree, index)
        if creating:
            for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
                env.pop(name)
        held = getattr(self._held, "fd", None)
        # git takes paths relative to where it runs: at the work tree's top, always (the store's
        # own folder may lie inside the workspace, when the agent dir does)
        where = work_tree or self.cwd
        if creating or not os.path.isdir(where):
            where = str(self.folder)
        return env, where, (held,) if held is not None else ()  # the lock outlives a killed server

    def _failed(self, args: Sequence[str], stderr: bytes, returncode: int) -> StoreError:
        message = stderr.decode("utf-8", "replace").strip().splitlines()
        command = next((arg for arg in args if not arg.startswith("-") and "=" not in arg), "")
        return StoreError(str(self.folder), f"git {command} failed: {message[-1] if message else returncode}")

    # ------------------------------------------------------------------ objects

    def write_blob(self, data: bytes) -> str:
        """Store ``data`` as a loose blob (written here: one temp file and a rename)."""
        oid = blob_id(data)
        path = self.git_dir / "objects" / oid[:2] / oid[2:]
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            replace_atomically(path, zlib.compress(b"blob %d\0" % len(data) + data, 1), mode=0o444)
        return oid

    def read_blobs(self, oids: Sequence[str]) -> dict[str, bytes]:
        """The contents of ``oids`` in one ``git cat-file --batch``."""
        wanted = sorted(set(oids))
        if not wanted:
            return {}
        out = self.git(["cat-file", "--batch"], stdin="".join(f"{oid}\n" for oid in wanted).encode())
        blobs: dict[str, bytes] = {}
        position = 0
        for oid in wanted:
            end = out.index(b"\n", position)
            header = out[position:end].split()
            if len(header) != 3:
                raise StoreError(str(self.folder), f"object {oid} is missing")
            size = int(header[2])
            blobs[oid] = out[end + 1 : end + 1 + size]
            position = end + 1 + size + 1
        return blobs

    def diff(self, old: str | None, new: str | None, paths: Sequence[str] = ()) -> list[Change]:
        """The paths that differ between two trees (None: the empty tree), in path order."""
        old, new = old or EMPTY_TREE, new or EMPTY_TREE
        if old == new:
            return []
        args = ["diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", old, new]
        if paths:
            args += ["--", *(f":(literal){path}" for path in paths)]
        out = self.git(args)
        changes: list[Change] = []
        fields = out.split(b"\0")
        for number in range(0, len(fields) - 1, 2):
            meta = fields[number].decode().lstrip(":").split()
            path = os.fsdecode(fields[number + 1])
            old_mode, new_mode, old_id, new_id = meta[0], meta[1], meta[2], meta[3]
            before = None if old_mode == "000000" else (old_mode, old_id)
            after = None if new_mode == "000000" else (new_mode, new_id)
            changes.append(Change(path, before, after))
        return changes

    def exists(self, oid: str) -> bool:
        try:
            self.git(["cat-file", "-e", oid])
        except StoreError:
            return False
        return True

    # ------------------------------------------------------------------ small records of ours

    def read_json(self, name: str) -> Any:
        try:
            return json.loads((self.folder / name).read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            raise StoreError(str(self.folder / name), str(error)) from error

    def write_json(self, name: str, value: Any) -> None:
        path = self.folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(path, json.dumps(value).encode(), mode=0o600)
        except OSError as error:
            raise StoreError(str(path), error.strerror or str(error)) from error
