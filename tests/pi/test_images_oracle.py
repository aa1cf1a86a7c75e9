"""Images through read, against pi: sniffing, pass-through, resizing notes, undecodable files."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.pi.pi_tools import PiTools, make_tree, run_ours, swap_root

pytestmark = pytest.mark.oracle


def _image(fmt: str, width: int, height: int) -> bytes:
    picture = Image.new("RGB", (width, height))
    for x in range(0, width, max(1, width // 50)):
        for y in range(0, height, max(1, height // 50)):
            picture.putpixel((x, y), ((x * 7) % 256, (y * 3) % 256, 90))
    buffer = io.BytesIO()
    picture.save(buffer, fmt)
    return buffer.getvalue()


def _shape(result: dict[str, Any]) -> dict[str, Any]:
    """Text blocks as they are; image blocks as (mime type, pixel size) — pixels differ by resampler."""
    blocks = []
    for block in result["ok"]["content"]:
        if block["type"] == "image":
            with Image.open(io.BytesIO(base64.b64decode(block["data"]))) as picture:
                blocks.append({"image": block["mimeType"], "size": picture.size})
        else:
            blocks.append(block)
    return {"content": blocks, "details": result["ok"].get("details")}


CASES: list[tuple[str, bytes]] = [
    ("small jpeg", _image("JPEG", 40, 30)),
    ("small webp", _image("WEBP", 16, 16)),
    ("wide png is shrunk", _image("PNG", 3000, 1500)),
    ("tall jpeg is shrunk", _image("JPEG", 900, 2600)),
    ("header only gif is left out", b"GIF89a\x02\x00\x03\x00\x00\x00\x00;"),
    ("truncated png is left out", _image("PNG", 20, 20)[:60]),
]


@pytest.mark.parametrize("data", [c[1] for c in CASES], ids=[c[0] for c in CASES])
async def test_image_reads_match_pi(pi_tools: PiTools, tmp_path: Path, data: bytes) -> None:
    files = {"picture.bin": data}
    pi_root, our_root = tmp_path / "pi", tmp_path / "ours"
    make_tree(pi_root, files)
    make_tree(our_root, files)
    theirs = pi_tools.call("execute", tool="read", cwd=str(pi_root), args={"path": "picture.bin"})
    theirs.pop("updates", None)
    ours = await run_ours("read", {"path": "picture.bin"}, str(our_root))
    assert _shape(ours) == _shape(swap_root(theirs, str(pi_root), str(our_root)))
