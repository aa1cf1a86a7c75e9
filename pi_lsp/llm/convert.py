"""pi's agent messages → the ``messages`` array of an Anthropic Messages API request.

Three steps, each as pi 0.73.1 does it:

1. :func:`convert_to_llm` — pi's own roles become plain ones: a user's shell command
   (``bashExecution``), extension messages (``custom``) and branch/compaction summaries become
   user messages; with ``block_images`` every image becomes a fixed sentence.
2. pi's ``transformMessages`` — aborted and errored assistant replies are left out, replies
   from another model lose their thinking signatures, and tool calls that never got a result get
   a synthetic error result (not stored anywhere, only sent).
3. pi's ``convertMessages`` — Anthropic's block shapes; consecutive tool results become one user
   message; the last user message carries the conversation cache marker.

:func:`request_messages` does all three. What each message becomes on its own is worked out once
(:func:`convert_one`), and kept in a :class:`ConversionCache` under the caller's key when the
message cannot change (a stored entry): a request then converts only what is new since the last
one, and only the steps that look across messages (tool-call ids renamed for another model,
orphaned tool calls, merged tool results, the cache marker) run over the whole history.

Input messages are never modified; neither are the cached conversions (the request gets copies
where it differs from them).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
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


def _rewrite_assistant(message: Message, model: ModelInfo, id_map: dict[str, str]) -> Message:
    """An assistant message as pi rewrites it for ``model`` (``id_map`` gets the renamed call ids)."""
    same_model = (
        message.get("provider") == PROVIDER and message.get("api") == API and message.get("model") == model.id
    )
    content = [
        out for block in message.get("content") or [] for out in _foreign_block(block, same_model, id_map)
    ]
    return {**message, "content": content}


def _tool_calls(message: Message) -> tuple[dict[str, Any], ...]:
    """The tool calls of an assistant message, in order."""
    return tuple(
        block
        for block in message.get("content") or []
        if isinstance(block, dict) and block.get("type") == "toolCall"
    )


def _orphan_result(call: dict[str, Any]) -> Message:
    """pi's stand-in result for a tool call that got none before the next user or assistant turn."""
    return {
        "role": "toolResult",
        "toolCallId": call.get("id"),
        "toolName": call.get("name"),
        "content": [{"type": "text", "text": NO_RESULT_TEXT}],
        "isError": True,
    }


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


@dataclass(frozen=True, slots=True)
class Converted:
    """One message through the three steps on its own: ``message`` as the steps that look across
    messages need it (None: left out of the request), ``fragment`` its Anthropic form (a message
    param, or a ``tool_result`` block; None: nothing to send) and the tool-call ids it renamed."""

    message: Message | None
    fragment: dict[str, Any] | None
    renamed: tuple[tuple[str, str], ...] = ()
    calls: tuple[dict[str, Any], ...] = ()
    """An assistant message's tool calls (each needs a result before the next user turn)."""


def convert_one(message: Mapping[str, Any], model: ModelInfo, *, block_images: bool = False) -> Converted:
    """What ``message`` becomes in a request to ``model``, apart from its neighbours."""
    converted = convert_to_llm([message], block_images=block_images)
    if not converted:
        return Converted(None, None)
    (llm,) = _downgrade_images(converted, model)
    role = llm.get("role")
    if role == "user":
        return Converted(llm, _user_param(llm))
    if role == "assistant":
        id_map: dict[str, str] = {}
        rewritten = _rewrite_assistant(llm, model, id_map)
        return Converted(
            rewritten, _assistant_param(rewritten), tuple(id_map.items()), _tool_calls(rewritten)
        )
    if role == "toolResult":
        return Converted(llm, _tool_result_block(llm))
    return Converted(llm, None)


class ConversionCache:
    """:class:`Converted` messages under the caller's key (a stored entry: it never changes) and
    the model's, least recently used dropped beyond ``budget`` (characters of text, roughly the
    bytes they hold). One thread at a time."""

    def __init__(self, budget: int = 64 << 20) -> None:
        self.budget = budget
        self.size = 0
        self._items: OrderedDict[tuple[Hashable, str, bool, bool], tuple[Converted, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def convert(
        self, key: Hashable, message: Mapping[str, Any], model: ModelInfo, block_images: bool
    ) -> Converted:
        """``convert_one(message)``, from the cache when ``key`` was converted for this model before."""
        slot = (key, model.id, model.supports_images, block_images)
        found = self._items.get(slot)
        if found is not None:
            self._items.move_to_end(slot)
            return found[0]
        converted = convert_one(message, model, block_images=block_images)
        weight = _weight(converted.fragment)
        self._items[slot] = (converted, weight)
        self.size += weight
        while self.size > self.budget and len(self._items) > 1:
            _, (_, dropped) = self._items.popitem(last=False)
            self.size -= dropped
        return converted


def _weight(value: Any) -> int:
    """About how much memory a fragment holds: its strings' lengths, 16 per anything else."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(key) + _weight(item) for key, item in value.items())
    if isinstance(value, list):
        return 16 + sum(_weight(item) for item in value)
    return 16


def request_messages(
    messages: Sequence[Mapping[str, Any]],
    model: ModelInfo,
    cache_control: dict[str, Any] | None,
    *,
    block_images: bool = False,
    keys: Sequence[Hashable | None] | None = None,
    cache: ConversionCache | None = None,
) -> list[dict[str, Any]]:
    """pi's ``convertToLlm``, ``transformMessages`` and ``convertMessages``: the request's
    ``messages``. ``keys[i]``, when given and not None, names ``messages[i]`` in ``cache``."""
    converted = [
        cache.convert(keys[index], message, model, block_images)
        if cache is not None and keys is not None and keys[index] is not None
        else convert_one(message, model, block_images=block_images)
        for index, message in enumerate(messages)
    ]
    return _assemble(converted, cache_control)


def _assemble(converted: Sequence[Converted], cache_control: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The steps that look across messages, over messages converted one by one, in one pass:
    tool-result ids renamed as their calls were, a synthetic error result for every call left
    unanswered (:func:`_fill_orphaned_tool_calls`), errored or aborted assistant messages left
    out, and each run of tool results joined into one user message."""
    id_map: dict[str, str] = {}
    params: list[dict[str, Any]] = []
    results: list[Any] | None = None  # the content of the user message the open run of results fills
    pending: list[dict[str, Any]] = []  # the tool calls of the last assistant message kept
    answered: set[str] = set()

    def add_result(block: dict[str, Any] | None) -> None:
        nonlocal results
        if results is None:
            results = []
            params.append({"role": "user", "content": results})
        results.append(block)

    def fill_orphans() -> None:
        nonlocal pending, answered
        for call in pending:
            if call.get("id") not in answered:
                add_result(_tool_result_block(_orphan_result(call)))
        pending, answered = [], set()

    for item in converted:
        message, fragment = item.message, item.fragment
        if message is None:
            continue
        role = message.get("role")
        if role == "toolResult":
            call_id = message.get("toolCallId")
            normalized = id_map.get(str(call_id))
            if normalized and normalized != call_id:
                call_id = normalized
                fragment = {**fragment, "tool_use_id": normalized} if fragment is not None else None
            answered.add(str(call_id))
            add_result(fragment)
            continue
        if role == "assistant":
            id_map.update(item.renamed)
            fill_orphans()
            if message.get("stopReason") in ("error", "aborted"):
                continue  # left out: a run of results around it stays one message
            pending = list(item.calls)
        elif role == "user":
            fill_orphans()
        results = None
        if fragment is not None and role in ("user", "assistant"):
            params.append(fragment)
    fill_orphans()
    if cache_control and params and params[-1]["role"] == "user":
        _mark_last(params, cache_control)
    return params


def _mark_last(params: list[dict[str, Any]], cache_control: dict[str, Any]) -> None:
    """The conversation cache marker on the last user message's last block, on copies (the
    message and the block may be cached conversions)."""
    last = params[-1] = dict(params[-1])
    content = last["content"]
    if isinstance(content, list):
        block = content[-1] if content else None
        if block is not None and block.get("type") in ("text", "image", "tool_result"):
            last["content"] = [*content[:-1], {**block, "cache_control": dict(cache_control)}]
    elif isinstance(content, str):
        last["content"] = [{"type": "text", "text": content, "cache_control": dict(cache_control)}]
