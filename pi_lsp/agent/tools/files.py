"""Reading and replacing whole files the way the editing tools need: node's decoding, atomic writes.

pi writes with ``fs.writeFile`` (truncate, then write). We write a temporary file next to the real
target and rename it over, so a crash or a full disk never leaves the user's file half written;
the file keeps its permission bits, and a symlink keeps pointing at the file it named.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pi_lsp.agent.tools.base import ToolError
from pi_lsp.atomic_file import TempFileError, replace_atomically
from pi_lsp.jscompat import node_error_message as node_message

_SURROGATE = re.compile("[\ud800-\udfff]")


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_NEW_FILE_MODE = _default_mode()


def encode_text(text: str) -> bytes:
    """UTF-8 as node writes a JS string: lone surrogates become U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def decode_text(data: bytes) -> str:
    """``Buffer.toString("utf-8")``: invalid bytes become U+FFFD, a BOM is kept."""
    return data.decode("utf-8", "replace")


def ensure_parent_dirs(directory: str) -> None:
    """``mkdir -p`` with node's error text."""
    try:
        os.makedirs(directory, exist_ok=True)
    except FileExistsError as exc:
        raise ToolError(node_message(exc, "mkdir", directory)) from exc
    except OSError as exc:
        raise ToolError(node_message(exc, "mkdir", directory)) from exc


def replace_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; errors are worded as node's ``open`` failures."""
    target = os.path.realpath(path)
    if os.path.isdir(target):
        raise ToolError(f"EISDIR: illegal operation on a directory, open '{path}'")
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = _NEW_FILE_MODE
    except OSError as exc:
        raise ToolError(node_message(exc, "open", path)) from exc
    if os.path.exists(target) and not os.access(target, os.W_OK):
        raise ToolError(f"EACCES: permission denied, open '{path}'")
    try:
        replace_atomically(Path(target), data, fsync=True, mode=mode, suffix=".pi-tmp")
    except TempFileError as exc:
        raise ToolError(node_message(exc, "open", path)) from exc
    except OSError as exc:
        raise ToolError(node_message(exc, "write", path)) from exc


def read_for_diff(path: str) -> str | None:
    """The file's text for a preview diff, or None when there is no readable file yet."""
    try:
        with open(path, "rb") as handle:
            return decode_text(handle.read())
    except OSError:
        return None
