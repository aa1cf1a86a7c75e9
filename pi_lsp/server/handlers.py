"""One function per protocol method: validate params, call the service, return plain JSON.

No domain logic lives here. Every handler receives the raw params (a dict, or ``None`` when the
request had none) wrapped in :class:`Params`, and the per-connection :class:`Context`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pi_lsp.protocol import METHOD_NAMES, PROTOCOL_VERSION
from pi_lsp.server.chat_handlers import CHAT_METHODS
from pi_lsp.server.context import Context, Handler
from pi_lsp.server.params import Params, check_file_name_part, check_no_lone_surrogate
from pi_lsp.service import entries as ops
from pi_lsp.service.errors import InvalidParams
from pi_lsp.service.progress import Progress

# ------------------------------------------------------------------------------ Sessions


async def new_session(ctx: Context, p: Params) -> Any:
    return await ctx.service.sessions.new_session(
        ctx.client,
        cwd=p.opt_path("cwd"),
        session_dir=p.opt_path("sessionDir"),
        parent_session=p.opt_path("parentSession"),
        session_id=_new_session_id(p),
        persist=p.opt_bool("persist", True),
    )


async def open_session(ctx: Context, p: Params) -> Any:
    return await ctx.service.sessions.open_session(ctx.client, p.path("path"))


async def continue_recent(ctx: Context, p: Params) -> Any:
    return await ctx.service.sessions.continue_recent(ctx.client, p.opt_path("cwd"))


async def list_sessions(ctx: Context, p: Params) -> Any:
    return await ctx.service.sessions.list_sessions(
        ctx.client,
        cwd=p.opt_path("cwd"),
        all_projects=p.opt_bool("all", False),
        query=p.opt_string("query", free_text=True),
        limit=p.opt_int("limit"),
    )


async def fork_session(ctx: Context, p: Params) -> Any:
    source = p.path("sourcePath")
    return await ctx.service.sessions.fork_session(ctx.client, source, p.opt_path("cwd"))


async def branch_to_new_session(ctx: Context, p: Params) -> Any:
    return await ctx.service.sessions.branch_to_new_session(ctx.client, p.session(), p.string("entryId"))


async def get_session_state(ctx: Context, p: Params) -> Any:
    return await ctx.service.sessions.get_state(ctx.client, p.session())


async def close_session(ctx: Context, p: Params) -> Any:
    return await ctx.service.sessions.close_session(ctx.client, p.session())


# ------------------------------------------------------------------------------ Entries and the tree


async def append_entry(ctx: Context, p: Params) -> Any:
    entry = p.obj("entry")
    return await ctx.service.sessions.append_entry(ctx.client, p.session(), entry)


async def get_entry(ctx: Context, p: Params) -> Any:
    return await ctx.service.host.call(ctx.client, p.session(), ops.get_entry, p.string("id"), writes=False)


async def get_entries(ctx: Context, p: Params) -> Any:
    offset, limit = ops.page_bounds(p.opt_int("offset"), p.opt_int("limit"))
    return await ctx.service.host.call(ctx.client, p.session(), ops.get_entries, offset, limit, writes=False)


async def get_branch(ctx: Context, p: Params) -> Any:
    from_id = p.nullable_string("fromId")
    limit, before_id = p.opt_int("limit", minimum=1), p.opt_string("beforeId")
    return await ctx.service.host.call(
        ctx.client, p.session(), ops.get_branch, from_id, limit, before_id, writes=False
    )


async def get_tree(ctx: Context, p: Params) -> Any:
    flat = p.opt_choice("format", ("nested", "flat"), "nested") == "flat"
    parent_id, fold = p.nullable_string("parentId"), p.opt_bool("fold", False)
    return await ctx.service.host.call(
        ctx.client, p.session(), ops.get_tree, flat, parent_id, fold, writes=False
    )


async def set_leaf(ctx: Context, p: Params) -> Any:
    entry_id = p.nullable_string("id", required=True)

    async def move() -> Any:
        return await ctx.service.host.call(ctx.client, p.session(), ops.set_leaf, entry_id, writes=True)

    return await _restoring(ctx, p, move)


async def navigate(ctx: Context, p: Params) -> Any:
    target = p.string("targetId")
    summarize = p.opt_bool("summarize", False)
    instructions = p.opt_string("customInstructions", free_text=True)
    replace = p.opt_bool("replaceInstructions", False)
    label = p.opt_string("label", free_text=True)

    async def move() -> Any:
        if summarize:
            await ctx.service.build_off_loop(ctx.service.lazy.branch_summary)
            return await ctx.service.branch_summary.navigate_with_summary(
                ctx.client, p.session(), target, instructions, replace, label
            )
        return await ctx.service.host.call(ctx.client, p.session(), ops.navigate, target, label, writes=True)

    return await _restoring(ctx, p, move)


async def _restoring(ctx: Context, p: Params, move: Callable[[], Awaitable[Any]]) -> Any:
    """``restoreFiles`` / ``force`` of ``pi/navigate`` and ``pi/setLeaf``: the move, then the restore."""
    force = p.opt_bool("force", False)
    if not p.opt_bool("restoreFiles", False):
        return await move()
    return await ctx.service.checkpoints.moving(ctx.client, p.session(), move, force)


async def set_label(ctx: Context, p: Params) -> Any:
    target = p.string("targetId")
    label = p.nullable_string("label", free_text=True)
    return await ctx.service.host.call(
        ctx.client, p.session(), ops.set_label, target, label if isinstance(label, str) else None, writes=True
    )


async def set_session_name(ctx: Context, p: Params) -> Any:
    return await ctx.service.host.call(
        ctx.client, p.session(), ops.set_session_name, p.string("name", free_text=True), writes=True
    )


# ------------------------------------------------------------------------------ Checkpoints


async def preview_restore(ctx: Context, p: Params) -> Any:
    return await ctx.service.checkpoints.preview_restore(
        ctx.client, p.session(), p.string("targetId"), p.opt_string_list("paths"), p.opt_bool("diff", False)
    )


async def restore_files(ctx: Context, p: Params) -> Any:
    return await ctx.service.checkpoints.restore_files(
        ctx.client, p.session(), p.string("targetId"), p.opt_string_list("paths"), p.opt_bool("force", False)
    )


async def undo_restore(ctx: Context, p: Params) -> Any:
    return await ctx.service.checkpoints.undo_restore(ctx.client, p.session(), p.nonempty_string("undoId"))


async def get_changes(ctx: Context, p: Params) -> Any:
    return await ctx.service.checkpoints.get_changes(
        ctx.client,
        p.session(),
        p.opt_string("fromId"),
        p.opt_string("toId"),
        p.opt_string_list("paths"),
        p.opt_bool("diff", False),
    )


# ------------------------------------------------------------------------------ Context


async def build_context(ctx: Context, p: Params) -> Any:
    return await ctx.service.sessions.build_context(ctx.client, p.session(), p.nullable_string("leafId"))


# ------------------------------------------------------------------------------ Compaction


async def prepare_compaction(ctx: Context, p: Params) -> Any:
    keep = p.opt_int("keepRecentTokens")
    await ctx.service.build_off_loop(ctx.service.lazy.compaction)
    return await ctx.service.compaction.prepare(ctx.client, p.session(), keep)


async def compact(ctx: Context, p: Params) -> Any:
    instructions = p.opt_string("customInstructions", free_text=True)
    token = p.data.get("workDoneToken")
    if token is not None and (not isinstance(token, str | int) or isinstance(token, bool)):
        raise InvalidParams("workDoneToken must be a string or an integer", {"field": "workDoneToken"})
    if isinstance(token, str):
        check_no_lone_surrogate("workDoneToken", token)
    progress = Progress(ctx.client, token)
    await ctx.service.build_off_loop(ctx.service.lazy.compaction)
    return await ctx.service.compaction.compact(ctx.client, p.session(), instructions, progress)


# ------------------------------------------------------------------------------ System prompt


async def get_system_prompt(ctx: Context, p: Params) -> Any:
    prompt = ctx.service.prompt
    cwd = prompt.request_cwd(ctx.client, p.session(), p.opt_path("cwd"))
    return await prompt.get_system_prompt(
        ctx.client,
        cwd,
        tools=p.opt_string_list("tools"),
        custom_prompt=p.opt_string("customPrompt", free_text=True),
        append_prompt=p.opt_string("appendPrompt", free_text=True),
    )


async def list_skills(ctx: Context, p: Params) -> Any:
    cwd = p.opt_path("cwd")  # default: the first workspace folder (not the active session's cwd)
    where = ctx.client.resolve_path(cwd) if cwd is not None else ctx.client.default_cwd
    return await ctx.service.prompt.list_skills(ctx.client, where)


async def get_server_status(ctx: Context, p: Params) -> Any:
    from pi_lsp.service.status import server_status  # imports the LLM package: on first use

    watching = await ctx.service.prompt.watch_status(ctx.client)
    return await server_status(ctx.client.settings, watching, PROTOCOL_VERSION)


def _new_session_id(p: Params) -> str | None:
    """``id`` of pi/newSession: it becomes part of the session's file name."""
    value = p.opt_string("id")
    if value == "":
        raise InvalidParams("id must be a non-empty string", {"field": "id"})
    if value is not None:
        check_file_name_part("id", value)
    return value


METHODS: dict[str, Handler] = {
    "pi/newSession": new_session,
    "pi/openSession": open_session,
    "pi/continueRecent": continue_recent,
    "pi/listSessions": list_sessions,
    "pi/forkSession": fork_session,
    "pi/branchToNewSession": branch_to_new_session,
    "pi/getSessionState": get_session_state,
    "pi/closeSession": close_session,
    "pi/appendEntry": append_entry,
    "pi/getEntry": get_entry,
    "pi/getEntries": get_entries,
    "pi/getBranch": get_branch,
    "pi/getTree": get_tree,
    "pi/setLeaf": set_leaf,
    "pi/navigate": navigate,
    "pi/setLabel": set_label,
    "pi/setSessionName": set_session_name,
    "pi/buildContext": build_context,
    "pi/prepareCompaction": prepare_compaction,
    "pi/compact": compact,
    "pi/getSystemPrompt": get_system_prompt,
    "pi/listSkills": list_skills,
    **CHAT_METHODS,
    "pi/previewRestore": preview_restore,
    "pi/restoreFiles": restore_files,
    "pi/undoRestore": undo_restore,
    "pi/getChanges": get_changes,
    "pi/getServerStatus": get_server_status,
}


def undeclared_and_unhandled() -> tuple[list[str], list[str]]:
    """Handlers for methods the protocol source does not declare, and declared methods without one."""
    return [m for m in METHODS if m not in METHOD_NAMES], [m for m in METHOD_NAMES if m not in METHODS]


# A server whose table and protocol source disagree never starts (tests/server/test_method_table.py says how).
assert undeclared_and_unhandled() == ([], []), (
    "server/handlers.py METHODS and pi_lsp/protocol/methods.py differ"
)
