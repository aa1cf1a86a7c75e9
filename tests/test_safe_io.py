"""The bounded reader for workspace-controlled files: regular files only, a size cap, never a block."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from pi_lsp.fileerrors import FileProblem
from pi_lsp.safe_io import read_bytes, read_error_message, read_text


def test_a_regular_file_is_read_whole_and_decoded_like_node(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"\xef\xbb\xbfhi \xff there")
    assert read_text(str(path)) == "\ufeffhi \ufffd there"
    assert read_bytes(str(path), limit=14) == path.read_bytes()


def test_a_fifo_is_rejected_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "AGENTS.md"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_bytes(str(fifo))
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # unblock the stuck open so the thread can end, then fail
        with open(fifo, "wb"):
            pass
        pytest.fail("reading a FIFO blocked")
    assert isinstance(outcome[0], FileProblem) and outcome[0].reason == "notRegularFile"
    assert read_error_message(outcome[0], str(fifo)) == f"{fifo}: not a regular file (a FIFO); not read"


def test_devices_and_links_to_them_are_rejected(tmp_path: Path) -> None:
    link = tmp_path / "SKILL.md"
    link.symlink_to("/dev/zero")
    for path in ("/dev/zero", str(link), "/dev/null"):
        with pytest.raises(FileProblem) as info:
            read_bytes(path)
        assert info.value.reason == "notRegularFile" and "character device" in info.value.message


def test_a_file_over_the_cap_is_rejected_not_truncated(tmp_path: Path) -> None:
    sparse = tmp_path / "huge.md"
    with open(sparse, "wb") as handle:
        handle.truncate(8 << 30)
    with pytest.raises(FileProblem) as info:
        read_bytes(str(sparse))
    assert info.value.reason == "tooLarge" and "8,589,934,592" in info.value.message
    exact = tmp_path / "exact.md"
    exact.write_bytes(b"x" * 10)
    assert read_bytes(str(exact), limit=10) == b"x" * 10
    with pytest.raises(FileProblem):
        read_bytes(str(exact), limit=9)


def test_missing_files_and_directories_fail_as_before(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bytes(str(tmp_path / "missing"))
    with pytest.raises(IsADirectoryError) as info:
        read_bytes(str(tmp_path))
    assert (
        read_error_message(info.value, str(tmp_path))
        == f"EISDIR: illegal operation on a directory, open '{tmp_path}'"
    )


def test_a_fifo_swapped_in_after_the_stat_is_refused_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regular = tmp_path / "regular"
    regular.write_text("")
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: real_stat(regular if path == str(fifo) else path))
    with pytest.raises(FileProblem) as info:
        read_bytes(str(fifo))
    assert info.value.reason == "notRegularFile"
