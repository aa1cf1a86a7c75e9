"""What the user's editors hold open, so tools never clobber unsaved work.

The server feeds this from ``textDocument/didOpen``/``didChange``/``didSave``/``didClose`` (full
text each time). A document counts as unsaved when its editor text differs from the file on
disk; ``read`` then returns the editor's text and ``edit``/``write`` refuse to touch the file.
Several connections may open the same file: each holds its own copy, and any unsaved one counts.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable

from pi_lsp.jscompat import read_text
from pi_lsp.paths import file_uri_path

RemoteText = Callable[[str], Awaitable[str | None]]
"""The text an ACP client holds for a real path (``fs/read_text_file``), None when it has none."""


def _key(path: str) -> str:
    """The real path, symlinks followed as the kernel does (no lexical ``..`` folding first: the
    editing tools change ``realpath(path)``, so that is the file whose buffer counts)."""
    return os.path.realpath(path)


class EditorDocuments:
    """Thread-safe table of open editor buffers: (owner, real path) → text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._texts: dict[tuple[str, str], str] = {}
        #: Set by the ACP door when its client declares ``fs.readTextFile``: that client's buffers,
        #: asked by :meth:`editor_text` (ACP has no didOpen: the agent asks the editor instead).
        self.remote: RemoteText | None = None

    def open(self, uri: str, text: str, owner: str = "") -> None:
        self._store(uri, text, owner)

    def change(self, uri: str, text: str, owner: str = "") -> None:
        self._store(uri, text, owner)

    def save(self, uri: str, text: str | None = None, owner: str = "") -> None:
        """After a save the buffer equals the disk; a saved text (``includeText``) replaces ours."""
        if text is not None:
            self._store(uri, text, owner)

    def close(self, uri: str, owner: str = "") -> None:
        path = file_uri_path(uri)
        if path is None:
            return
        with self._lock:
            self._texts.pop((owner, _key(path)), None)

    def close_owner(self, owner: str) -> None:
        """Forget every buffer of a connection that went away."""
        with self._lock:
            for key in [key for key in self._texts if key[0] == owner]:
                del self._texts[key]

    def _store(self, uri: str, text: str, owner: str) -> None:
        path = file_uri_path(uri)
        if path is None:
            return
        with self._lock:
            self._texts[(owner, _key(path))] = text

    def unsaved_text(self, path: str) -> str | None:
        """The editor's text of ``path`` when it differs from the disk (or the file is gone), else None."""
        key = _key(path)
        with self._lock:
            texts = [text for (_, doc_path), text in self._texts.items() if doc_path == key]
        if not texts:
            return None
        try:
            on_disk: str | None = read_text(key)
        except OSError:
            on_disk = None
        for text in texts:
            if text != on_disk:
                return text
        return None

    async def editor_text(self, path: str) -> str | None:
        """:meth:`unsaved_text`, and where an ACP client lends its buffers (:attr:`remote`), that
        client's text of ``path`` when it differs from the disk: what the tools read and protect."""
        text = self.unsaved_text(path)
        remote = self.remote
        if text is not None or remote is None:
            return text
        key = _key(path)
        held = await remote(key)
        if held is None:
            return None
        try:
            on_disk: str | None = await asyncio.to_thread(read_text, key)
        except OSError:
            on_disk = None
        return held if held != on_disk else None

    def open_paths(self) -> list[str]:
        with self._lock:
            return sorted({path for _, path in self._texts})
