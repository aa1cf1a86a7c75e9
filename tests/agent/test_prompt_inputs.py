"""What a client hands in with ``pi/prompt`` (and ``pi/appendEntry``): images the model cannot take
are refused before anything is stored or sent; a prompt holding a lone surrogate is stored as pi
stores it and sent without it, as pi sends it."""

from __future__ import annotations

from typing import Any

import pytest

from pi_lsp.client.rpc_client import RpcError
from tests.agent.chat_support import open_chat, text_turn

PIXEL = "iVBORw0KGgo="  # base64 of PNG's signature: enough for the fake model


BAD_IMAGES: list[tuple[dict[str, Any], str]] = [
    ({"data": "not base64!", "mimeType": "image/png"}, "images[0].data"),
    ({"data": "data:image/png;base64," + PIXEL, "mimeType": "image/png"}, "images[0].data"),
    ({"data": PIXEL[:-1], "mimeType": "image/png"}, "images[0].data"),  # padding cut
    ({"data": PIXEL[:4] + "\n" + PIXEL[4:], "mimeType": "image/png"}, "images[0].data"),
    ({"data": "é" * 4, "mimeType": "image/png"}, "images[0].data"),
    ({"data": PIXEL, "mimeType": "image/svg+xml"}, "images[0].mimeType"),
    ({"data": PIXEL, "mimeType": "text/plain"}, "images[0].mimeType"),
    ({"data": PIXEL, "mimeType": "png"}, "images[0].mimeType"),
]


async def test_images_the_model_cannot_take_are_invalid_params() -> None:
    async for chat in open_chat([text_turn("never")]):
        for image, field in BAD_IMAGES:
            for behavior in (None, "steer", "followUp"):  # idle, and the queued forms' path
                params: dict[str, Any] = {"text": "look", "images": [image]}
                if behavior is not None:
                    params["streamingBehavior"] = behavior
                with pytest.raises(RpcError) as raised:
                    await chat.client.rpc.request("pi/prompt", params)
                assert raised.value.code == -32602 and raised.value.data["field"] == field, image
            block = {"type": "image", **image}
            entry = {"type": "message", "message": {"role": "user", "content": [block]}}
            with pytest.raises(RpcError) as appended:
                await chat.client.rpc.request("pi/appendEntry", {"entry": entry})
            assert appended.value.code == -32602, image
            assert f"content[0].{field.split('.')[1]} must be" in appended.value.message
        assert chat.fake.requests == [] and chat.ws.session_files() == []


async def test_valid_images_are_sent_and_a_lone_surrogate_is_stored_escaped() -> None:
    """The four image types the model takes go through; a prompt holding a lone surrogate is
    written with pi's escape and sent without the surrogate (the API would refuse the body)."""
    async for chat in open_chat([text_turn("Seen.")]):
        for mime_type in ("image/png", "image/jpeg", "image/gif", "image/webp"):
            await chat.prompt("look", images=[{"data": PIXEL, "mimeType": mime_type}])
            sent = chat.fake.requests[-1].body["messages"][-1]["content"]
            assert sent[-1]["source"] == {"type": "base64", "media_type": mime_type, "data": PIXEL}
        await chat.prompt("a\ud800b")
        sent = chat.fake.requests[-1].body["messages"][-1]["content"]
        assert "\ud800" not in str(sent) and "ab" in str(sent)
        user_lines = [
            line for line in chat.ws.session_files()[0].read_bytes().splitlines() if b'"user"' in line
        ]
        assert b'"a\\ud800b"' in user_lines[-1]
