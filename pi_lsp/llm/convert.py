"""pi's agent messages → the ``messages`` array of an Anthropic Messages API request.

Three steps, each as pi 0.73.1 does it:

1. :func:`convert_to_llm` — pi's own roles become plain ones: a user's shell command
   (``bashExecution``), extension messages (``custom``) and branch/compaction summaries become
   user messages; with ``block_images`` every image becomes a fixed sentence.
2. :func:`transform_messages` — aborted and errored assistant replies are left out, replies
   from another model lose their thinking signatures, and tool calls that never got a result get
   a synthetic error result (not stored anywhere, only sent).
3. :func:`convert_messages` — Anthropic's block shapes; consecutive tool results become one user
   message; the last user message carries the conversation cache marker.

Input messages are never modified.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pi_lsp.jscompat import js_stringify, js_trim, js_truthy
from pi_lsp.llm.models import API, PROVIDER, ModelInfo

COMPACTION_SUMMARY_PREFIX: Final = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX: Final = "\n</summary>"
BRANCH_SUMMARY_PREFIX: Final = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX: Final = "</summary>"
IMAGES_BLOCKED_TEXT: Final = "Image reading is disabled."
NO_RESULT_TEXT: Final = "No result provided"
USER_IMAGE_OMITTED: Final = "(image omitted: model does not support images)"
TOOL_IMAGE_OMITTED: Final = "(tool image omitted: model does not support images)"
IMAGE_ONLY_TOOL_TEXT: Final = "(see attached image)"

_LONE_SURROGATE = re.compile(r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_ANY_SURROGATE = re.compile(r"[\ud800-\udfff]")
_TOOL_ID_BAD_CHARS = re.compile(r"[^a-zA-Z0-9_-]")

Message = dict[str, Any]


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (they make the request body invalid JSON for the API).

    Most text has none: an ASCII string is known as such without a scan, and a plain search for
    any surrogate is several times cheaper than the pairing pattern, which runs only after a hit."""
    if text.isascii() or _ANY_SURROGATE.search(text) is None:
        return text
    return _LONE_SURROGATE.sub("", text)


# ---------------------------------------------------------------------------------------------
# 1. pi's roles → user / assistant / toolResult


def _js_string(value: Any) -> str:
    """``${value}`` in a JavaScript template literal."""
    if value is None:
        return "undefined"
    if isinstance(value, bool | int | float):
        return js_stringify(value) or ""
    return str(value)


def bash_execution_text(message: Mapping[str, Any]) -> str:
    """The user-message text pi makes of a user's ``!command`` and its output."""
    text = f"Ran `{_js_string(message.get('command'))}`\n"
    output = message.get("output")
    text += f"```\n{_js_string(output)}\n```" if js_truthy(output) else "(no output)"
    exit_code = message.get("exitCode")
    if js_truthy(message.get("cancelled")):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {_js_string(exit_code)}"
    if js_truthy(message.get("truncated")) and js_truthy(message.get("fullOutputPath")):
        text += f"\n\n[Output truncated. Full output: {_js_string(message.get('fullOutputPath'))}]"
    return text


def _user(content: Any, timestamp: Any) -> Message:
    return {"role": "user", "content": content, "timestamp": timestamp}


def _as_user_message(message: Mapping[str, Any]) -> Message | None:
    role = message.get("role")
    timestamp = message.get("timestamp")
    if role in ("user", "assistant", "toolResult"):
        return dict(message)
    if role == "bashExecution":
        if js_truthy(message.get("excludeFromContext")):
            return None
        return _user([{"type": "text", "text": bash_execution_text(message)}], timestamp)
    if role == "custom":
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        return _user(content, timestamp)
    if role == "branchSummary":
        text = BRANCH_SUMMARY_PREFIX + str(message.get("summary")) + BRANCH_SUMMARY_SUFFIX
        return _user([{"type": "text", "text": text}], timestamp)
    if role == "compactionSummary":
        text = COMPACTION_SUMMARY_PREFIX + str(message.get("summary")) + COMPACTION_SUMMARY_SUFFIX
        return _user([{"type": "text", "text": text}], timestamp)
    return None


def _without_images(content: list[Any]) -> list[Any]:
    replaced = [
        {"type": "text", "text": IMAGES_BLOCKED_TEXT} if _is_image(block) else block for block in content
    ]
    kept: list[Any] = []
    for block in replaced:
        if _is_blocked_text(block) and kept and _is_blocked_text(kept[-1]):
            continue
        kept.append(block)
    return kept


def _is_blocked_text(block: Any) -> bool:
    return (
        isinstance(block, dict) and block.get("type") == "text" and block.get("text") == IMAGES_BLOCKED_TEXT
    )


def _is_image(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "image"


def convert_to_llm(messages: Iterable[Mapping[str, Any]], *, block_images: bool = False) -> list[Message]:
    """pi's ``convertToLlm`` (plus its ``blockImages`` setting)."""
    converted = [m for m in (_as_user_message(message) for message in messages) if m is not None]
    if not block_images:
        return converted
    result = []
    for message in converted:
        content = message.get("content")
        if (
            message.get("role") in ("user", "toolResult")
            and isinstance(content, list)
            and any(_is_image(block) for block in content)
        ):
            message = {**message, "content": _without_images(content)}
        result.append(message)
    return result


# ---------------------------------------------------------------------------------------------
# 2. transformMessages


def _placeholder_images(content: list[Any], placeholder: str) -> list[Any]:
    result: list[Any] = []
    previous_was_placeholder = False
    for block in content:
        if _is_image(block):
            if not previous_was_placeholder:
                result.append({"type": "text", "text": placeholder})
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = isinstance(block, dict) and block.get("text") == placeholder
    return result


def _downgrade_images(messages: list[Message], model: ModelInfo) -> list[Message]:
    if model.supports_images:
        return messages
    result = []
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "user" and isinstance(content, list):
            message = {**message, "content": _placeholder_images(content, USER_IMAGE_OMITTED)}
        elif role == "toolResult" and isinstance(content, list):
            message = {**message, "content": _placeholder_images(content, TOOL_IMAGE_OMITTED)}
        result.append(message)
    return result


def normalize_tool_call_id(tool_call_id: str) -> str:
    """Anthropic accepts ``[a-zA-Z0-9_-]{1,64}`` only."""
    return _TOOL_ID_BAD_CHARS.sub("_", tool_call_id)[:64]


def _foreign_block(block: Any, same_model: bool, id_map: dict[str, str]) -> list[Any]:
    """One assistant block as pi rewrites it for the current model."""
    if not isinstance(block, dict):
        return [block]
    kind = block.get("type")
    if kind == "thinking":
        if js_truthy(block.get("redacted")):
            return [block] if same_model else []
        if same_model and js_truthy(block.get("thinkingSignature")):
            return [block]
        thinking = block.get("thinking")
        if not js_truthy(thinking) or js_trim(str(thinking)) == "":
            return []
        return [block] if same_model else [{"type": "text", "text": thinking}]
    if kind == "text":
        return [block] if same_model else [{"type": "text", "text": block.get("text")}]
    if kind == "toolCall" and not same_model:
        call = dict(block)
        call.pop("thoughtSignature", None)
        original = str(block.get("id"))
        normalized = normalize_tool_call_id(original)
        if normalized != original:
            id_map[original] = normalized
            call["id"] = normalized
        return [call]
    return [block]


def transform_messages(messages: Sequence[Message], model: ModelInfo) -> list[Message]:
    """pi's ``transformMessages`` for the Anthropic provider."""
    id_map: dict[str, str] = {}
    transformed: list[Message] = []
    for message in _downgrade_images(list(messages), model):
        role = message.get("role")
        if role == "toolResult":
            normalized = id_map.get(str(message.get("toolCallId")))
            if normalized and normalized != message.get("toolCallId"):
                message = {**message, "toolCallId": normalized}
        elif role == "assistant":
            same_model = (
                message.get("provider") == PROVIDER
                and message.get("api") == API
                and message.get("model") == model.id
            )
            content = [
                out
                for block in message.get("content") or []
                for out in _foreign_block(block, same_model, id_map)
            ]
            message = {**message, "content": content}
        transformed.append(message)
    return _fill_orphaned_tool_calls(transformed)


def _fill_orphaned_tool_calls(messages: list[Message]) -> list[Message]:
    result: list[Message] = []
    pending: list[dict[str, Any]] = []
    answered: set[str] = set()

    def flush() -> None:
        nonlocal pending, answered
        for call in pending:
            if call.get("id") not in answered:
                result.append({
                    "role": "toolResult",
                    "toolCallId": call.get("id"),
                    "toolName": call.get("name"),
                    "content": [{"type": "text", "text": NO_RESULT_TEXT}],
                    "isError": True,
                })  # fmt: skip
        pending, answered = [], set()

    for message in messages:
        role = message.get("role")
        if role == "assistant":
            flush()
            if message.get("stopReason") in ("error", "aborted"):
                continue
            calls = [
                b for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            if calls:
                pending, answered = calls, set()
            result.append(message)
        elif role == "toolResult":
            answered.add(str(message.get("toolCallId")))
            result.append(message)
        elif role == "user":
            flush()
            result.append(message)
        else:
            result.append(message)
    flush()
    return result


# ---------------------------------------------------------------------------------------------
# 3. convertMessages


def _image_block(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.get("mimeType"), "data": block.get("data")},
    }


def _tool_result_content(content: list[Any]) -> str | list[dict[str, Any]]:
    if not any(_is_image(block) for block in content):
        return sanitize_surrogates("\n".join(str(block.get("text")) for block in content))
    blocks = [
        {"type": "text", "text": sanitize_surrogates(str(block.get("text")))}
        if block.get("type") == "text"
        else _image_block(block)
        for block in content
    ]
    if not any(block["type"] == "text" for block in blocks):
        blocks.insert(0, {"type": "text", "text": IMAGE_ONLY_TOOL_TEXT})
    return blocks


def _tool_result_block(message: Message) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.get("toolCallId"),
        "content": _tool_result_content(message.get("content") or []),
    }
    if message.get("isError") is not None:
        block["is_error"] = message["isError"]
    return block


def _user_param(message: Message) -> dict[str, Any] | None:
    content = message.get("content")
    if isinstance(content, str):
        if not js_trim(content):
            return None
        return {"role": "user", "content": sanitize_surrogates(content)}
    blocks = []
    for item in content or []:
        if item.get("type") == "text":
            text = sanitize_surrogates(str(item.get("text")))
            if js_trim(text):
                blocks.append({"type": "text", "text": text})
        else:
            blocks.append(_image_block(item))
    return {"role": "user", "content": blocks} if blocks else None


def _assistant_param(message: Message) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text"))
            if js_trim(text):
                blocks.append({"type": "text", "text": sanitize_surrogates(text)})
        elif kind == "thinking":
            if js_truthy(block.get("redacted")):
                blocks.append({"type": "redacted_thinking", "data": block.get("thinkingSignature")})
                continue
            thinking = str(block.get("thinking"))
            if not js_trim(thinking):
                continue
            signature = block.get("thinkingSignature")
            if not js_truthy(signature) or not js_trim(str(signature)):
                blocks.append({"type": "text", "text": sanitize_surrogates(thinking)})
            else:
                blocks.append(
                    {"type": "thinking", "thinking": sanitize_surrogates(thinking), "signature": signature}
                )
        elif kind == "toolCall":
            arguments = block.get("arguments")
            blocks.append({
                "type": "tool_use",
                "id": block.get("id"),
                "name": block.get("name"),
                "input": arguments if arguments is not None else {},
            })  # fmt: skip
    return {"role": "assistant", "content": blocks} if blocks else None


def convert_messages(
    messages: Sequence[Message], model: ModelInfo, cache_control: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """pi's ``convertMessages``: the request's ``messages``, cache marker on the last user message."""
    transformed = transform_messages(messages, model)
    params: list[dict[str, Any]] = []
    index = 0
    while index < len(transformed):
        message = transformed[index]
        role = message.get("role")
        param: dict[str, Any] | None = None
        if role == "user":
            param = _user_param(message)
        elif role == "assistant":
            param = _assistant_param(message)
        elif role == "toolResult":
            results = [_tool_result_block(message)]
            while index + 1 < len(transformed) and transformed[index + 1].get("role") == "toolResult":
                index += 1
                results.append(_tool_result_block(transformed[index]))
            param = {"role": "user", "content": results}
        if param is not None:
            params.append(param)
        index += 1
    if cache_control and params and params[-1]["role"] == "user":
        last = params[-1]
        if isinstance(last["content"], list):
            block = last["content"][-1] if last["content"] else None
            if block is not None and block.get("type") in ("text", "image", "tool_result"):
                block["cache_control"] = dict(cache_control)
        elif isinstance(last["content"], str):
            last["content"] = [
                {"type": "text", "text": last["content"], "cache_control": dict(cache_control)}
            ]
    return params
