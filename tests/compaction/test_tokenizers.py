"""Tokenizers: cl100k from the bundled offline file (never the network), and pi's estimate."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pi_lsp.compaction.tokenizers import (
    EstimateTokenizer,
    TiktokenTokenizer,
    Tokenizer,
    cl100k_data_path,
    make_tokenizer,
)
from tests.oracle import REPO_ROOT


def test_make_tokenizer() -> None:
    assert isinstance(make_tokenizer("estimate"), EstimateTokenizer)
    assert isinstance(make_tokenizer("tiktoken"), TiktokenTokenizer)
    assert isinstance(make_tokenizer("tiktoken"), Tokenizer)
    with pytest.raises(ValueError, match="unknown tokenizer"):
        make_tokenizer("gpt2")


def test_estimate_tokenizer_is_chars_over_four() -> None:
    tokenizer = EstimateTokenizer()
    assert [tokenizer.count(t) for t in ("", "a", "abcd", "abcde", "😀😀😀")] == [0, 1, 1, 2, 2]


def test_cl100k_known_counts() -> None:
    tokenizer = TiktokenTokenizer()
    assert tokenizer.count("") == 0
    assert tokenizer.count("hello world") == 2
    assert tokenizer.count("<|endoftext|>") > 1  # special tokens are plain text here
    assert tokenizer.count_many(["hello world", "hello"]) == [2, 1]
    encoding = tokenizer._encoding
    assert encoding.decode(encoding.encode_ordinary("tiktoken is offline")) == "tiktoken is offline"


def test_data_file_is_bundled() -> None:
    assert cl100k_data_path().stat().st_size > 1_000_000


def test_loads_with_network_and_downloads_impossible(tmp_path: object) -> None:
    """Fresh interpreter, sockets disabled, empty tiktoken cache dir: loading must still work."""
    script = textwrap.dedent(
        """
        import os, socket, sys
        def refuse(*args, **kwargs):
            raise RuntimeError("network access attempted")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        os.environ["TIKTOKEN_CACHE_DIR"] = sys.argv[1]
        from pi_lsp.compaction.tokenizers import make_tokenizer
        print(make_tokenizer("tiktoken").count("hello world"))
        print("requests" in sys.modules, len(os.listdir(sys.argv[1])))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", "False", "0"]
