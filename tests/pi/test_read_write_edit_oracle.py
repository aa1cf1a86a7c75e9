"""read, write and edit against pi's own tools on the same files (texts, details, errors, bytes)."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.pi.differential import compare
from tests.pi.pi_tools import PiTools

pytestmark = pytest.mark.oracle

GIF_1X1 = (
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00"
    b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)
LINES_3000 = "".join(f"line {i}\n" for i in range(1, 3001))
WIDE = "".join(f"{i:05d} " + "x" * 200 + "\n" for i in range(400))  # ~80 KB: the byte limit first


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


READ_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("small", {"a.txt": "one\ntwo\nthree\n"}, {"path": "a.txt"}),
    ("no trailing newline", {"a.txt": "one\ntwo"}, {"path": "a.txt"}),
    ("empty file", {"a.txt": ""}, {"path": "a.txt"}),
    ("offset", {"a.txt": LINES_3000}, {"path": "a.txt", "offset": 2990}),
    ("offset and limit", {"a.txt": LINES_3000}, {"path": "a.txt", "offset": 10, "limit": 5}),
    ("limit reaching the end", {"a.txt": "a\nb\nc"}, {"path": "a.txt", "offset": 2, "limit": 10}),
    ("offset zero", {"a.txt": "a\nb\nc"}, {"path": "a.txt", "offset": 0, "limit": 1}),
    ("offset past end", {"a.txt": "a\nb\n"}, {"path": "a.txt", "offset": 9}),
    ("line limit", {"a.txt": LINES_3000}, {"path": "a.txt"}),
    ("byte limit", {"a.txt": WIDE}, {"path": "a.txt"}),
    ("byte limit with offset", {"a.txt": WIDE}, {"path": "a.txt", "offset": 100}),
    ("long first line", {"a.txt": "y" * 60_000 + "\nshort\n"}, {"path": "a.txt"}),
    ("long line at offset", {"a.txt": "a\n" + "é" * 30_000 + "\n"}, {"path": "a.txt", "offset": 2}),
    ("multibyte text", {"a.txt": "naïve café ☕ 😀\nzwei\n"}, {"path": "a.txt"}),
    ("invalid utf-8", {"a.txt": b"ok \xff\xfe bad \xc3\x28 end\n"}, {"path": "a.txt"}),
    ("bom and crlf kept", {"a.txt": "\ufeffa\r\nb\r\n"}, {"path": "a.txt"}),
    ("at prefix", {"a.txt": "hi"}, {"path": "@a.txt"}),
    ("unicode space in path", {"my file.txt": "hi"}, {"path": "my\u00a0file.txt"}),
    ("absolute path", {"d/a.txt": "abs"}, {"path": "ROOT/d/a.txt"}),
    ("macOS AM/PM name", {"shot 10.00\u202fAM.txt": "am"}, {"path": "shot 10.00 AM.txt"}),
    ("macOS curly apostrophe", {"Capture d\u2019ecran.txt": "c"}, {"path": "Capture d'ecran.txt"}),
    ("NFD file name", {"cafe\u0301.txt": "nfd"}, {"path": "caf\u00e9.txt"}),
    (
        "NFD and curly apostrophe",
        {"d\u2019e\u0301t\u00e9.txt".replace("\u00e9", "e\u0301"): "both"},
        {"path": "d'\u00e9t\u00e9.txt"},
    ),
    ("missing file", {}, {"path": "nope.txt"}),
    ("directory", {"d": None}, {"path": "d"}),
    ("small png", {"p.png": _png(3, 2)}, {"path": "p.png"}),
    ("png with wrong extension", {"p.txt": _png(1, 1)}, {"path": "p.txt"}),
    ("gif", {"g.gif": GIF_1X1}, {"path": "g.gif"}),
    ("not really a png", {"p.png": b"plain text in a .png"}, {"path": "p.png"}),
    ("limit past the end", {"a.txt": "a\nb"}, {"path": "a.txt", "limit": 50}),
]


@pytest.mark.parametrize(("files", "args"), [c[1:] for c in READ_CASES], ids=[c[0] for c in READ_CASES])
async def test_read_matches_pi(
    pi_tools: PiTools, tmp_path: Path, files: dict[str, Any], args: dict[str, Any]
) -> None:
    if str(args["path"]).startswith("ROOT/"):
        args = {**args, "path": str(tmp_path / "ours" / args["path"][5:])}
    result = await compare(pi_tools, tmp_path, "read", args, files)
    if "p.png" in files and files["p.png"].startswith(b"\x89PNG"):
        image = result["ok"]["content"][1]
        assert base64.b64decode(image["data"]) == files["p.png"]


WRITE_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("new file", {}, {"path": "new.txt", "content": "hello\n"}),
    ("overwrite", {"a.txt": "old"}, {"path": "a.txt", "content": "new"}),
    ("parent folders created", {}, {"path": "x/y/z.txt", "content": "deep"}),
    ("utf-16 length reported", {}, {"path": "e.txt", "content": "😀é\n"}),
    ("empty content", {"a.txt": "old"}, {"path": "a.txt", "content": ""}),
    ("onto a directory", {"d": None}, {"path": "d", "content": "x"}),
    ("parent is a file", {"f": "file"}, {"path": "f/child.txt", "content": "x"}),
    ("at prefix", {}, {"path": "@at.txt", "content": "x"}),
]


@pytest.mark.parametrize(("files", "args"), [c[1:] for c in WRITE_CASES], ids=[c[0] for c in WRITE_CASES])
async def test_write_matches_pi(
    pi_tools: PiTools, tmp_path: Path, files: dict[str, Any], args: dict[str, Any]
) -> None:
    await compare(pi_tools, tmp_path, "write", args, files)


def _edit(old: str, new: str) -> dict[str, str]:
    return {"oldText": old, "newText": new}


CODE = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(40))
EDIT_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("exact", {"a.py": CODE}, {"path": "a.py", "edits": [_edit("return 7\n", "return 70\n")]}),
    (
        "several edits",
        {"a.py": CODE},
        {
            "path": "a.py",
            "edits": [
                _edit("return 30", "return -30"),
                _edit("def f2()", "def g2()"),
                _edit("return 39\n", "return 39\n# end\n"),
            ],
        },
    ),
    (
        "insert lines",
        {"a.py": CODE},
        {"path": "a.py", "edits": [_edit("def f5():\n", "# hi\n# there\ndef f5():\n")]},
    ),
    ("delete lines", {"a.py": CODE}, {"path": "a.py", "edits": [_edit("def f9():\n    return 9\n\n", "")]}),
    (
        "crlf file",
        {"w.txt": "one\r\ntwo\r\nthree\r\n"},
        {"path": "w.txt", "edits": [_edit("two\nthree", "2\n3")]},
    ),
    (
        "crlf oldText",
        {"w.txt": "one\r\ntwo\r\n"},
        {"path": "w.txt", "edits": [_edit("one\r\ntwo", "1\r\n2")]},
    ),
    ("bom kept", {"b.txt": "\ufeffalpha\nbeta\n"}, {"path": "b.txt", "edits": [_edit("alpha", "ALPHA")]}),
    ("bom and crlf", {"b.txt": "\ufeffa\r\nb\r\n"}, {"path": "b.txt", "edits": [_edit("b", "c")]}),
    (
        "fuzzy trailing spaces",
        {"f.txt": "x = 1   \ny = 2\t\nz = 3\n"},
        {"path": "f.txt", "edits": [_edit("x = 1\ny = 2", "x = 10\ny = 20")]},
    ),
    (
        "fuzzy quotes and dashes",
        {"f.txt": "say \u201chi\u201d \u2014 it\u2019s fine  \nkeep  \n"},
        {"path": "f.txt", "edits": [_edit('say "hi" - it\'s fine', "said hi")]},
    ),
    (
        "fuzzy makes all edits normalised",
        {"f.txt": "a \u2013 b  \nc\u00a0d\nlast  \n"},
        {"path": "f.txt", "edits": [_edit("a - b", "A"), _edit("last", "LAST")]},
    ),
    ("not found", {"a.txt": "abc"}, {"path": "a.txt", "edits": [_edit("xyz", "q")]}),
    ("not found in multi", {"a.txt": "abc"}, {"path": "a.txt", "edits": [_edit("a", "A"), _edit("zz", "q")]}),
    ("ambiguous", {"a.txt": "dup\ndup\n"}, {"path": "a.txt", "edits": [_edit("dup", "one")]}),
    (
        "ambiguous in multi",
        {"a.txt": "x dup dup"},
        {"path": "a.txt", "edits": [_edit("x", "y"), _edit("dup", "d")]},
    ),
    ("overlapping", {"a.txt": "abcdef"}, {"path": "a.txt", "edits": [_edit("bcd", "1"), _edit("cde", "2")]}),
    ("no change", {"a.txt": "same"}, {"path": "a.txt", "edits": [_edit("same", "same")]}),
    ("no change multi", {"a.txt": "ab"}, {"path": "a.txt", "edits": [_edit("a", "a"), _edit("b", "b")]}),
    ("empty oldText", {"a.txt": "ab"}, {"path": "a.txt", "edits": [_edit("", "x")]}),
    ("empty oldText multi", {"a.txt": "ab"}, {"path": "a.txt", "edits": [_edit("a", "x"), _edit("", "y")]}),
    ("no edits", {"a.txt": "ab"}, {"path": "a.txt", "edits": []}),
    ("missing file", {}, {"path": "none.txt", "edits": [_edit("a", "b")]}),
    (
        "legacy oldText/newText",
        {"a.txt": "hello world"},
        {"path": "a.txt", "oldText": "world", "newText": "there"},
    ),
    (
        "edits as a JSON string",
        {"a.txt": "hello world"},
        {"path": "a.txt", "edits": '[{"oldText": "hello", "newText": "bye"}]'},
    ),
    (
        "first and last line",
        {"a.txt": "first\nmiddle\nlast"},
        {"path": "a.txt", "edits": [_edit("first", "1st"), _edit("last", "LAST")]},
    ),
    (
        "far apart changes",
        {"a.txt": "".join(f"{i}\n" for i in range(200))},
        {"path": "a.txt", "edits": [_edit("\n3\n", "\nthree\n"), _edit("\n150\n", "\nx\ny\n")]},
    ),
]


@pytest.mark.parametrize(("files", "args"), [c[1:] for c in EDIT_CASES], ids=[c[0] for c in EDIT_CASES])
async def test_edit_matches_pi(
    pi_tools: PiTools, tmp_path: Path, files: dict[str, Any], args: dict[str, Any]
) -> None:
    await compare(pi_tools, tmp_path, "edit", args, files)
