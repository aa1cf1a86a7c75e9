"""The ACP methods, on the language server's own services (``service/build.py`` builds them).

Each ACP session is a pi session (``sessionId`` = the file's session id) held by a
:class:`~pi_lsp.service.registry.Client` of its own: its settings (with the session's mode as the
approval policy), its ``pi/event`` sink (made into ``session/update``s by :mod:`.updates`) and its
approval requests (asked as ``session/request_permission`` by :mod:`.permissions`). Runs, tools,
approvals, checkpoints, compaction and the system prompt are the services' (``pi/prompt`` is
``session/prompt``); this module only translates.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from typing import Any

from pi_lsp import __version__
from pi_lsp.acp import params as p
from pi_lsp.acp import session_list
from pi_lsp.acp.commands import BUILTIN_COMMANDS, builtin_command, session_summary
from pi_lsp.acp.connection import Connection, RemoteError
from pi_lsp.acp.live import LiveFeed, LiveUpdates
from pi_lsp.acp.permissions import ask_permission
from pi_lsp.acp.replay import replay_updates
from pi_lsp.acp.updates import UpdateStream, chunk
from pi_lsp.agent.approval_modes import APPROVAL_MODES
from pi_lsp.llm.models import find_model
from pi_lsp.protocol.enums import THINKING_LEVELS
from pi_lsp.service import entries as ops
from pi_lsp.service.build import PiService
from pi_lsp.service.errors import InvalidParams, ModelError, PiError, SessionBusy, SessionNotFound
from pi_lsp.service.registry import Client
from pi_lsp.service.settings import Settings

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "aborted": "cancelled", "toolUse": "end_turn"}
MODES = {
    "ask": ("Ask", "Ask before every edit, write and command"),
    "acceptEdits": ("Accept edits", "Edits and writes in the workspace go ahead; commands are asked"),
    "auto": ("Auto", "Nothing is asked"),
}
MODEL_OPTION, THINKING_OPTION = "model", "thinking_level"
FS_TIMEOUT = 10.0
"""Seconds a tool waits for the client's ``fs/read_text_file`` before it reads the disk."""


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass(eq=False)
class AcpSession:
    """One ACP session: its own registry client, its update stream, what the user always rejects."""

    client: Client
    stream: UpdateStream
    session_id: str = ""
    rejected: set[str] = field(default_factory=set)  # tools answered reject_always
    name: str | None = None
    feed: LiveFeed = field(default_factory=lambda: LiveFeed(""))  # other processes' entries


class AcpAgent:
    """The handler tables of one ACP connection (:meth:`requests`, :meth:`notifications`)."""

    def __init__(self, service: PiService) -> None:
        self.service = service
        self.connection: Connection | None = None
        self.sessions: dict[str, AcpSession] = {}
        self.base = Client(settings=Settings(os.getcwd(), load=False))  # session/list, before a session
        self.client_capabilities: dict[str, Any] = {}
        service.connect(self.base)
        self._background: set[asyncio.Task[Any]] = set()
        self.live = LiveUpdates(service.host, self.update)

    def requests(self) -> dict[str, Any]:
        return {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/resume": self.resume_session,
            "session/list": self.list_sessions,
            "session/close": self.close_session,
            "session/prompt": self.prompt,
            "session/set_mode": self.set_mode,
            "session/set_config_option": self.set_config_option,
        }

    def notifications(self) -> dict[str, Any]:
        return {"session/cancel": self.cancel}

    # ------------------------------------------------------------------ sending

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        assert self.connection is not None
        self.connection.notify("session/update", {"sessionId": session_id, "update": update})

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        """A service's notification to one of our session clients, as ACP updates."""
        session_id = params.get("sessionId")
        held = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if held is None:
            return
        if method == "pi/event":
            held.stream.on_event(params.get("event") or {})
        elif method == "pi/sessionChanged":
            self._name_changed(held)
            appended = params.get("appendedIds")
            if params.get("reason") == "external" and isinstance(appended, list) and appended:
                self.live.appended(held.feed, [str(entry_id) for entry_id in appended])

    def _name_changed(self, held: AcpSession) -> None:
        opened = self.service.registry.get(held.session_id)
        name = opened.manager.get_session_name() if opened is not None else None
        if name is not None and name != held.name:
            held.name = name
            self.update(held.session_id, {"sessionUpdate": "session_info_update", "title": name})

    def _later(self, coroutine: Any) -> None:
        """Work that must follow the current answer (``available_commands_update``)."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------------ initialize

    async def initialize(self, raw: Any) -> dict[str, Any]:
        params = p.params_object(raw)
        version = params.get("protocolVersion")
        if not isinstance(version, int) or isinstance(version, bool):
            raise InvalidParams("protocolVersion must be an integer", {"field": "protocolVersion"})
        capabilities = params.get("clientCapabilities")
        self.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        fs = self.client_capabilities.get("fs")
        if isinstance(fs, dict) and fs.get("readTextFile") is True:
            self.service.documents.remote = self.client_text  # the tools see the editor's buffers
        await self.base.settings.set_cwd(os.getcwd())
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": False, "sse": False},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
            },
            "authMethods": [],
            "agentInfo": {"name": "pi-lsp", "title": "pi (pi-lsp)", "version": __version__},
        }

    async def authenticate(self, raw: Any) -> dict[str, Any]:
        return {}  # no auth methods: the key comes from ANTHROPIC_API_KEY or pi's auth.json

    # ------------------------------------------------------------------ sessions

    async def _client_for(self, cwd: str) -> AcpSession:
        settings = Settings(cwd, load=False)
        await settings.set_cwd(cwd)
        held = AcpSession(Client(settings=settings), UpdateStream(cwd, lambda _update: None, settings))
        client = held.client
        client.notify = self._notify
        client.workspace_root = cwd
        client.workspace_folders = [cwd]  # the approval policy's boundary
        client.approvals = True

        async def request(method: str, params: dict[str, Any]) -> Any:
            assert method == "pi/requestApproval", method
            assert self.connection is not None
            return await ask_permission(self.connection, held.rejected, held.stream.cwd, params, self.update)

        client.request = request
        self.service.connect(client)
        return held

    def _adopt(self, held: AcpSession, session_id: str, cwd: str) -> AcpSession:
        held.session_id = session_id
        held.feed = LiveFeed(session_id)
        held.stream = UpdateStream(cwd, lambda update: self.update(session_id, update), held.client.settings)
        self.sessions[session_id] = held
        return held

    async def new_session(self, raw: Any) -> dict[str, Any]:
        params = p.params_object(raw)
        cwd = p.absolute_path(params, "cwd")
        assert cwd is not None
        self._ignore_mcp(params)
        held = await self._client_for(cwd)
        try:
            state = await self.service.sessions.new_session(
                held.client, cwd=cwd, session_dir=None, parent_session=None, session_id=None, persist=True
            )
        except BaseException:
            await self.service.disconnect(held.client)
            raise
        self._adopt(held, state["sessionId"], cwd).feed.loaded([])
        return await self._session_answer(held, {"sessionId": held.session_id})

    @staticmethod
    def _ignore_mcp(params: dict[str, Any]) -> None:
        """``mcpServers``, checked; the stdio ones are accepted and not started: pi has no MCP."""
        for name in p.mcp_servers(params):
            log.warning("MCP server %r ignored: pi has no MCP, so its tools are not offered", name)

    async def _open(self, params: dict[str, Any]) -> tuple[AcpSession, bool]:
        """The addressed stored session opened for ACP (True: it was held here already)."""
        session_id = p.string(params, "sessionId")
        cwd = p.absolute_path(params, "cwd")
        assert cwd is not None
        self._ignore_mcp(params)
        if (held := self.sessions.get(session_id)) is not None:
            return held, True
        path = await self._find(session_id, cwd)
        held = await self._client_for(cwd)
        try:
            state = await self.service.sessions.open_session(held.client, path)
        except BaseException:
            await self.service.disconnect(held.client)
            raise
        self._adopt(held, session_id, state["cwd"])
        held.name = state.get("name")
        return held, False

    async def _find(self, session_id: str, cwd: str) -> str:
        settings = self.base.settings
        listing = self.service.sessions.listing

        def find() -> str | None:
            for info in listing.list_folder(settings.resolve_session_dir(cwd)):
                if info.id == session_id:
                    return info.path
            for info in listing.list_all():
                if info.id == session_id:
                    return info.path
            return None

        opened = self.service.registry.get(session_id)
        if opened is not None and opened.manager.session_file is not None:
            return str(opened.manager.session_file)
        path = await self.service.host.in_thread(find)
        if path is None:
            raise SessionNotFound(
                f"session {session_id} was not found among pi's sessions", {"session": session_id}
            )
        return path

    async def load_session(self, raw: Any) -> dict[str, Any]:
        held, _ = await self._open(p.params_object(raw))
        opened = self.service.registry.resolve(held.client, held.session_id)
        entries = await self.service.host.run(opened, opened.manager.get_branch, writes=False)
        for update in replay_updates(entries, opened.manager.cwd):
            self.update(held.session_id, update)
        held.feed.loaded(entries)
        if held.name:
            self.update(held.session_id, {"sessionUpdate": "session_info_update", "title": held.name})
        return await self._session_answer(held, {})

    async def resume_session(self, raw: Any) -> dict[str, Any]:
        held, _ = await self._open(p.params_object(raw))
        held.feed.loaded([])  # no replay: what is appended from now on is streamed
        return await self._session_answer(held, {})

    async def _session_answer(self, held: AcpSession, answer: dict[str, Any]) -> dict[str, Any]:
        answer["modes"] = self._modes(held)
        answer["configOptions"] = await self._config_options(held)
        self._later(self._announce_commands(held))
        return answer

    async def _announce_commands(self, held: AcpSession) -> None:
        await asyncio.sleep(0)  # after the answer that names the session
        try:
            found = await self.service.runs.get_commands(held.stream.cwd)
        except Exception:
            log.exception("could not list the slash commands")
            found = {"commands": []}
        commands = list(BUILTIN_COMMANDS)
        for command in found["commands"]:
            commands.append(
                {"name": command["name"], "description": command.get("description") or command["name"]}
            )
        self.update(
            held.session_id, {"sessionUpdate": "available_commands_update", "availableCommands": commands}
        )

    async def list_sessions(self, raw: Any) -> dict[str, Any]:
        params = p.params_object(raw)
        cwd = p.absolute_path(params, "cwd", required=False)
        cursor = p.opt_string(params, "cursor")
        after = session_list.decode_cursor(cursor, cwd) if cursor is not None else None
        listed = await self.service.sessions.list_sessions(
            self.base, cwd=cwd, all_projects=cwd is None, query=None, limit=None
        )
        return session_list.page(
            [session_list.acp_session(info, cwd) for info in listed["sessions"]], cwd, after
        )

    async def close_session(self, raw: Any) -> dict[str, Any]:
        held = self._held(p.params_object(raw))
        self.live.stop(held.feed)
        await self.service.sessions.close_session(held.client, held.session_id)
        await self.service.disconnect(held.client)
        self.sessions.pop(held.session_id, None)
        return {}

    def _held(self, params: dict[str, Any]) -> AcpSession:
        session_id = p.string(params, "sessionId")
        held = self.sessions.get(session_id)
        if held is None:
            raise SessionNotFound(
                f"session {session_id} is not open here: create it (session/new) or open it"
                " (session/load, session/resume) first",
                {"session": session_id},
            )
        return held

    # ------------------------------------------------------------------ modes and options

    def _modes(self, held: AcpSession) -> dict[str, Any]:
        modes = [
            {"id": mode, "name": MODES[mode][0], "description": MODES[mode][1]} for mode in APPROVAL_MODES
        ]
        return {"currentModeId": held.client.settings.approval, "availableModes": modes}

    async def _config_options(self, held: AcpSession) -> list[dict[str, Any]]:
        await self.service.build_off_loop(self.service.lazy.runs)
        held.client.active = held.session_id
        listed = self.service.runs.list_models(held.client)
        current = listed["current"]
        models = [
            {"value": model["id"], "name": model.get("name") or model["id"]} for model in listed["models"]
        ]
        levels = [{"value": level, "name": level} for level in THINKING_LEVELS]
        return [
            {"id": MODEL_OPTION, "name": "Model", "category": "model", "type": "select",
             "currentValue": current["modelId"], "options": models},
            {"id": THINKING_OPTION, "name": "Thinking", "category": "thought_level", "type": "select",
             "currentValue": current["thinkingLevel"], "options": levels},
        ]  # fmt: skip

    async def set_mode(self, raw: Any) -> dict[str, Any]:
        params = p.params_object(raw)
        held = self._held(params)
        mode = p.string(params, "modeId")
        if mode not in APPROVAL_MODES:
            raise InvalidParams(f"modeId must be one of {', '.join(APPROVAL_MODES)}", {"field": "modeId"})
        held.client.settings.set_client_configuration({"pi": {"approval": mode}})
        effective = held.client.settings.approval  # a workspace's settings may keep it stricter
        self.update(held.session_id, {"sessionUpdate": "current_mode_update", "currentModeId": effective})
        return {}

    async def set_config_option(self, raw: Any) -> dict[str, Any]:
        params = p.params_object(raw)
        held = self._held(params)
        option = p.string(params, "configId")
        value = p.string(params, "value")
        await self.service.build_off_loop(self.service.lazy.runs)
        if option == MODEL_OPTION:
            if find_model(value) is None:
                raise InvalidParams(f"value {value!r} is not a model this agent knows", {"field": "value"})
            await self.service.runs.set_model(held.client, held.session_id, value, None)
        elif option == THINKING_OPTION:
            if value not in THINKING_LEVELS:
                raise InvalidParams(f"value must be one of {', '.join(THINKING_LEVELS)}", {"field": "value"})
            await self.service.runs.set_model(held.client, held.session_id, None, value)
        else:
            raise InvalidParams(
                f'configId must be "{MODEL_OPTION}" or "{THINKING_OPTION}"', {"field": "configId"}
            )
        return {"configOptions": await self._config_options(held)}

    # ------------------------------------------------------------------ prompts

    async def prompt(self, raw: Any) -> dict[str, Any]:
        params = p.params_object(raw)
        held = self._held(params)
        given = await asyncio.to_thread(p.prompt_input, params)  # a linked file is read here
        if not given.images and (command := builtin_command(given.text)) is not None:
            return await self._builtin(held, *command)
        await self.service.build_off_loop(self.service.lazy.runs)
        held.feed.prompting += 1
        try:
            answer = await self.service.runs.prompt(
                held.client, held.session_id, given.text, given.images, None
            )
        except SessionBusy as error:
            if (error.data or {}).get("busy") == "prompt":
                raise SessionBusy(
                    f"session {held.session_id} is already running a prompt; wait for its answer or"
                    " cancel it (session/cancel); this prompt was not sent",
                    error.data,
                ) from None
            raise
        finally:
            held.feed.prompting -= 1
        stop = answer.get("stopReason")
        if stop == "error":
            raise ModelError(answer.get("errorMessage") or "the model call failed", {"retryable": False})
        return {"stopReason": STOP_REASONS.get(str(stop), "end_turn")}

    async def _builtin(self, held: AcpSession, name: str, argument: str) -> dict[str, Any]:
        """``/compact [instructions]``, ``/name <name>``, ``/session``: answered as agent text."""
        client, session_id = held.client, held.session_id
        try:
            if name == "compact":
                await self.service.build_off_loop(self.service.lazy.compaction)
                result = await self.service.compaction.compact(client, session_id, argument or None)
                before, summary = result.get("tokensBefore"), result.get("summary", "")
                text = f"Context compacted: {before} tokens summarised.\n\n{summary}"
            elif name == "name":
                if not argument:
                    raise InvalidParams("/name needs a name: /name <name>", {"field": "prompt"})
                await self.service.host.call(client, session_id, ops.set_session_name, argument, writes=True)
                text = f"Session named {argument!r}."
            else:
                await self.service.build_off_loop(self.service.lazy.runs)
                state = await self.service.sessions.get_state(client, session_id)
                stats = await self.service.runs.session_stats(client, session_id)
                text = session_summary(state, stats)
        except PiError as error:
            text = f"/{name}: {error.message}"
        self.update(session_id, chunk("agent_message_chunk", text))
        return {"stopReason": "end_turn"}

    def cancel(self, raw: Any) -> None:
        held = self._held(p.params_object(raw))
        runs = self.service.lazy.runs.built
        if runs is not None:
            runs.abort(held.client, held.session_id)

    # ------------------------------------------------------------------ the client's buffers

    async def client_text(self, path: str) -> str | None:
        """The client's text of ``path`` (``fs/read_text_file``, asked for the session whose folder
        holds it), None when it has none or does not answer in time."""
        held = self._session_for(path)
        if held is None or self.connection is None:
            return None
        params = {"sessionId": held.session_id, "path": path}
        try:
            answer = await asyncio.wait_for(self.connection.request("fs/read_text_file", params), FS_TIMEOUT)
        except (RemoteError, ConnectionError, TimeoutError) as error:
            log.debug("fs/read_text_file %s: %s", path, error)
            return None
        content = answer.get("content") if isinstance(answer, dict) else None
        return content if isinstance(content, str) else None

    def _session_for(self, path: str) -> AcpSession | None:
        """The session whose folder holds ``path`` most closely, else any session."""
        inside = [held for held in self.sessions.values() if _within(path, held.stream.cwd)]
        inside.sort(key=lambda held: len(held.stream.cwd), reverse=True)
        return inside[0] if inside else next(iter(self.sessions.values()), None)

    # ------------------------------------------------------------------ the end

    async def aclose(self) -> None:
        """The client is gone: runs end as pi's do with their RPC client, sessions are released."""
        for held in list(self.sessions.values()):
            held.client.leaving = True
            self.live.stop(held.feed)
            await self.service.disconnect(held.client)
        self.sessions.clear()
        await self.service.disconnect(self.base)
        for task in list(self._background):
            task.cancel()
