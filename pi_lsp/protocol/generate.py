"""``python -m pi_lsp.protocol.generate [--check]``: write (or check) every file made from the source.

``make protocol`` runs it after a change to ``pi_lsp/protocol/``; ``--check`` (and the test suite,
``tests/test_protocol_source.py``) fails when a committed file differs from what the source makes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from pi_lsp.protocol import gen_docs, gen_lua, gen_ts

REPOSITORY = Path(__file__).resolve().parents[2]
TARGETS: dict[str, Callable[[str], str]] = {
    "vscode-client/src/shared/protocol.ts": lambda _old: gen_ts.render(),
    "nvim-client/lua/pi/protocol.lua": lambda _old: gen_lua.render(),
    "docs/protocol.md": gen_docs.splice,
}


def expected(root: Path = REPOSITORY) -> dict[Path, str]:
    """Each generated file's path and the text the source makes for it now."""
    made: dict[Path, str] = {}
    for relative, make in TARGETS.items():
        path = root / relative
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        made[path] = make(old)
    return made


def stale(root: Path = REPOSITORY) -> list[Path]:
    """The generated files whose committed text differs from what the source makes."""
    return [
        path
        for path, text in expected(root).items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pi_lsp.protocol.generate", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only say which files are stale (exit 1)")
    parser.add_argument("--root", type=Path, default=REPOSITORY, help="the repository (default: this one)")
    args = parser.parse_args(argv)
    if args.check:
        old = stale(args.root)
        for path in old:
            print(f"stale: {path} (run `make protocol`)", file=sys.stderr)
        return 1 if old else 0
    for path, text in expected(args.root).items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
