"""``SessionManager``: pi's session manager over a JSONL file, crash-safe and multi-writer aware.

Behaviour follows pi 0.73.1 (see ``docs/session-store.md`` for where we deliberately differ: no
duplicate headers, no truncation of invalid files, migrated forks, cycle-safe walks, atomic
migration, torn-line isolation, external appends picked up incrementally, persisted leaf).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pi_lsp.fileerrors import NOT_JSONL, REPLACED, FileProblem
from pi_lsp.jscompat import UNSET, Unset
from pi_lsp.regular_files import open_regular
from pi_lsp.session import validate
from pi_lsp.session.appends import AppendMethods
from pi_lsp.session.context import SessionContext
from pi_lsp.session.errors import (
    EntryNotFoundError,
    InvalidSessionFileError,
    SessionFileConflictError,
)
from pi_lsp.session.ids import iso_now, new_entry_id, new_session_id
from pi_lsp.session.index import SessionIndex, TreeNode
from pi_lsp.session.jsonl import check_line_size, dumps_compact, dumps_kept
from pi_lsp.session.leaf_state import LeafStore
from pi_lsp.session.loader import ReadResult, diagnostic, read_lines
from pi_lsp.session.migrations import CURRENT_SESSION_VERSION, header_version, migrate_entries
from pi_lsp.session.paths import SESSION_SUFFIX, default_session_dir, session_file_name
from pi_lsp.session.records import EntryRecord
from pi_lsp.session.session_file import FileReplacedError, OnDisk, SessionFile
from pi_lsp.session.view import EMPTY_VIEW, ContextView, build_view, extend_view_many
from pi_lsp.session.writer import FileChangedError, atomic_replace, write_new_file

Entry = dict[str, Any]


class SessionManager(AppendMethods):
    """One session: header, entries (as records), leaf and context view; its file is ``self.file``."""

    header: Entry
    leaf_id: str | None
    diagnostics: list[dict[str, Any]]
    _view: ContextView
    _view_appends: list[EntryRecord]

    def __init__(
        self,
        cwd: str,
        session_dir: Path | None,
        *,
        persist: bool = True,
        leaf_store: LeafStore | None = None,
        fsync: bool = False,
    ) -> None:
        self.cwd = cwd
        self.session_dir: str = str(session_dir) if session_dir is not None else ""
        self.persist = persist
        self.leaf_store = leaf_store if leaf_store is not None else (LeafStore() if persist else None)
        if persist and session_dir is not None:
            session_dir.mkdir(parents=True, exist_ok=True)
        self.file = SessionFile(fsync=fsync)
        self._reset({})

    @property
    def session_file(self) -> str | None:
        """The session's file path; None for a session that is never written."""
        return self.file.path

    @session_file.setter
    def session_file(self, path: str | None) -> None:
        self.file.path = path

    # ------------------------------------------------------------------ factories

    @classmethod
    def create(cls, cwd: str, session_dir: Path | str | None = None, **options: Any) -> SessionManager:
        """A brand-new session for ``cwd``; nothing is written until the first assistant message."""
        directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
        manager = cls(cwd, directory, **options)
        manager.new_session()
        return manager

    @classmethod
    def open(
        cls,
        path: Path | str,
        session_dir: Path | str | None = None,
        cwd_override: str | None = None,
        **options: Any,
    ) -> SessionManager:
        """Open (or, for a missing/empty file, start) the session stored at ``path``."""
        resolved = Path(os.path.abspath(path))
        if not resolved.exists():  # also a dangling symlink: judged by where it points
            _check_new_session_path(resolved)
        directory = Path(session_dir) if session_dir is not None else resolved.parent
        manager = cls(cwd_override or os.getcwd(), directory, **options)
        manager._set_session_file(resolved, cwd_override)
        return manager

    @classmethod
    def continue_recent(
        cls, cwd: str, session_dir: Path | str | None = None, **options: Any
    ) -> SessionManager:
        """The most recently modified session of ``cwd`` (by file mtime, as pi), else a new one."""
        from pi_lsp.session.listing import find_most_recent_session

        directory = Path(session_dir) if session_dir is not None else default_session_dir(cwd)
        recent = find_most_recent_session(directory)
        if recent is not None:
            return cls.open(recent, directory, cwd_override=cwd, **options)
        return cls.create(cwd, directory, **options)

    @classmethod
    def in_memory(cls, cwd: str | None = None) -> SessionManager:
        """A session that is never written anywhere."""
        manager = cls(cwd if cwd is not None else os.getcwd(), None, persist=False)
        manager.new_session()
        return manager

    @classmethod
    def fork_from(
        cls, source_path: Path | str, target_cwd: str, session_dir: Path | str | None = None, **options: Any
    ) -> SessionManager:
        """Copy another session (all branches) into a new file for ``target_cwd``.

        Unlike pi, the copied entries are migrated first, so forking a v1/v2 file gives a valid tree.
        """
        source = Path(source_path)
        read = read_lines(source, keep_objects=True) if source.exists() else ReadResult(any_parsed=False)
        if read.header is None or not read.first_object_is_header:
            raise InvalidSessionFileError(str(source), "cannot fork: source session file is empty or invalid")
        objects = [obj for obj in read.objects or [] if isinstance(obj, dict)]
        migrate_entries(objects)
        directory = Path(session_dir) if session_dir is not None else default_session_dir(target_cwd)
        header: Entry = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": new_session_id(),
            "timestamp": iso_now(),
            "cwd": target_cwd,
            "parentSession": str(source_path),
        }
        lines = [dumps_compact(header)]
        lines.extend(dumps_compact(obj) for obj in objects if obj.get("type") != "session")
        target = directory / session_file_name(header["timestamp"], header["id"])
        write_new_file(target, b"\n".join(lines) + b"\n")
        return cls.open(target, directory, cwd_override=target_cwd, **options)

    # ------------------------------------------------------------------ identity

    @property
    def session_id(self) -> str:
        value = self.header.get("id")
        return value if isinstance(value, str) else ""

    @property
    def entry_count(self) -> int:
        return self.index.count

    @property
    def parent_session(self) -> str | None:
        value = self.header.get("parentSession")
        return value if isinstance(value, str) else None

    def get_header(self) -> Entry:
        return dict(self.header)

    def get_session_name(self) -> str | None:
        return self.index.session_name

    # ------------------------------------------------------------------ session lifecycle

    def new_session(self, id: str | None = None, parent_session: str | None = None) -> str | None:
        """Start a fresh session in this manager (pi's ``newSession``); returns its future path."""
        header: Entry = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": id if id is not None else new_session_id(),
            "timestamp": iso_now(),
            "cwd": self.cwd,
        }
        if parent_session is not None:
            header["parentSession"] = parent_session
        self._reset(header)
        if self.persist and self.session_dir:
            name = session_file_name(header["timestamp"], header["id"])
            self.session_file = str(Path(self.session_dir) / name)
            return self.session_file
        self.session_file = None
        return None

    def _reset(self, header: Entry) -> None:
        """Start over with ``header``: no entries, no leaf, the file not written (its path stays)."""
        self.header = header
        self.index = SessionIndex()
        self.leaf_id = None
        self.diagnostics = []
        self.version = CURRENT_SESSION_VERSION
        self.file.reset(self.file.path)
        self._view = EMPTY_VIEW
        self._view_appends = []  # appended under _view's leaf, not yet in it
        self._leaf_saved = False
        self._file_event: str | None = None

    def _set_session_file(self, path: Path, cwd_override: str | None) -> None:
        self.session_file = str(path)
        if not path.exists():
            self.new_session()
            self.session_file = str(path)
            return
        read = read_lines(path, lazy=True)
        if read.header is None or not read.first_object_is_header:
            if not read.any_parsed and path.stat().st_size == read.end_offset and not _has_content(path):
                # Empty (or blank) file: a new session bound to it, as in pi, written on first flush.
                _check_new_session_path(path)
                self.new_session()
                self.session_file = str(path)
                return
            reason = "no session header" if read.header is None else "the first JSON line is not a header"
            raise InvalidSessionFileError(str(path), reason)
        if header_version(read.header) < CURRENT_SESSION_VERSION:
            read = self._migrate_file(path)
        self._adopt(read, path)
        if cwd_override is None and isinstance(read.header, dict) and isinstance(read.header.get("cwd"), str):
            self.cwd = read.header["cwd"]
        self._restore_leaf()

    def _migrate_file(self, path: Path) -> ReadResult:
        """Migrate a v1/v2 file and replace it atomically; malformed lines are kept verbatim."""
        size = path.stat().st_size
        read = read_lines(path, keep_objects=True)
        objects = read.objects or []
        parsed = [obj for obj in objects if isinstance(obj, dict)]
        from_version = migrate_entries(parsed)
        data = b"".join((dumps_compact(obj) if isinstance(obj, dict) else obj) + b"\n" for obj in objects)
        atomic_replace(path, data, expect_size=size)
        migrated = read_lines(path)
        migrated.diagnostics.insert(
            0, diagnostic("info", f"migrated from version {from_version} to {CURRENT_SESSION_VERSION}")
        )
        migrated.diagnostics.extend(d for d in read.diagnostics if d not in migrated.diagnostics)
        self.version = CURRENT_SESSION_VERSION
        return migrated

    def _adopt(self, read: ReadResult, path: Path) -> None:
        assert read.header is not None
        self._reset(read.header)
        self.session_file = str(path)
        if read.rows is not None:
            self.index.take_rows(read.rows)
        else:
            self.index.extend(read.records)
        self.diagnostics = read.diagnostics
        self.file.adopt(read)
        last = self.index.last()
        self.leaf_id = last.id if last is not None else None

    def _restore_leaf(self) -> None:
        if self.leaf_store is None or self.session_file is None:
            return
        last_record = self.index.last()
        last = last_record.id if last_record is not None else None
        found, leaf = self.leaf_store.restore(self.session_id, self.session_file, last)
        if found and (leaf is None or self.index.has(leaf)):
            self.leaf_id = leaf
            self._leaf_saved = True

    # ------------------------------------------------------------------ reading

    def get_entry(self, entry_id: str) -> Entry | None:
        record = self.index.get(entry_id)
        return record.entry() if record is not None else None

    def get_record(self, entry_id: str) -> EntryRecord | None:
        return self.index.get(entry_id)

    def get_entries(self) -> list[Entry]:
        """Every entry in file order (all branches), as fresh dicts."""
        return [record.entry() for record in self.index.records]

    def get_leaf_entry(self) -> Entry | None:
        return self.get_entry(self.leaf_id) if self.leaf_id is not None else None

    def get_children(self, parent_id: str | None) -> list[Entry]:
        return [record.entry() for record in self.index.children_of(parent_id)]

    def get_label(self, entry_id: str) -> str | None:
        label = self.index.labels.get(entry_id)
        return label[0] if label is not None else None

    def get_branch(self, from_id: str | Unset | None = UNSET) -> list[Entry]:
        """Entries root→``from_id`` (default: the leaf), every type included."""
        start = self.leaf_id if isinstance(from_id, Unset) else from_id
        return [record.entry() for record in self.index.path_to(start)]

    def branch_records(self, from_id: str | Unset | None = UNSET) -> list[EntryRecord]:
        start = self.leaf_id if isinstance(from_id, Unset) else from_id
        return self.index.path_to(start)

    def get_tree(self) -> list[TreeNode]:
        return self.index.tree()

    def context_view(self, leaf_id: str | Unset | None = UNSET) -> ContextView:
        """The context of ``leaf_id`` (default: the current leaf) as a lazy view.

        As in pi's method form: the current leaf ``None`` gives an empty context; an explicit id
        that is not found falls back to the last entry in file order.
        """
        if isinstance(leaf_id, Unset):
            target = self.leaf_id
        elif leaf_id is None:
            return EMPTY_VIEW
        elif self.index.has(leaf_id):
            target = leaf_id
        else:
            last = self.index.last()
            target = last.id if last is not None else None
        if target is None:
            return EMPTY_VIEW
        if self._view_appends:
            # Appends extend the leaf's view lazily: one tuple copy per read, not per append.
            self._view = extend_view_many(self._view, self._view_appends)
            self._view_appends = []
        if self._view.leaf_id == target and self._view.path:
            return self._view
        view = build_view(self.index.path_to(target))
        if target == self.leaf_id:
            self._view = view
        return view

    def build_session_context(self, leaf_id: str | Unset | None = UNSET) -> SessionContext:
        """pi's ``buildSessionContext()`` method form, materialised as plain dicts."""
        return self.context_view(leaf_id).to_context()

    # ------------------------------------------------------------------ leaf movement

    def branch(self, entry_id: str) -> None:
        """Move the leaf to an existing entry; the next append becomes its child."""
        if not self.index.has(entry_id):
            raise EntryNotFoundError(entry_id)
        self._move_leaf(entry_id)

    def reset_leaf(self) -> None:
        """Leaf before the first entry: the next append starts a new root."""
        self._move_leaf(None)

    def set_leaf(self, entry_id: str | None) -> None:
        if entry_id is None:
            self.reset_leaf()
        else:
            self.branch(entry_id)

    def _move_leaf(self, leaf: str | None) -> None:
        self.leaf_id = leaf
        if self.leaf_store is not None and self.session_file is not None and self.file.flushed:
            last_record = self.index.last()
            last = last_record.id if last_record is not None else None
            if leaf == last:
                if self._leaf_saved:
                    self.leaf_store.clear(self.session_id)
                    self._leaf_saved = False
            else:
                self.leaf_store.save(self.session_id, self.session_file, leaf, last)
                self._leaf_saved = True

    # ------------------------------------------------------------------ appends

    def append_entry(self, entry: Entry) -> str:
        """Append a client-built entry (``type`` + fields); id, parentId and timestamp are ours."""
        fields = validate.entry_fields(entry)
        if fields["type"] == "label" and fields.get("targetId") not in self.index.by_id:
            raise EntryNotFoundError(fields.get("targetId"))
        if fields["type"] == "branch_summary" and "fromId" not in fields:
            fields = {"type": "branch_summary", "fromId": self.leaf_id or "root", **fields}
        return self._append(fields)

    def _append(self, fields: Entry) -> str:
        entry_id = new_entry_id(self.index.by_id)
        entry = _in_pi_order(fields, entry_id, self.leaf_id, iso_now())
        return self._add_new(EntryRecord(entry, dumps_kept(entry), 0))

    def _append_message(self, message: Entry) -> str:
        """:meth:`_append` of a message (the most frequent append), without a search of its line."""
        entry_id = new_entry_id(self.index.by_id)
        return self._add_new(EntryRecord.new_message(entry_id, self.leaf_id, iso_now(), message))

    def _add_new(self, record: EntryRecord) -> str:
        """Write a record of ours (a new child of the leaf) and make it the leaf."""
        entry_id = record.id
        assert entry_id is not None
        check_line_size(len(record.raw))  # a line the reader would skip is not written
        self._persist(record)  # may reload a file another program rewrote: the view is read after
        view_leaf = self._view_appends[-1].id if self._view_appends else self._view.leaf_id
        extends_view = view_leaf == record.parent_id and record.parent_id is not None
        self.index.add(record)
        self.leaf_id = entry_id
        if self._leaf_saved and self.leaf_store is not None:
            self.leaf_store.clear(self.session_id)
            self._leaf_saved = False
        if extends_view:
            self._view_appends.append(record)
        else:
            self._view_appends = []
            if record.parent_id is None:
                self._view = build_view([record])
        return entry_id

    def _persist(self, record: EntryRecord) -> None:
        if not self.persist or self.session_file is None:
            return
        if self.file.flushed:
            try:
                record.line = self.file.append_line(record.raw_line())
            except FileChangedError:
                record.line = self._recover_file(record)
            return
        if self.index.assistant_count == 0 and record.role != "assistant":
            return  # like pi: a session file appears with its first assistant message
        pending = [dumps_compact(self.header), *(r.raw for r in self.index.records), record.raw]
        self.file.write_first(pending)
        for number, buffered in enumerate(self.index.records, start=2):
            buffered.line = number
        record.line = len(pending)

    def _recover_file(self, record: EntryRecord) -> int:
        """Our file changed underneath before ``record`` could be appended; returns its line.

        Deleted or emptied: the whole session (header, every entry held, ``record``) is written
        again atomically, with a diagnostic and :meth:`take_file_event` saying so. Rewritten by
        another program but still this session: read again, then ``record`` is appended after it.
        Taken over by another session or by something that is not a session: left alone, and this
        write and every later one are refused (FileProblem, reason ``replaced``).
        """
        path = str(self.file.path)
        state, _inode = self.file.inspect(self.session_id)
        if state in (OnDisk.MISSING, OnDisk.BLANK):
            lines = [self.file.header_raw or dumps_compact(self.header), *(r.raw for r in self.index.records)]
            self.file.rewrite([*lines, record.raw], state)
            for number, held in enumerate(self.index.records, start=2):
                held.line = number
            what = "deleted" if state is OnDisk.MISSING else "emptied"
            self.diagnostics.append(
                diagnostic(
                    "warning",
                    f"the session file was {what} by another program; it was written again with the header"
                    f" and all {len(self.index.records)} entries this session holds",
                )
            )
            self._file_event = "rewritten"
            return len(lines) + 1
        if state is OnDisk.SAME_SESSION:
            self._reload(Path(path))
            if record.parent_id is None or record.parent_id in self.index.by_id:
                return self.file.append_line(record.raw_line())
            raise self.file.detach(
                REPLACED,
                f"{path} was rewritten by another program without the entry"
                f" {record.parent_id} this one continues; nothing was written",
            )
        raise self.file.detach(
            REPLACED,
            f"{path} now holds another session (or something that is not this session); it is left"
            " alone and nothing more is written through this session (pi/branchToNewSession continues"
            " it in a new file)",
        )

    def take_file_event(self) -> str | None:
        """``"rewritten"`` once after the file was written again whole (see :meth:`_recover_file`)."""
        event, self._file_event = self._file_event, None
        return event

    # ------------------------------------------------------------------ other writers

    def refresh(self) -> list[str]:
        """Load lines other processes appended since we last read; returns the new entry ids.

        The leaf follows the new entries only when they continue from the current leaf. If the
        file was replaced or shrank (e.g. rewritten by another tool) it is reloaded whole.
        """
        try:
            read = self.file.read_appended()
        except FileReplacedError as replaced:
            state, _inode = self.file.inspect(self.session_id)
            if state is OnDisk.SAME_SESSION:
                return self._reload(Path(str(replaced)))
            if state is OnDisk.OTHER:
                self.file.detach(
                    REPLACED,
                    f"{replaced} now holds another session (or something that is"
                    " not this session); nothing more is written through this session",
                )
                self.diagnostics.append(diagnostic("warning", str(self.file.detached)))
            return []  # deleted or emptied: the next write puts the whole session back
        if read is None:
            return []
        self.diagnostics.extend(read.diagnostics)
        new_ids: list[str] = []
        for record in read.records:
            if record.raw and self._is_own(record):
                continue
            self.index.add(record)
            if record.id is not None:
                new_ids.append(record.id)
                if record.parent_id == self.leaf_id and self.leaf_id is not None:
                    self.leaf_id = record.id
        return new_ids

    def _is_own(self, record: EntryRecord) -> bool:
        existing = self.index.by_id.get(record.id) if record.id is not None else None
        return existing is not None and existing.raw == record.raw

    def _reload(self, path: Path) -> list[str]:
        known = set(self.index.by_id)
        leaf = self.leaf_id
        self._set_session_file(path, self.cwd)
        self.diagnostics.append(diagnostic("info", "the session file was replaced on disk and reloaded"))
        if leaf is not None and leaf in self.index.by_id:
            self.leaf_id = leaf
        return [entry_id for entry_id in self.index.by_id if entry_id not in known]

    # ------------------------------------------------------------------ branching into files

    def create_branched_session(self, leaf_id: str) -> str | None:
        """Replace this manager's session by a new one holding only the path to ``leaf_id``."""
        path = self.index.path_to(leaf_id)
        if not path:
            raise EntryNotFoundError(leaf_id)
        kept = [record for record in path if record.type != "label"]
        on_path = {record.id for record in kept}
        used = set(self.index.by_id)
        labels: list[EntryRecord] = []
        parent = kept[-1].id if kept else None
        for target, (label, timestamp) in self.index.labels.items():
            if target not in on_path:
                continue
            label_id = new_entry_id(used)
            used.add(label_id)
            entry = {
                "type": "label",
                "id": label_id,
                "parentId": parent,
                "timestamp": timestamp,
                "targetId": target,
                "label": label,
            }
            labels.append(EntryRecord(entry, dumps_compact(entry), 0))
            parent = label_id
        previous_file = self.session_file
        header: Entry = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": new_session_id(),
            "timestamp": iso_now(),
            "cwd": self.cwd,
        }
        if self.persist and previous_file is not None:
            header["parentSession"] = previous_file
        self._reset(header)
        self.index.extend([*kept, *labels])
        for record in self.index.records:
            record.line = 0
            record.raw = record.raw.rstrip()  # copied lines are written LF-only, like pi's rewrite
        last = self.index.records[-1]
        self.leaf_id = last.id
        if not self.persist or not self.session_dir:
            self.session_file = None
            return None
        new_path = str(Path(self.session_dir) / session_file_name(header["timestamp"], header["id"]))
        self.session_file = new_path
        if self.index.assistant_count > 0:
            lines = [dumps_compact(header), *(record.raw for record in self.index.records)]
            self.file.write_new(new_path, lines)
        return self.session_file


def _check_new_session_path(path: Path) -> None:
    """Only ``.jsonl`` files become new sessions (pi would turn any path into one).

    Otherwise a client could make the server write session lines into ``~/.bash_profile`` or any
    other file a program executes or trusts; a symlink is judged by the file it points to.
    """
    target = os.path.realpath(path)
    if not path.name.endswith(SESSION_SUFFIX) or not target.endswith(SESSION_SUFFIX):
        raise FileProblem(
            str(path),
            NOT_JSONL,
            f"{path}: a new session file must end in {SESSION_SUFFIX}; nothing was created",
        )


def _has_content(path: Path) -> bool:
    with open_regular(path) as handle:
        while chunk := handle.read(1 << 20):
            if chunk.strip():
                return True
    return False


_FIELDS_FIRST = {"custom", "custom_message"}


def _in_pi_order(fields: Entry, entry_id: str, parent_id: str | None, timestamp: str) -> Entry:
    """Key order as pi writes: ``type, id, parentId, timestamp, …`` (custom types: fields first)."""
    kind = fields["type"]
    rest = {key: value for key, value in fields.items() if key not in ("type", "id", "parentId", "timestamp")}
    if kind in _FIELDS_FIRST:
        return {"type": kind, **rest, "id": entry_id, "parentId": parent_id, "timestamp": timestamp}
    return {"type": kind, "id": entry_id, "parentId": parent_id, "timestamp": timestamp, **rest}


__all__ = ["SessionFileConflictError", "SessionManager"]
