"""Handlers of the contract's chat methods (agent runs): validate params, call the run service."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pi_lsp.llm.auth import anthropic_api_key, set_editor_api_key
from pi_lsp.protocol.enums import STREAMING_BEHAVIOR, THINKING_LEVELS
from pi_lsp.server.context import Context, Handler
from pi_lsp.server.params import Params
from pi_lsp.service.errors import InvalidParams
from pi_lsp.session.validate import image_problem

if TYPE_CHECKING:
    from pi_lsp.service.runs import RunService


async def _runs(ctx: Context) -> RunService:
    """The run service, built in a worker on a fresh server's first chat request (seconds of
    imports); requests meanwhile are answered, and chat requests go on in the order they came."""
    await ctx.service.build_off_loop(ctx.service.lazy.runs)
    return ctx.service.runs


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
    if behavior is not None and behavior not in STREAMING_BEHAVIOR.values:
        raise InvalidParams('streamingBehavior must be "steer" or "followUp"', {"field": "streamingBehavior"})
    if ctx.service.lazy.runs.built is not None:
        return await ctx.service.runs.prompt(ctx.client, p.session(), text, images, behavior)
    cancelled = False
    while True:  # a $/cancelRequest during the build still gets the run, aborted, as its answer
        try:
            runs = await _runs(ctx)
            break
        except asyncio.CancelledError:
            cancelled = True
    if not cancelled:  # admitted before any await, ahead of a pi/abort that waited behind it
        return await runs.prompt(ctx.client, p.session(), text, images, behavior)
    run = asyncio.ensure_future(runs.prompt(ctx.client, p.session(), text, images, behavior))
    await asyncio.sleep(0)  # the run is admitted in its first step
    run.cancel()  # what a cancel during the preparation does: the run ends aborted
    return await run


async def abort(ctx: Context, p: Params) -> Any:
    return (await _runs(ctx)).abort(ctx.client, p.session())


async def clear_queue(ctx: Context, p: Params) -> Any:
    return (await _runs(ctx)).clear_queue(ctx.client, p.session())


async def get_run_state(ctx: Context, p: Params) -> Any:
    return await (await _runs(ctx)).run_state(ctx.client, p.session())


async def list_models(ctx: Context, p: Params) -> Any:
    return (await _runs(ctx)).list_models(ctx.client)


async def set_model(ctx: Context, p: Params) -> Any:
    model_id = p.opt_string("modelId")
    level = p.data.get("thinkingLevel")
    if level is not None and level not in THINKING_LEVELS:
        raise InvalidParams(
            f"thinkingLevel must be one of {', '.join(THINKING_LEVELS)}", {"field": "thinkingLevel"}
        )
    return await (await _runs(ctx)).set_model(ctx.client, p.session(), model_id, level)


async def get_session_stats(ctx: Context, p: Params) -> Any:
    return await (await _runs(ctx)).session_stats(ctx.client, p.session())


async def get_commands(ctx: Context, p: Params) -> Any:
    cwd = ctx.service.prompt.request_cwd(ctx.client, p.session(), p.opt_path("cwd"))
    return await (await _runs(ctx)).get_commands(cwd)


async def bash(ctx: Context, p: Params) -> Any:
    command = p.nonempty_string("command")
    if "\x00" in command:  # no process can be given it
        raise InvalidParams("command must not contain NUL characters", {"field": "command"})
    exclude = p.opt_bool("excludeFromContext", False)
    return await (await _runs(ctx)).bash(ctx.client, p.session(), command, exclude)


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
