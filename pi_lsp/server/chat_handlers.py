"""Handlers of the contract's chat methods (agent runs): validate params, call the run service."""

from __future__ import annotations

from typing import Any

from pi_lsp.llm.auth import anthropic_api_key, set_editor_api_key
from pi_lsp.server.context import Context, Handler
from pi_lsp.server.params import Params
from pi_lsp.service.errors import InvalidParams
from pi_lsp.session.validate import image_problem

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


def _images(p: Params) -> list[dict[str, Any]]:
    raw = p.data.get("images")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidParams("images must be an array of {data, mimeType}", {"field": "images"})
    images = []
    for number, image in enumerate(raw):
        field = f"images[{number}]"
        if not isinstance(image, dict):
            raise InvalidParams(f"{field} must be an object {{data, mimeType}}", {"field": field})
        if (problem := image_problem(image)) is not None:
            key, what = problem
            raise InvalidParams(f"{field}.{key} must be {what}", {"field": f"{field}.{key}"})
        images.append({"data": image["data"], "mimeType": image["mimeType"]})
    return images


async def prompt(ctx: Context, p: Params) -> Any:
    text = p.string("text", free_text=True)
    images = _images(p)
    behavior = p.data.get("streamingBehavior")
    if behavior is not None and behavior not in ("steer", "followUp"):
        raise InvalidParams('streamingBehavior must be "steer" or "followUp"', {"field": "streamingBehavior"})
    return await ctx.service.runs.prompt(ctx.client, p.session(), text, images, behavior)


async def abort(ctx: Context, p: Params) -> Any:
    return ctx.service.runs.abort(ctx.client, p.session())


async def clear_queue(ctx: Context, p: Params) -> Any:
    return ctx.service.runs.clear_queue(ctx.client, p.session())


async def get_run_state(ctx: Context, p: Params) -> Any:
    return await ctx.service.runs.run_state(ctx.client, p.session())


async def list_models(ctx: Context, p: Params) -> Any:
    return ctx.service.runs.list_models(ctx.client)


async def set_model(ctx: Context, p: Params) -> Any:
    model_id = p.opt_string("modelId")
    level = p.data.get("thinkingLevel")
    if level is not None and level not in THINKING_LEVELS:
        raise InvalidParams(
            f"thinkingLevel must be one of {', '.join(THINKING_LEVELS)}", {"field": "thinkingLevel"}
        )
    return await ctx.service.runs.set_model(ctx.client, p.session(), model_id, level)


async def get_session_stats(ctx: Context, p: Params) -> Any:
    return await ctx.service.runs.session_stats(ctx.client, p.session())


async def get_commands(ctx: Context, p: Params) -> Any:
    cwd = ctx.service.prompt.request_cwd(ctx.client, p.session(), p.opt_path("cwd"))
    return await ctx.service.runs.get_commands(cwd)


async def bash(ctx: Context, p: Params) -> Any:
    command = p.nonempty_string("command")
    if "\x00" in command:  # no process can be given it
        raise InvalidParams("command must not contain NUL characters", {"field": "command"})
    exclude = p.opt_bool("excludeFromContext", False)
    return await ctx.service.runs.bash(ctx.client, p.session(), command, exclude)


async def set_api_key(ctx: Context, p: Params) -> Any:
    """The editor's key (from its secret store), for this server process, in memory only."""
    key = p.nullable_string("apiKey", required=True)
    if isinstance(key, str) and any(ord(char) < 0x20 or ord(char) == 0x7F for char in key):
        # it goes into an HTTP header; the message never echoes it
        raise InvalidParams("apiKey must not contain control characters", {"field": "apiKey"})
    set_editor_api_key(key if isinstance(key, str) else None)
    return {"hasApiKey": anthropic_api_key() is not None}


CHAT_METHODS: dict[str, Handler] = {
    "pi/prompt": prompt,
    "pi/abort": abort,
    "pi/clearQueue": clear_queue,
    "pi/getRunState": get_run_state,
    "pi/listModels": list_models,
    "pi/setModel": set_model,
    "pi/getSessionStats": get_session_stats,
    "pi/getCommands": get_commands,
    "pi/bash": bash,
    "pi/setApiKey": set_api_key,
}
