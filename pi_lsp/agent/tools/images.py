"""Images for the read tool: the type found by content (as pi's ``file-type`` sniffing), sizes, resizing.

pi sends jpg/png/gif/webp files as image blocks, first shrinking anything larger than
2000×2000 pixels or 4.5 MB of base64. Images already within the limits pass through unchanged
(as in pi). Decoding and shrinking use Pillow (``pip install pi-lsp[images]``; the dev setup has
it). Without Pillow an image within the limits is still sent (its size read from the header),
while a larger one is left out with pi's note — what pi does when its image library is missing.
A picture that cannot be decoded is left out as pi leaves it out. Resized pixels differ from
pi's (another resampler), the sizes, formats and notes do not.
"""

from __future__ import annotations

import base64
import io
import math
import struct
from dataclasses import dataclass

from pi_lsp.agent.tools.truncate import to_fixed

SNIFF_BYTES = 4100
MAX_WIDTH = 2000
MAX_HEIGHT = 2000
MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)
_JPEG_QUALITIES = (80, 85, 70, 55, 40)


def sniff_image_mime(head: bytes) -> str | None:
    """``image/jpeg|png|gif|webp`` when the first bytes say so (APNG and JPEG-LS are not)."""
    if head.startswith(b"GIF"):
        return "image/gif"
    if head.startswith(b"\xff\xd8\xff"):
        return None if head[3:4] == b"\xf7" else "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return _png_kind(head)
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _png_kind(head: bytes) -> str | None:
    """PNG unless an animation chunk comes before the image data, or the header is malformed."""
    pos = 8
    seen_header = False
    while pos + 8 <= len(head):
        length, kind = struct.unpack(">I4s", head[pos : pos + 8])
        if length >= 2**31:
            return None
        if kind == b"IHDR":
            if length != 13:
                return None
            seen_header = True
        elif kind == b"IDAT":
            return "image/png"
        elif kind == b"acTL" or (not seen_header and kind != b"CgBI"):
            return None
        pos += 8 + length + 4
    return "image/png" if seen_header else None


def image_size(data: bytes, mime: str) -> tuple[int, int] | None:
    """(width, height) read from the file's header, or None if it cannot be read."""
    try:
        if mime == "image/png":
            if data[12:16] == b"IHDR":
                width, height = struct.unpack(">II", data[16:24])
                return width, height
            return None
        if mime == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return width, height
        if mime == "image/webp":
            return _webp_size(data)
        if mime == "image/jpeg":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    return None


@dataclass(frozen=True)
class PreparedImage:
    data: str  # base64
    mime_type: str
    original_width: int
    original_height: int
    width: int
    height: int
    was_resized: bool

    def dimension_note(self) -> str | None:
        """pi's note telling the model how to map coordinates back after a resize."""
        if not self.was_resized:
            return None
        scale = self.original_width / self.width
        return (
            f"[Image: original {self.original_width}x{self.original_height}, displayed at "
            f"{self.width}x{self.height}. Multiply coordinates by {to_fixed(scale, 2)} to map to "
            "original image.]"
        )


def prepare_image(raw: bytes, mime: str) -> PreparedImage | None:
    """The image as sent to the model, or None when it cannot be brought within the limits."""
    size = image_size(raw, mime)
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    encoded = base64.b64encode(raw).decode("ascii")
    width, height = size
    if width <= MAX_WIDTH and height <= MAX_HEIGHT and len(encoded) < MAX_BASE64_BYTES:
        if not _decodes(raw):
            return None
        return PreparedImage(encoded, mime, width, height, width, height, False)
    return _shrink(raw, width, height)


def _decodes(raw: bytes) -> bool:
    """pi decodes every image it sends (and leaves out what fails); Pillow, when present, does too."""
    try:
        from PIL import Image
    except ImportError:
        return True
    try:
        with Image.open(io.BytesIO(raw)) as image:
            image.load()
    except Exception:
        return False
    return True


def _shrink(raw: bytes, width: int, height: int) -> PreparedImage | None:
    """pi's strategy: fit 2000×2000, try PNG then JPEG qualities, then 3/4 the size each round."""
    try:
        from PIL import Image, ImageOps
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(raw)) as opened:
            image = ImageOps.exif_transpose(opened)
            image.load()
    except Exception:
        return None
    target_w, target_h = width, height
    if target_w > MAX_WIDTH:
        target_h = _js_round(target_h * MAX_WIDTH / target_w)
        target_w = MAX_WIDTH
    if target_h > MAX_HEIGHT:
        target_w = _js_round(target_w * MAX_HEIGHT / target_h)
        target_h = MAX_HEIGHT
    while True:
        resized = image.resize((target_w, target_h), Image.Resampling.LANCZOS)
        for fmt, quality in [("PNG", 0), *(("JPEG", q) for q in _JPEG_QUALITIES)]:
            buffer = io.BytesIO()
            if fmt == "PNG":
                resized.save(buffer, "PNG")
            else:
                resized.convert("RGB").save(buffer, "JPEG", quality=quality)
            encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
            if len(encoded) < MAX_BASE64_BYTES:
                mime = "image/png" if fmt == "PNG" else "image/jpeg"
                return PreparedImage(encoded, mime, width, height, target_w, target_h, True)
        if target_w == 1 and target_h == 1:
            return None
        next_w = 1 if target_w == 1 else max(1, target_w * 3 // 4)
        next_h = 1 if target_h == 1 else max(1, target_h * 3 // 4)
        if (next_w, next_h) == (target_w, target_h):
            return None
        target_w, target_h = next_w, next_h


def _js_round(value: float) -> int:
    """``Math.round``: halves go up."""
    return math.floor(value + 0.5)
