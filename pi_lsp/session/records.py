"""Compact per-entry records: the raw JSON line plus the few fields the tree and context need.

Entries are kept as the exact bytes pi (or anyone) wrote, so unknown fields and number formats
survive untouched; the dict form is parsed on demand. This keeps memory close to the file size.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from types import EllipsisType
from typing import Any

import orjson

from pi_lsp.gcpause import gc_paused
from pi_lsp.jscompat import js_trim
from pi_lsp.session.json_check import each_one_value
from pi_lsp.session.jsonl import dumps_compact, dumps_kept, loads_line

PREVIEW_CHARS = 120
_CANONICAL_MESSAGE_KEYS = ("type", "id", "parentId", "timestamp", "message")
_MESSAGE_KEY = b',"message":'
_STRING = rb'"([^"\\\x00-\x1f]*)"'
MESSAGE_HEAD = re.compile(
    rb'\{"type":"message","id":'
    + _STRING
    + rb',"parentId":(?:'
    + _STRING
    + rb'|null),"timestamp":'
    + _STRING
    + rb',"message":(\{)"role":'
    + _STRING
)
"""The head of a canonical message line as pi writes it, up to the message's role. Strings with
escapes or control characters do not match (those lines are parsed whole), so a match is valid
JSON as far as it goes and its groups are the values, undecoded."""


def text_of_content(content: Any, separator: str = " ") -> str:
    """Text of a message ``content``: a string as is, text blocks joined with ``separator``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return separator.join(
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        )
    return ""


def _preview(obj: dict[str, Any]) -> str | None:
    kind = obj.get("type")
    text: str | None = None
    if kind == "message":
        message = obj.get("message")
        if isinstance(message, dict):
            role = message.get("role")
            if role == "bashExecution":
                text = f"$ {message.get('command', '')}"
            elif role in ("compactionSummary", "branchSummary"):
                text = message.get("summary") if isinstance(message.get("summary"), str) else None
            else:
                text = text_of_content(message.get("content"))
                if not text and role == "assistant" and isinstance(message.get("content"), list):
                    calls = [
                        block.get("name")
                        for block in message["content"]
                        if isinstance(block, dict) and block.get("type") == "toolCall"
                    ]
                    text = " ".join(f"{name}(…)" for name in calls if isinstance(name, str))
    elif kind in ("compaction", "branch_summary"):
        text = obj.get("summary") if isinstance(obj.get("summary"), str) else None
    elif kind == "custom_message":
        text = text_of_content(obj.get("content"))
    elif kind == "session_info":
        text = obj.get("name") if isinstance(obj.get("name"), str) else None
    elif kind == "thinking_level_change":
        text = str(obj.get("thinkingLevel"))
    elif kind == "model_change":
        text = f"{obj.get('provider')}/{obj.get('modelId')}"
    elif kind == "label":
        text = obj.get("label") if isinstance(obj.get("label"), str) else None
    elif kind == "custom":
        text = obj.get("customType") if isinstance(obj.get("customType"), str) else None
    if not text:
        return None
    return _normalized_head(text)


def _left_out_by_pi_tree(message: Any) -> bool:
    """pi's tree view: an assistant message without non-blank text is left out, unless it stopped
    on something other than ``stop`` or ``toolUse`` (an error, an abort, the length limit)."""
    if not isinstance(message, dict):
        return False
    stop = message.get("stopReason")
    if stop and stop not in ("stop", "toolUse"):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return not js_trim(content)
    if isinstance(content, list):
        return not any(
            isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
            and js_trim(block["text"])
            for block in content
        )
    return True


def _normalized_head(text: str) -> str:
    """``" ".join(text.split())[:PREVIEW_CHARS]`` without splitting all of a long text.

    Whitespace-normalising a prefix of the text gives a prefix of the normalised text, so a
    growing prefix is normalised until it yields enough characters.
    """
    size = PREVIEW_CHARS * 4
    while size < len(text):
        head = " ".join(text[:size].split())
        if len(head) >= PREVIEW_CHARS:
            return head[:PREVIEW_CHARS]
        size *= 4
    return " ".join(text.split())[:PREVIEW_CHARS]


_TRAILING_SPACE = frozenset(b" \t\n\r\x0b\x0c")

_BROKEN = -2
"""``message_start`` of a line indexed from its head that turned out not to be JSON."""

_ROLES = {role.encode(): role for role in ("user", "assistant", "toolResult", "bashExecution", "custom")}


@gc_paused()
def verify_records(records: Iterable[EntryRecord]) -> None:
    """:meth:`EntryRecord.verify` for every record not checked yet: in the usual case (every line
    is valid) a megabyte of messages at a time goes through the raw check (``json_check``), and a
    batch that fails is verified record by record. What a context or a page pays before it is
    sent, instead of every line paying at open."""
    batch: list[EntryRecord] = []
    slices: list[bytes] = []
    size = 0
    for record in records:
        if record._checked:
            continue
        data = record._message_slice()
        batch.append(record)
        slices.append(data)
        size += len(data)
        if size >= _VERIFY_BATCH_BYTES:
            _verify_batch(batch, slices)
            batch, slices, size = [], [], 0
    if batch:
        _verify_batch(batch, slices)


_VERIFY_BATCH_BYTES = 1 << 20


def mark_checked(records: Iterable[EntryRecord]) -> None:
    """Record that these records' messages were found to be JSON (by a parse of what was sent)."""
    for record in records:
        record._checked = True


def _verify_batch(batch: list[EntryRecord], slices: list[bytes]) -> None:
    if len(batch) > 1 and each_one_value(slices):
        for record in batch:
            record._checked = True
        return
    for record in batch:
        record.verify()


def _shared(value: Any) -> Any:
    """One shared object for the few distinct short strings (types, roles, models) of a session."""
    return sys.intern(value) if type(value) is str and len(value) <= 64 else value


class EntryRecord:
    """One entry line: identity, tree links, and small type-specific facts.

    A canonical message line (``{"type":"message","id":…,"parentId":…,"timestamp":…,"message":M}``)
    is kept as two parts, the head up to ``M`` and ``M`` itself, so :meth:`message_json` hands out
    the stored bytes without copying; :attr:`raw` joins them back into the exact line. The preview
    is computed from the line on first use.
    """

    __slots__ = (
        "_body",
        "_checked",
        "_head",
        "_model",
        "_no_text",
        "_preview",
        "_provider",
        "chain",
        "first_kept",
        "id",
        "label",
        "line",
        "message_start",
        "name",
        "parent_id",
        "role",
        "target_id",
        "thinking_level",
        "timestamp",
        "type",
    )

    def __init__(self, obj: dict[str, Any], raw: bytes, line: int, message_head: bytes | None = None) -> None:
        """``message_head``: given for a canonical message line we are writing, ``raw`` is only its
        message's JSON and the line is ``message_head + raw + b"}"`` (no search of the line)."""
        self._head: bytes | None = None
        self._body: bytes = raw
        self._preview: str | EllipsisType | None = ...
        self._no_text = False
        self._checked = True
        self.line = line
        entry_id = obj.get("id")
        self.id: str | None = entry_id if isinstance(entry_id, str) else None
        parent = obj.get("parentId")
        self.parent_id: str | None = parent if isinstance(parent, str) else None
        kind = obj.get("type")
        self.type: str = _shared(kind) if isinstance(kind, str) else ""
        self.timestamp: Any = obj.get("timestamp")
        self.role: str | None = None
        self._provider: Any = None
        self._model: Any = None
        self.target_id: Any = None
        self.label: Any = None
        self.name: Any = None
        self.first_kept: Any = None
        self.thinking_level: Any = None
        self.message_start = -1
        self.chain: Any = None  # the tree index's linear chain holding this record (segments.py)
        if self.type == "message":
            message = obj.get("message")
            if isinstance(message, dict):
                role = message.get("role")
                self.role = _shared(role) if isinstance(role, str) else None
                if self.role == "assistant":
                    self._provider = _shared(message.get("provider"))
                    self._model = _shared(message.get("model"))
                if message_head is not None:
                    self._head = message_head
                    self.message_start = len(message_head)
                elif (
                    tuple(obj) == _CANONICAL_MESSAGE_KEYS
                    and (entry_id is None or isinstance(entry_id, str))
                    and (parent is None or isinstance(parent, str))
                    and (self.timestamp is None or isinstance(self.timestamp, str))
                ):
                    self._locate_message(raw)
        elif self.type == "label":
            self.target_id = obj.get("targetId")
            self.label = obj.get("label")
        elif self.type == "session_info":
            self.name = obj.get("name")
        elif self.type == "compaction":
            self.first_kept = obj.get("firstKeptEntryId")
        elif self.type == "thinking_level_change":
            self.thinking_level = obj.get("thinkingLevel")
        elif self.type == "model_change":
            self._provider = obj.get("provider")
            self._model = obj.get("modelId")

    @classmethod
    def from_head(cls, line: bytes, head: re.Match[bytes], base: int, number: int) -> EntryRecord:
        """The record of a canonical message line (``head``: :data:`MESSAGE_HEAD` matched at
        ``base`` of a buffer) without parsing the message: it is checked when first needed
        (:meth:`verify`). Raises UnicodeDecodeError for a head that is not UTF-8."""
        entry_id, parent_id, timestamp, _, role = head.groups()
        self = cls.__new__(cls)
        self._head = None
        self._body = line
        self._preview = ...
        self._no_text = False
        self._checked = False
        self.line = number
        self.id = entry_id.decode()
        self.parent_id = parent_id.decode() if parent_id is not None else None
        self.type = "message"
        self.timestamp = timestamp.decode()
        name = _ROLES.get(role)
        self.role = name if name is not None else _shared(role.decode())
        self._provider = self._model = ... if self.role == "assistant" else None
        self.target_id = self.label = self.name = self.first_kept = self.thinking_level = None
        self.message_start = head.start(4) - base
        self.chain = None
        return self

    @property
    def provider(self) -> Any:
        """The provider of an assistant message or a model change (read from the message on first
        use for a record made by :meth:`from_head`)."""
        if self._provider is ...:
            self._read_model()
        return self._provider

    @property
    def model(self) -> Any:
        """The model id of an assistant message or a model change (see :attr:`provider`)."""
        if self._model is ...:
            self._read_model()
        return self._model

    def _read_model(self) -> None:
        message = self.message()
        if message is None:
            self._provider = self._model = None
        else:
            self._provider = _shared(message.get("provider"))
            self._model = _shared(message.get("model"))

    def verify(self) -> bool:
        """Parse a line indexed from its head once: False (and the record is then only its head)
        when the line is not JSON after all. A canonical line whose message slice is valid JSON is
        valid whole (the head was matched exactly); one with keys after the message is kept as
        a non-canonical line."""
        if self._checked:
            return self.message_start != _BROKEN
        self._checked = True
        try:
            loads_line(self._message_slice())
            return True
        except ValueError:
            pass
        try:
            value = loads_line(self._body)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            self.message_start = _BROKEN
            self._provider = self._model = None
            return False
        self.message_start = -1  # valid, but the message is not the line's last key
        return True

    @property
    def checked(self) -> bool:
        """Whether the line is known to be JSON (parsed whole, or its message checked since)."""
        return self._checked

    def message_json_unchecked(self) -> memoryview:
        """The message's bytes of a line indexed from its head and not checked yet, for a caller
        that checks what it sends itself and then calls :func:`mark_checked`: a view of the stored
        line, not a copy (a whole context is copied once, into its answer)."""
        assert not self._checked and self.message_start >= 0
        return self._message_view()

    def _message_view(self) -> memoryview:
        return memoryview(self._body)[self.message_start : self._message_end()]

    def _message_slice(self) -> bytes:
        return self._body[self.message_start : self._message_end()]

    def _message_end(self) -> int:
        """Where the message's JSON ends in the stored line: before the line's closing ``}`` and
        the space after it (what ``bytes.rstrip`` takes), found without copying the line."""
        body = self._body
        end = len(body)
        if end and body[end - 1] == 0x7D:  # "}": the usual line, as pi writes it
            return end - 1
        while end and body[end - 1] in _TRAILING_SPACE:
            end -= 1
        return max(end - 1, 0)

    def head_entry(self) -> dict[str, Any]:
        """The fields read from the head of the line (all that is known of a broken line)."""
        return {"type": self.type, "id": self.id, "parentId": self.parent_id, "timestamp": self.timestamp}

    @classmethod
    def new_message(
        cls, entry_id: str, parent_id: str | None, timestamp: str, message: dict[str, Any]
    ) -> EntryRecord:
        """The record of a message entry we write, in pi's key order: its line is the head written
        around the message's JSON, the same bytes as serialising the whole entry."""
        entry: dict[str, Any] = {"type": "message", "id": entry_id, "parentId": parent_id}
        entry["timestamp"] = timestamp
        try:
            head = orjson.dumps(entry)[:-1] + _MESSAGE_KEY
        except TypeError:  # a parent id from a file holding a lone surrogate
            head = dumps_compact(entry)[:-1] + _MESSAGE_KEY
        entry["message"] = message
        return cls(entry, dumps_kept(message), 0, head)

    def _locate_message(self, raw: bytes) -> None:
        position = raw.find(_MESSAGE_KEY)
        if position <= 0:
            return
        stripped = raw.rstrip()
        if not stripped.endswith(b"}"):
            return
        start = self.message_start = position + len(_MESSAGE_KEY)
        if len(stripped) == len(raw):
            self._head = raw[:start]
            self._body = raw[start:-1]

    @property
    def raw(self) -> bytes:
        """The exact bytes of the line (without its LF)."""
        head = self._head
        if head is None:
            return self._body
        return b"".join((head, self._body, b"}"))

    @raw.setter
    def raw(self, value: bytes) -> None:
        self._head = None
        self._body = value

    def raw_line(self) -> bytes:
        """:attr:`raw` with its LF, in one copy."""
        head = self._head
        if head is None:
            return self._body + b"\n"
        return b"".join((head, self._body, b"}\n"))

    @property
    def preview(self) -> str | None:
        """A one-line text preview (at most ``PREVIEW_CHARS``), or None; computed on first use."""
        value = self._preview
        if value is ...:
            if self._head is not None or self.message_start >= 0:  # canonical: only the message matters
                obj: dict[str, Any] = {"type": "message", "message": self.message()}
            else:
                obj = self.entry()
            value = self._preview = _preview(obj)
            if self.role == "assistant":
                self._no_text = _left_out_by_pi_tree(obj.get("message"))
        return value

    @property
    def no_text(self) -> bool:
        """An assistant message with no text (only tool calls or thinking) that did not stop on an
        error: pi's tree view leaves it out unless it is the leaf. Found with the preview."""
        if self._preview is ...:
            _ = self.preview
        return self._no_text

    def wire_json(self) -> bytes:
        """The line as JSON to send: its exact bytes, or the head fields of a broken line."""
        if (self._checked or self.verify()) and self.message_start != _BROKEN:
            return self.raw
        return dumps_compact(self.head_entry())

    def entry(self) -> dict[str, Any]:
        """The entry as a fresh dict (callers may mutate it); a broken line gives its head fields."""
        if (not self._checked and not self.verify()) or self.message_start == _BROKEN:
            return self.head_entry()
        value = loads_line(self.raw)
        assert isinstance(value, dict)
        return value

    def message_json(self) -> bytes | None:
        """The exact bytes of the ``message`` object of a canonical message line, else None."""
        if self._head is not None:
            return self._body
        if not self._checked:
            self.verify()
        if self.message_start < 0:
            return None
        return self._message_slice()

    def message_view(self) -> bytes | memoryview | None:
        """:meth:`message_json`, as a view of the stored line where it is a slice of one (no copy)."""
        if self._head is None and self._checked and self.message_start >= 0:
            return self._message_view()
        return self.message_json()

    def message(self) -> dict[str, Any] | None:
        """The stored message of a ``message`` entry (parsed from the smallest slice possible)."""
        if self._head is None and self.message_start >= 0:
            try:
                value = orjson.loads(self._message_slice())
                self._checked = True
                return value if isinstance(value, dict) else None
            except orjson.JSONDecodeError:
                if not self.verify():
                    return None
        data = self.message_json()
        if data is not None:
            try:
                value = orjson.loads(data)
                return value if isinstance(value, dict) else None
            except orjson.JSONDecodeError:
                pass
        message = self.entry().get("message")
        return message if isinstance(message, dict) else None
