"""The session-list cache lists exactly what a full read lists, however the files change between
listings, with or without its file on disk (and with that file corrupt or shared)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest

from pi_lsp.session import list_cache
from pi_lsp.session.list_cache import SessionListCache
from pi_lsp.session.list_cache_disk import FORMAT, VERSION, DiskStore, cache_file
from pi_lsp.session.listing import SessionInfo, list_sessions
from tests.oracle import FIXTURES, PI_FIXTURES, PiOracle
from tests.session.helpers import header, msg_entry, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def _line(obj: dict[str, object]) -> bytes:
    return orjson.dumps(obj) + b"\n"


def _message(index: int, text: str, role: str = "user") -> bytes:
    stamp = f"2025-02-01T00:00:{index % 60:02d}.{index:03d}Z"
    return _line(msg_entry(f"m{index}", f"m{index - 1}" if index else None, role, text, timestamp=stamp))


def _session(path: Path, session_id: str, texts: list[str]) -> Path:
    data = _line(header(session_id, cwd="/proj")) + b"".join(_message(i, t) for i, t in enumerate(texts))
    path.write_bytes(data)
    return path


@pytest.fixture
def folder(session_dir: Path) -> Path:
    """Sessions of several shapes: pi's fixtures (v1 included), a named one, a non-session file."""
    for source in (PI_FIXTURES / "large-session.jsonl", PI_FIXTURES / "before-compaction.jsonl"):
        shutil.copyfile(source, session_dir / source.name)
    shutil.copyfile(FIXTURES / "branched-v3.jsonl", session_dir / "branched.jsonl")
    _session(session_dir / "a.jsonl", "sess-a", ["alpha question", "  spaced\n\tout  text "])
    write_jsonl(session_dir / "named.jsonl", [header("sess-n"), {"type": "session_info", "name": " Named "}])
    (session_dir / "notes.jsonl").write_bytes(b'{"type":"message"}\n')
    (session_dir / "empty.jsonl").write_bytes(b"")
    return session_dir


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    return tmp_path / "list-cache"


def _cache(store_dir: Path) -> SessionListCache:
    return SessionListCache(DiskStore(store_dir, save_interval=0.0))


def _same(cache: SessionListCache, folder: Path) -> list[SessionInfo]:
    """The cache's listing, checked against a full read of every file."""
    listed = cache.list_folder(folder)
    assert listed == list_sessions("/unused", folder)
    return listed


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """Every byte range the cache reads from a session file, as (file name, start, end)."""
    ranges: list[tuple[str, int, int]] = []
    real = list_cache._read_range

    def spy(fd: int, start: int, end: int) -> bytes:
        ranges.append((os.path.basename(os.readlink(f"/proc/self/fd/{fd}")), start, end))
        return real(fd, start, end)

    class SpyHandle:
        """The file's handle, recording what its reads return (the lines, read a chunk at a time)."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def read(self, size: int = -1) -> bytes:
            start = self.inner.tell()
            data: bytes = self.inner.read(size)
            if data:
                ranges.append(
                    (
                        os.path.basename(os.readlink(f"/proc/self/fd/{self.inner.fileno()}")),
                        start,
                        start + len(data),
                    )
                )
            return data

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def __enter__(self) -> SpyHandle:
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

    real_open = list_cache.open_regular
    monkeypatch.setattr(list_cache, "_read_range", spy)
    monkeypatch.setattr(list_cache, "open_regular", lambda path: SpyHandle(real_open(path)))
    return ranges


def test_listing_twice_reads_nothing_again(
    folder: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache(store_dir)
    first = _same(cache, folder)
    reads = _reads(monkeypatch)
    assert _same(cache, folder) == first
    assert reads == []
    sessions = ["large-session.jsonl", "before-compaction.jsonl", "branched.jsonl", "a.jsonl", "named.jsonl"]
    assert {info.path for info in first} == {str(folder / name) for name in sessions}


def test_append_reads_only_the_new_bytes(
    folder: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache(store_dir)
    _same(cache, folder)
    file = folder / "large-session.jsonl"
    size = file.stat().st_size
    with file.open("ab") as out:
        out.write(_message(2, "a later question"))
        out.write(_line({"type": "session_info", "name": "renamed"}))
    grown = file.stat().st_size
    reads = _reads(monkeypatch)
    [info] = [i for i in _same(cache, folder) if i.path == str(file)]
    assert info.name == "renamed" and info.all_messages_text.endswith(" a later question")
    assert {name for name, _, _ in reads} == {"large-session.jsonl"}
    assert ("large-session.jsonl", size, grown) in reads
    # besides the appended bytes, only the fingerprints (a few KB at the start and before the end)
    assert sum(end - start for _, start, end in reads) <= grown - size + 4 * list_cache.FINGERPRINT_BYTES
    assert size > 4 * list_cache.FINGERPRINT_BYTES


def test_a_line_being_written_counts_and_is_read_again_when_complete(folder: Path, store_dir: Path) -> None:
    cache = _cache(store_dir)
    file = folder / "a.jsonl"
    whole = _message(2, "written in two parts")
    with file.open("ab") as out:
        out.write(whole[:-1])  # complete JSON, no line feed yet
    assert [i.message_count for i in _same(cache, folder) if i.path == str(file)] == [3]
    with file.open("ab") as out:
        out.write(b"\n" + _message(3, "after")[:20])  # and a torn start of the next line
    assert [i.message_count for i in _same(cache, folder) if i.path == str(file)] == [3]
    with file.open("ab") as out:
        out.write(_message(3, "after")[20:])
    assert [i.message_count for i in _same(cache, folder) if i.path == str(file)] == [4]
    # a fresh process, from the disk cache saved while the last line was still incomplete
    cache.close()
    with file.open("ab") as out:
        out.write(_message(4, "tail")[:-1])
    assert [i.message_count for i in _same(cache, folder) if i.path == str(file)] == [5]
    cache.close()
    assert [i.message_count for i in _same(_cache(store_dir), folder) if i.path == str(file)] == [5]


def test_shrunk_file_is_read_again(folder: Path, store_dir: Path) -> None:
    cache = _cache(store_dir)
    _same(cache, folder)
    file = folder / "large-session.jsonl"
    data = file.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    with file.open("r+b") as out:  # shrunk, then grown past its old size before the next listing
        out.truncate(half)
        out.seek(half)
        out.write(_message(900, "x" * (len(data) - half)))
    assert file.stat().st_size > len(data)
    _same(cache, folder)
    with file.open("r+b") as out:
        out.truncate(half)
    _same(cache, folder)


def test_file_replaced_by_another_session(folder: Path, store_dir: Path, tmp_path: Path) -> None:
    cache = _cache(store_dir)
    _same(cache, folder)
    other = _session(tmp_path / "other.jsonl", "sess-other", ["replaced", "and longer than the first"])
    with (folder / "a.jsonl").open("rb") as kept_open:  # the old inode stays alive: no reuse
        os.replace(other, folder / "a.jsonl")
        assert [i.id for i in _same(cache, folder) if i.path.endswith("/a.jsonl")] == ["sess-other"]
        assert kept_open.read(1) == b"{"


def test_rewritten_in_place_with_mtime_moved_back(folder: Path, store_dir: Path) -> None:
    cache = _cache(store_dir)
    _same(cache, folder)
    file = folder / "a.jsonl"
    before = file.stat()
    file.write_bytes(file.read_bytes().replace(b"alpha question", b"omega question"))  # same size, same inode
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns - 5_000_000_000))
    [info] = [i for i in _same(cache, folder) if i.path == str(file)]
    assert info.first_message == "omega question"
    # larger now, same first and last few KB, an older mtime: not an append either
    large = folder / "large-session.jsonl"
    before = large.stat()
    data = large.read_bytes()
    middle = data.index(b'"role":"user"', len(data) // 2)
    edited = data[:middle] + data[middle:].replace(b'"role":"user"', b'"role":"usex"', 1)
    edited += _message(901, "more")
    large.write_bytes(edited)
    os.utime(large, ns=(before.st_atime_ns, before.st_mtime_ns - 5_000_000_000))
    _same(cache, folder)


def test_rewritten_in_place_and_grown(folder: Path, store_dir: Path) -> None:
    """Same inode, larger, newer: looks like an append, but the start differs (fingerprint)."""
    cache = _cache(store_dir)
    _same(cache, folder)
    file = folder / "a.jsonl"
    before = file.stat()
    _session(file, "sess-rewritten", ["alpha question", "  spaced\n\tout  text ", "one more"])
    assert file.stat().st_ino == before.st_ino and file.stat().st_size > before.st_size
    assert [i.id for i in _same(cache, folder) if i.path == str(file)] == ["sess-rewritten"]


def test_files_added_and_removed(folder: Path, store_dir: Path) -> None:
    cache = _cache(store_dir)
    _same(cache, folder)
    (folder / "named.jsonl").unlink()
    _session(folder / "new.jsonl", "sess-new", ["brand new"])
    (folder / "notes.jsonl").write_bytes(_line(header("sess-was-notes")))  # now a session
    assert "sess-was-notes" in {i.id for i in _same(cache, folder)}


def test_a_fresh_cache_starts_from_the_disk_copy(
    folder: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache(store_dir)
    _same(cache, folder)
    cache.close()
    assert (store_dir / cache_file(store_dir, str(folder)).name).is_file()
    assert store_dir.stat().st_mode & 0o777 == 0o700
    assert cache_file(store_dir, str(folder)).stat().st_mode & 0o777 == 0o600  # it holds message text
    reads = _reads(monkeypatch)
    _same(_cache(store_dir), folder)
    assert reads == []
    # the same folder spelled differently (relative) shares the entries and reports its paths as given
    monkeypatch.chdir(folder.parent)
    relative = _cache(store_dir).list_folder(Path(folder.name))
    assert relative == list_sessions("/unused", Path(folder.name))
    assert reads == []


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b'{"format": "pi-lsp-session-list", "version": 2, "directory": "',
        b"[1, 2, 3]\n",
        orjson.dumps({"format": FORMAT, "version": 2, "directory": "D", "files": []}),  # no line feed
        orjson.dumps({"format": FORMAT, "version": 1, "directory": "D", "files": []}) + b"\n",
        orjson.dumps({"format": FORMAT, "version": 999, "directory": "D", "files": []}) + b"\n",
        orjson.dumps({"format": "something-else", "version": 2, "directory": "D", "files": []}) + b"\n",
        orjson.dumps({"format": FORMAT, "version": 2, "directory": "/else", "files": []}) + b"\n",
        b"\xff\xfe garbage \x00\n\xff",
    ],
)
def test_corrupt_or_foreign_cache_file_is_ignored(folder: Path, store_dir: Path, content: bytes) -> None:
    store_dir.mkdir()
    target = cache_file(store_dir, str(folder))
    target.write_bytes(content.replace(b'"D"', orjson.dumps(str(folder))))
    cache = _cache(store_dir)
    _same(cache, folder)
    cache.close()
    assert orjson.loads(target.read_bytes().split(b"\n")[0])["version"] == VERSION  # rewritten, usable
    _same(_cache(store_dir), folder)


def test_rows_that_lie_or_are_malformed_are_dropped(folder: Path, store_dir: Path) -> None:
    cache = _cache(store_dir)
    _same(cache, folder)
    cache.close()
    target = cache_file(store_dir, str(folder))
    header, texts = target.read_bytes().split(b"\n", 1)
    document = orjson.loads(header)
    rows = document["files"]
    rows[0][3] = "not a size"
    rows[1] = rows[1][:5]
    rows[2][8] = "zz"  # not hex
    rows[3][9] = True  # a bool is not a state
    rows.append(["../escape.jsonl", *rows[4][1:]])
    rows.append({"not": "a row"})
    with_text = next(row for row in rows[6:] if type(row) is list and row[18] > 2)
    at = with_text[17]
    texts = texts[:at] + b"\xff" + texts[at + 1 :]  # its text is not UTF-8 any more
    rows[5][17] = len(texts)  # text beyond the end
    target.write_bytes(orjson.dumps(document) + b"\n" + texts)
    _same(_cache(store_dir), folder)
    target.write_bytes(orjson.dumps(document) + b"\n" + texts[: len(texts) // 2])  # cut short
    _same(_cache(store_dir), folder)


def test_a_row_for_another_file_at_the_same_path_is_not_trusted(folder: Path, store_dir: Path) -> None:
    """A cache from before the file was replaced (another inode): its row is stale, not used."""
    cache = _cache(store_dir)
    _same(cache, folder)
    cache.close()
    file = folder / "a.jsonl"
    replacement = _session(folder / "tmp.jsonl.part", "sess-b", ["same length text ab", "x"])
    os.replace(replacement, file)
    assert [i.id for i in _same(_cache(store_dir), folder) if i.path == str(file)] == ["sess-b"]


def test_a_cache_without_a_writable_home_still_lists(folder: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cache = _cache(blocker / "list-cache")
    _same(cache, folder)
    cache.close()
    _same(cache, folder)


def test_list_all_through_the_cache(agent_dir: Path, store_dir: Path) -> None:
    root = agent_dir / "sessions"
    for project in ("p1", "p2"):
        (root / project).mkdir(parents=True)
        _session(root / project / "s.jsonl", f"sess-{project}", [f"in {project}"])
    cache = _cache(store_dir)
    from pi_lsp.session.listing import list_all_sessions

    assert cache.list_all() == list_all_sessions()
    with (root / "p1" / "s.jsonl").open("ab") as out:
        out.write(_message(5, "more"))
    assert cache.list_all() == list_all_sessions()


def test_session_files_are_never_written(folder: Path, store_dir: Path) -> None:
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}
    cache = _cache(store_dir)
    _same(cache, folder)
    cache.close()
    _same(_cache(store_dir), folder)
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()} == before


CONCURRENT_LISTER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import orjson
    from pi_lsp.session.list_cache import SessionListCache
    from pi_lsp.session.list_cache_disk import DiskStore
    from pi_lsp.session.listing import build_session_info

    folder, store, own, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    for index in range(rounds):
        with (folder / own).open("ab") as out:
            line = {"type": "message", "id": f"{own}{index}", "parentId": None,
                    "timestamp": "2025-03-01T00:00:00.000Z",
                    "message": {"role": "user", "content": f"round {index}", "timestamp": 1}}
            out.write(orjson.dumps(line) + b"\\n")
        cache = SessionListCache(DiskStore(store, save_interval=0.0))  # loads what the other saved
        infos = {Path(info.path).name: info for info in cache.list_folder(folder)}
        cache.close()
        assert infos[own] == build_session_info(folder / own), index
        assert infos[own].message_count == index + 1
        assert infos["a.jsonl"] == build_session_info(folder / "a.jsonl")
    print("ok")
    """
)


def test_two_processes_listing_and_saving_at_once(folder: Path, store_dir: Path) -> None:
    for name in ("p1.jsonl", "p2.jsonl"):
        (folder / name).write_bytes(_line(header(f"sess-{name}")))
    command = [sys.executable, "-c", CONCURRENT_LISTER, str(folder), str(store_dir)]
    children = [
        subprocess.Popen([*command, name, "40"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for name in ("p1.jsonl", "p2.jsonl")
    ]
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0 and out.strip() == b"ok", err.decode()[-2000:]
    assert not [p for p in store_dir.iterdir() if p.name.endswith(".tmp")]
    _same(_cache(store_dir), folder)


@pytest.mark.oracle
def test_cached_listing_matches_pi_after_changes(folder: Path, store_dir: Path, pi_oracle: PiOracle) -> None:
    def check(cache: SessionListCache) -> None:
        pi = pi_oracle.result("list", dir=str(folder))
        ours = cache.list_folder(folder)
        assert [info.path for info in ours] == [info["path"] for info in pi]
        for mine, theirs in zip(ours, pi, strict=True):
            wire = mine.to_wire()
            for key in ("id", "cwd", "created", "modified", "messageCount", "firstMessage", "name"):
                assert wire.get(key) == theirs.get(key), key
            assert mine.all_messages_text == theirs["allMessagesText"]

    cache = _cache(store_dir)
    check(cache)
    with (folder / "a.jsonl").open("ab") as out:
        out.write(_message(7, "appended later", role="assistant"))
        out.write(_line({"type": "session_info", "name": "  after  "}))
    check(cache)
    _session(folder / "named.jsonl", "sess-replaced", ["now with messages"])
    check(cache)
    cache.close()
    check(_cache(store_dir))
