"""A session file changed by another program between our appends: every acknowledged entry is one
pi can load (checked with pi itself), or the append was refused (FileProblem) and the file left as
the other program made it. The session's id never changes under the caller.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_lsp.fileerrors import REPLACED, FileProblem
from pi_lsp.session import SessionManager
from tests.oracle import PiOracle

OTHER_HEADER = {
    "type": "session",
    "version": 3,
    "id": "someone-else",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/elsewhere",
}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def _assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "m",
        "stopReason": "stop",
        "timestamp": 2,
        "usage": {
            "input": 1,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 2,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
    }


def _flushed(folder: Path) -> SessionManager:
    manager = SessionManager.create("/proj", folder)
    manager.append_message(_user("hello"))
    manager.append_message(_assistant("hi"))
    return manager


def _pi_ids(oracle: PiOracle, path: Path) -> tuple[str, list[str]]:
    loaded = oracle.result("load", path=str(path), treeFormat="none")
    return loaded["sessionId"], [entry["id"] for entry in loaded["entries"]]


# ---------------------------------------------------------------------- damage between appends


def _delete(path: Path, _: int) -> None:
    path.unlink()


def _empty(path: Path, _: int) -> None:
    path.write_bytes(b"")


def _cut(path: Path, where: int) -> None:
    data = path.read_bytes()
    with path.open("r+b") as handle:
        handle.truncate(where % (len(data) + 1))


def _replace_with_other(path: Path, _: int) -> None:
    other = path.with_name("other.tmp")
    other.write_bytes(orjson.dumps(OTHER_HEADER) + b"\n")
    os.replace(other, path)


def _header_in_place(path: Path, _: int) -> None:
    """Overwrite the first bytes in place (same inode): the header is no longer ours."""
    with path.open("r+b") as handle:
        handle.write(b'{"type":"session","id":"x"}\n' + b" " * 8)


def _garbage_over(path: Path, _: int) -> None:
    other = path.with_name("garbage.tmp")
    other.write_bytes(b"not a session\n")
    os.replace(other, path)


def _move_away(path: Path, _: int) -> None:
    """Renamed elsewhere: the file still exists (one link), only the path no longer names it."""
    os.replace(path, path.with_name("moved-away.jsonl"))


def _copy_over(path: Path, _: int) -> None:
    """Replaced by an identical copy (a new inode), as an editor's atomic save does."""
    other = path.with_name("copy.tmp")
    other.write_bytes(path.read_bytes())
    os.replace(other, path)


DAMAGE = {
    "delete": _delete,
    "move": _move_away,
    "copy": _copy_over,
    "empty": _empty,
    "cut": _cut,
    "replace": _replace_with_other,
    "header": _header_in_place,
    "garbage": _garbage_over,
}

STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.booleans()),
        st.tuples(st.sampled_from(sorted(DAMAGE)), st.integers(min_value=0, max_value=4000)),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(STEPS)
def test_every_acknowledged_entry_is_loadable_by_pi_or_refused(
    tmp_path_factory: pytest.TempPathFactory, pi_oracle: PiOracle, steps: list[tuple[str, Any]]
) -> None:
    folder = tmp_path_factory.mktemp("underneath")
    manager = _flushed(folder)
    session_id = manager.session_id
    path = Path(manager.session_file or "")
    for number, (action, argument) in enumerate(steps):
        if action != "append":
            if path.exists() or action == "replace" or action == "garbage":
                DAMAGE[action](path, argument)
            continue
        before = path.read_bytes() if path.exists() else None
        message = _assistant(f"reply {number}") if argument else _user(f"question {number}")
        try:
            entry_id = manager.append_message(message)
        except FileProblem as error:
            assert error.reason == REPLACED
            assert (path.read_bytes() if path.exists() else None) == before  # left as it was
            continue
        assert manager.session_id == session_id
        pi_session, pi_ids = _pi_ids(pi_oracle, path)
        assert pi_session == session_id
        assert entry_id in pi_ids
        assert pi_ids[-1] == entry_id


def test_a_header_overwritten_in_place_to_the_same_length_is_noticed(tmp_path: Path) -> None:
    """The file has exactly the length our last append left, yet its header is not ours any more:
    the next append is refused (the size alone would say the file is as we left it)."""
    manager = _flushed(tmp_path)
    manager.append_message(_user("through the held descriptor"))
    path = Path(manager.session_file or "")
    size = path.stat().st_size
    _header_in_place(path, 0)
    assert path.stat().st_size == size
    theirs = path.read_bytes()
    with pytest.raises(FileProblem) as info:
        manager.append_message(_user("mine"))
    assert info.value.reason == REPLACED
    assert path.read_bytes() == theirs


def test_deleted_file_is_written_again_with_every_entry(tmp_path: Path, pi_oracle: PiOracle) -> None:
    manager = _flushed(tmp_path)
    path = Path(manager.session_file or "")
    held = [record.id for record in manager.index.records]
    path.unlink()
    new_id = manager.append_message(_user("after the delete"))
    assert _pi_ids(pi_oracle, path) == (manager.session_id, [*held, new_id])
    assert manager.take_file_event() == "rewritten" and manager.take_file_event() is None
    assert any("deleted" in d["message"] for d in manager.diagnostics)


def test_appends_follow_the_path_not_a_file_moved_away(tmp_path: Path, pi_oracle: PiOracle) -> None:
    """Appends keep a descriptor open; a file renamed away must not receive the next entry."""
    manager = _flushed(tmp_path)
    path = Path(manager.session_file or "")
    manager.append_message(_user("through the open descriptor"))
    held = [record.id for record in manager.index.records]
    _move_away(path, 0)
    moved = path.with_name("moved-away.jsonl").read_bytes()
    new_id = manager.append_message(_user("after the move"))
    assert path.with_name("moved-away.jsonl").read_bytes() == moved
    assert _pi_ids(pi_oracle, path) == (manager.session_id, [*held, new_id])
    assert manager.take_file_event() == "rewritten"


def test_appends_go_to_a_copy_renamed_over_the_file(tmp_path: Path, pi_oracle: PiOracle) -> None:
    manager = _flushed(tmp_path)
    path = Path(manager.session_file or "")
    manager.append_message(_user("through the open descriptor"))
    old_inode = path.stat().st_ino
    keep = path.with_name("old-link.jsonl")
    os.link(path, keep)  # the old inode stays reachable, so a write to it would be visible
    before = keep.read_bytes()
    _copy_over(path, 0)
    new_id = manager.append_message(_user("after the copy"))
    assert path.stat().st_ino != old_inode and keep.read_bytes() == before
    assert _pi_ids(pi_oracle, path)[1][-1] == new_id


def test_replaced_by_another_session_is_left_alone_for_good(tmp_path: Path) -> None:
    manager = _flushed(tmp_path)
    path = Path(manager.session_file or "")
    _replace_with_other(path, 0)
    theirs = path.read_bytes()
    for _ in range(2):
        with pytest.raises(FileProblem) as info:
            manager.append_message(_user("mine"))
        assert info.value.reason == REPLACED and "another session" in str(info.value)
    assert path.read_bytes() == theirs
    assert manager.session_id != OTHER_HEADER["id"]
    assert manager.refresh() == []  # the watcher does not adopt it either


def test_refresh_of_an_emptied_file_keeps_the_id(tmp_path: Path) -> None:
    manager = _flushed(tmp_path)
    session_id = manager.session_id
    path = Path(manager.session_file or "")
    _empty(path, 0)
    assert manager.refresh() == []
    assert manager.session_id == session_id and manager.entry_count == 2
    manager.append_message(_user("next"))
    assert orjson.loads(path.read_bytes().splitlines()[0])["id"] == session_id


def test_migration_through_a_symlink_writes_to_the_target(tmp_path: Path, pi_oracle: PiOracle) -> None:
    real = tmp_path / "real" / "v1.jsonl"
    real.parent.mkdir()
    v1 = [  # pi's first format: no version, entries without id/parentId
        {"type": "session", "id": "v1-session", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/proj"},
        {"type": "message", "timestamp": "2026-01-01T00:00:01.000Z", "message": _user("old question")},
        {"type": "message", "timestamp": "2026-01-01T00:00:02.000Z", "message": _assistant("old answer")},
    ]
    real.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in v1))
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    manager = SessionManager.open(link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert orjson.loads(real.read_bytes().splitlines()[0])["version"] == 3
    assert not list(tmp_path.glob(".link.jsonl.*")) and not list(real.parent.glob(".v1.jsonl.*"))
    new_id = manager.append_message(_user("through the link"))
    assert real.read_bytes().rstrip().endswith(orjson.dumps(manager.get_entry(new_id)))
    assert _pi_ids(pi_oracle, real)[1][-1] == new_id


def test_a_fifo_in_place_of_the_leaf_side_file_does_not_hang_the_open(tmp_path: Path) -> None:
    """The side file is read like every other file: only when regular, never blocking."""
    import threading

    from pi_lsp.session.leaf_state import LeafStore

    store = LeafStore(tmp_path / "leaves")
    manager = SessionManager.create("/proj", tmp_path / "sessions", leaf_store=store)
    manager.append_message(_user("q"))
    manager.append_message(_assistant("a"))
    (tmp_path / "leaves").mkdir()
    os.mkfifo(store._path(manager.session_id))
    opened: list[SessionManager] = []
    worker = threading.Thread(
        target=lambda: opened.append(SessionManager.open(manager.session_file or "", leaf_store=store)),
        daemon=True,
    )
    worker.start()
    worker.join(20)
    assert opened, "opening the session blocked on the FIFO"
    assert opened[0].leaf_id == manager.leaf_id
