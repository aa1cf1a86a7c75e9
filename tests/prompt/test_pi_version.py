"""The pi release whose texts ``prompt/pi_text.py`` mirrors is the release the oracle tests run."""

from __future__ import annotations

import re
from pathlib import Path

from pi_lsp.prompt.pi_text import PI_VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_pi_text_names_the_oracles_release() -> None:
    makefile = (ROOT / "Makefile").read_text()
    match = re.search(r"^PI_VERSION := (\S+)$", makefile, re.MULTILINE)
    assert match is not None
    assert match.group(1) == PI_VERSION, "pi was bumped: check prompt/pi_text.py's texts, then its PI_VERSION"
