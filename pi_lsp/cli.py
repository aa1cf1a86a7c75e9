"""The ``pi-lsp`` command: the language server by default, plus small session tools.

``pi-lsp`` serves LSP over stdio (``--tcp``/``--ws HOST:PORT`` for sockets), ``acp`` the Agent Client
Protocol; ``sessions``, ``tree``
and ``context`` inspect session files without modifying them (``tree``/``context`` take a file,
``latest`` or the start of a session id of the project); ``demo`` drives a real server the way an
editor does. Output is for people unless ``--json`` is given; errors go to stderr with exit 1.
Imports stay inside the command functions so starting the server pays only for what it uses.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from pi_lsp import __version__

if TYPE_CHECKING:
    import argparse

    from pi_lsp.session.list_cache import SessionListCache
    from pi_lsp.session.listing import SessionInfo

SESSION_HELP = "a session file, 'latest', or the start of a session id of the project"
STDIO_NOTICE = (
    "pi-lsp: serving the Language Server Protocol on stdin/stdout; an editor starts it this way.\n"
    "pi-lsp: see `pi-lsp --help` for the session tools and the demo; Ctrl-C quits.\n"
)


LOG_LEVELS = ("debug", "info", "warning", "error")


class CommandError(Exception):
    """A user-facing failure of a command: printed as ``pi-lsp: error: …`` with exit status 1."""


def _parser() -> argparse.ArgumentParser:
    import argparse

    from pi_lsp.protocol.enums import APPROVAL_POLICY, THINKING_LEVEL

    parser = argparse.ArgumentParser(
        prog="pi-lsp",
        description="Language server for AI coding-agent chat over pi-compatible session files.",
        allow_abbrev=False,  # else `sessions --all` would be read as an abbreviated --allow-…
    )
    parser.add_argument("--version", action="version", version=f"pi-lsp {__version__}")
    _serve_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the language server (the default)")
    _serve_options(serve)

    sessions = commands.add_parser("sessions", help="list sessions of a project (newest first)")
    sessions.add_argument("query", nargs="?", help='filter: words, "phrases" or re:REGEX')
    sessions.add_argument("--all", action="store_true", help="sessions of every project")
    sessions.add_argument("--cwd", help="project folder (default: the current directory)")
    sessions.add_argument("--session-dir", help="session folder (default: pi's, or settings/env)")
    sessions.add_argument("--limit", type=int, help="at most this many")
    sessions.add_argument("--json", action="store_true", help="print the pi/listSessions result")

    tree = commands.add_parser("tree", help="print a session's tree")
    _session_argument(tree)
    tree.add_argument("--json", action="store_true", help="print the pi/getTree result")
    tree.add_argument("--flat", action="store_true", help="with --json: nodes without nesting")

    context = commands.add_parser("context", help="print the LLM context of a session")
    _session_argument(context)
    context.add_argument("--leaf", help="entry id to build the context for (default: the leaf)")
    context.add_argument("--json", action="store_true", help="print the pi/buildContext result")

    prompt = commands.add_parser("prompt", help="print the system prompt a run sends in a folder")
    prompt.add_argument("--cwd", help="project folder (default: the current directory)")
    prompt.add_argument("--tools", nargs="+", metavar="TOOL",
                        help="tool names, e.g. read bash (default: the tools setting, as a run)")  # fmt: skip
    prompt.add_argument("--json", action="store_true", help="print the pi/getSystemPrompt result")
    skills = commands.add_parser("skills", help="list the skills pi finds for a folder")
    skills.add_argument("--cwd", help="project folder (default: the current directory)")
    skills.add_argument("--json", action="store_true", help="print the pi/listSkills result")

    checkpoints = commands.add_parser("checkpoints", help="the checkpoint stores of workspaces")
    actions = checkpoints.add_subparsers(dest="action", metavar="ACTION", required=True)
    gc = actions.add_parser("gc", help="prune snapshots no session references; report the sizes")
    gc.add_argument(
        "--sessions", action="append", default=[], metavar="DIR",
        help="also keep what session files under DIR reference (besides pi's sessions folder)",
    )  # fmt: skip
    gc.add_argument("--dry-run", action="store_true", help="only report the sizes")
    gc.add_argument("--json", action="store_true", help="print the report as JSON")

    chat = commands.add_parser("chat", help="chat with the agent in this terminal (needs ANTHROPIC_API_KEY)")
    chat.add_argument("prompt", nargs="?", metavar="PROMPT", help="answer this one prompt and exit")
    where = chat.add_mutually_exclusive_group()
    where.add_argument("--session", metavar="FILE", help="continue this session file")
    where.add_argument("--continue", dest="continue_recent", action="store_true",
                       help="continue the project's most recent session")  # fmt: skip
    chat.add_argument("--cwd", help="project folder (default: the current directory)")
    chat.add_argument("--model", help="an Anthropic model id (see pi/listModels)")
    chat.add_argument("--thinking", choices=THINKING_LEVEL.values)
    chat.add_argument("--approval", choices=APPROVAL_POLICY.values, help="default: acceptEdits")

    acp = commands.add_parser("acp", help="serve the Agent Client Protocol on stdio (Zed, JetBrains, Emacs…)")
    acp.add_argument("--log-file", help="write the log here instead of stderr")
    acp.add_argument("--log-level", default="warning", choices=LOG_LEVELS,
                     help="default: warning")  # fmt: skip

    demo = commands.add_parser("demo", help="drive a real server over stdio as an editor would (offline)")
    demo.add_argument("--dir", help="folder for the demo's files, kept (default: a temporary folder)")
    demo.add_argument("--keep", action="store_true", help="keep the temporary folder and print its path")
    return parser


def _session_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="SESSION", help=SESSION_HELP)
    parser.add_argument("--cwd", help="project folder for latest/id (default: the current directory)")
    parser.add_argument("--session-dir", help="session folder for latest/id (default: pi's)")


def _serve_options(parser: argparse.ArgumentParser) -> None:
    transport = parser.add_mutually_exclusive_group()
    # editors' stdio launchers (vscode-languageclient) append --stdio: the default, accepted as such
    transport.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    transport.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        help="serve over TCP instead of stdio; clients must send the token printed at start "
        "(or $PI_LSP_TOKEN) as initializationOptions.pi.token",
    )
    transport.add_argument(
        "--ws", metavar="HOST:PORT", help="serve over WebSocket instead of stdio (token as for --tcp)"
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --tcp/--ws: allow binding an address other machines can reach",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="with --ws: accept handshakes from this web origin (e.g. https://example.org); repeatable",
    )
    parser.add_argument(
        "--state-file",
        metavar="FILE",
        help="with --tcp/--ws: a shared server; write FILE (mode 0600: pid, address, token) once "
        "listening, remove it at exit; exit with status 3 if another live server holds it",
    )
    parser.add_argument(
        "--idle-exit",
        type=_seconds,
        metavar="SECONDS",
        help="with --tcp/--ws: exit after SECONDS with no connection and no run in progress",
    )
    parser.add_argument(
        "--reattach-grace",
        type=_seconds,
        default=0.0,
        metavar="SECONDS",
        help="with --tcp/--ws: a run whose connection closes goes on, and is aborted only if no "
        "client has opened its session SECONDS later (default 0: it ends with its connection)",
    )
    parser.add_argument("--log-file", help="write the log here instead of stderr")
    parser.add_argument("--log-level", default="info", choices=LOG_LEVELS, help="default: info")


def _seconds(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 <= value <= 86_400 * 365:
        raise argparse.ArgumentTypeError(f"expected 0 to 31536000 seconds, got {text}")
    return value


def editor_stdio_options(arguments: Sequence[str]) -> SimpleNamespace | None:
    """The options of the command lines editors start the server with, ``[serve] [--stdio]
    [--log-file FILE] [--log-level LEVEL]`` (each at most once), read without the parser: importing
    argparse and building the parser are ~8 ms of every editor's start. None for anything else,
    which the parser reads (and reports) as before; for these the values are the parser's."""
    rest = list(arguments[1:] if arguments[:1] == ["serve"] else arguments)
    options = SimpleNamespace(
        stdio=False,
        tcp=None,
        ws=None,
        allow_remote=False,
        allow_origin=[],
        state_file=None,
        idle_exit=None,
        reattach_grace=0.0,
        log_file=None,
        log_level="info",
    )
    seen: set[str] = set()
    while rest:
        flag = rest.pop(0)
        if flag in seen:
            return None
        seen.add(flag)
        if flag == "--stdio":
            options.stdio = True
        elif flag in ("--log-file", "--log-level") and rest and not rest[0].startswith("-"):
            value = rest.pop(0)
            if flag == "--log-level" and value not in LOG_LEVELS:
                return None
            setattr(options, flag[2:].replace("-", "_"), value)
        else:
            return None
    return options


def main(argv: list[str] | None = None) -> int:
    from pi_lsp.full_writes import whole_text_stdout

    whole_text_stdout()
    editor_start = editor_stdio_options(sys.argv[1:] if argv is None else argv)
    if editor_start is not None:
        return _reporting_errors(lambda: _serve(editor_start))
    args = _parser().parse_args(argv)
    return _reporting_errors(lambda: _command(args))


def _command(args: argparse.Namespace) -> int:
    command = args.command or "serve"
    if command == "serve":
        return _serve(args)
    if command == "chat":
        return _chat(args)
    if command == "acp":
        return _acp(args)
    if command == "demo":
        from pi_lsp.client.demo import run_demo

        return run_demo(args.dir, keep=args.keep)
    if command == "checkpoints":
        return _checkpoints_gc(args)
    inspect = {"sessions": _sessions, "tree": _tree, "context": _context, "prompt": _prompt}
    return {**inspect, "skills": _skills}[command](args)


def _reporting_errors(run: Callable[[], int]) -> int:
    """``run()``'s exit status; a failure is one line on stderr (``pi-lsp: error: …``) and status 1."""
    try:
        return run()
    except CommandError as error:
        print(f"pi-lsp: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `pi-lsp tree FILE | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:
        from pi_lsp.secrets import redact
        from pi_lsp.service.errors import from_exception

        mapped = from_exception(error)
        message = mapped.message if mapped is not None else f"{type(error).__name__}: {error}"
        print(f"pi-lsp: error: {redact(message)}", file=sys.stderr)
        return 1


def _checkpoints_gc(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from pi_lsp.agent_dir import sessions_root
    from pi_lsp.checkpoints.gc import collect

    folders = [sessions_root(), *(Path(folder) for folder in args.sessions)]
    reports = collect(None, folders, dry_run=args.dry_run)
    if args.json:
        print(json.dumps({"stores": [report.to_wire() for report in reports]}, indent=2))
        return 0
    for report in reports:
        sizes = f"{_size(report.bytes_before)} -> {_size(report.bytes_after)}"
        counts = f"{report.snapshots} snapshots kept, {report.undo_records} undo records"
        print(f"{report.workspace}: {counts}, {sizes}")
    total_before = sum(report.bytes_before for report in reports)
    total_after = sum(report.bytes_after for report in reports)
    print(f"{len(reports)} stores: {_size(total_before)} -> {_size(total_after)}")
    return 0


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _chat(args: argparse.Namespace) -> int:
    import asyncio

    from pi_lsp.client.chat_cli import chat_main

    options = {
        key: value
        for key, value in (
            ("model", args.model),
            ("thinkingLevel", args.thinking),
            ("approval", args.approval),
        )
        if value is not None
    }
    return asyncio.run(
        chat_main(
            args.prompt,
            session=args.session,
            continue_recent=args.continue_recent,
            cwd=args.cwd,
            options=options,
        )
    )


def _serve(args: argparse.Namespace | SimpleNamespace) -> int:
    from pi_lsp.server import serve
    from pi_lsp.server.logs import configure_logging

    try:
        configure_logging(args.log_level, args.log_file)
    except OSError as error:
        detail = f"{error.filename}: {error.strerror}" if error.filename else str(error)
        raise CommandError(f"--log-file {detail}") from None
    if args.tcp is None and args.ws is None and sys.stdin.isatty():
        sys.stderr.write(STDIO_NOTICE)  # someone typed `pi-lsp`: say what it is doing, then serve
        sys.stderr.flush()
    network = args.tcp is not None or args.ws is not None
    for flag, value in (
        ("--state-file", args.state_file),
        ("--idle-exit", args.idle_exit),
        ("--reattach-grace", args.reattach_grace or None),
    ):
        if value is not None and not network:
            raise CommandError(f"{flag} needs --tcp or --ws (stdio ends with its editor)")
    return serve(
        tcp=args.tcp,
        ws=args.ws,
        allow_remote=args.allow_remote,
        allow_origins=args.allow_origin,
        state_file=args.state_file,
        idle_exit=args.idle_exit,
        reattach_grace=args.reattach_grace,
    )


def _acp(args: argparse.Namespace) -> int:
    from pi_lsp.acp.serve import serve_acp
    from pi_lsp.server.logs import configure_logging

    try:
        configure_logging(args.log_level, args.log_file)
    except OSError as error:
        detail = f"{error.filename}: {error.strerror}" if error.filename else str(error)
        raise CommandError(f"--log-file {detail}") from None
    return serve_acp()


def _print_json(value: Any) -> None:
    import orjson

    from pi_lsp.json_parts import joined_default

    sys.stdout.buffer.write(orjson.dumps(value, default=joined_default) + b"\n")  # buffered: written whole
    sys.stdout.flush()


def _sessions(args: argparse.Namespace) -> int:
    from pi_lsp.service.settings import Settings
    from pi_lsp.session.list_search import search_sessions

    cwd = os.path.abspath(args.cwd or os.getcwd())
    listing = _list_cache()
    if args.all:
        everything, where = listing.list_all(), "in any project"
    else:
        directory = Settings(cwd).resolve_session_dir(cwd, args.session_dir)
        everything, where = listing.list_folder(directory), f"of {cwd} (in {directory})"
    listing.close()
    infos = search_sessions(everything, args.query)
    if args.limit is not None:
        infos = infos[: max(args.limit, 0)]
    if args.json:
        _print_json({"sessions": [info.to_wire() for info in infos]})
        return 0
    if not everything:
        print(f"no sessions {where}")
        return 0
    if not infos:
        print(f"no match for {args.query!r} among {_count(len(everything), 'session')} {where}")
        return 0
    for info in infos:
        print(f"{_modified(info)}  {info.message_count:>5} msgs  {_title(info, 70)}")
        print(f"{'':>21}{info.path}")
    return 0


def _list_cache() -> SessionListCache:
    """The server's session-list cache (shared on disk), so the CLI lists as fast as a server."""
    from pi_lsp.session.list_cache import SessionListCache
    from pi_lsp.session.list_cache_disk import DiskStore

    return SessionListCache(DiskStore())


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _session_file(args: argparse.Namespace) -> str:
    """The file ``args.file`` names: a path, ``latest``, or a unique session-id prefix of the project."""
    given: str = args.file
    if os.path.exists(given) or os.sep in given or given.endswith(".jsonl"):
        return given  # a path (a missing one gets the loader's "no such file")
    from pi_lsp.service.settings import Settings

    cwd = os.path.abspath(args.cwd or os.getcwd())
    directory = Settings(cwd).resolve_session_dir(cwd, args.session_dir)
    listing = _list_cache()
    infos = listing.list_folder(directory)
    listing.close()
    if not infos:
        raise CommandError(f"no sessions of {cwd} (in {directory}) and no file named {given!r}")
    if given == "latest":
        return infos[0].path
    matches = [info for info in infos if info.id.startswith(given)]
    if len(matches) == 1:
        return matches[0].path
    if not matches:
        raise CommandError(
            f"no file named {given!r} and no session of {cwd} whose id starts with it"
            f" ({_count(len(infos), 'session')}: see `pi-lsp sessions`)"
        )
    shown = "\n".join(f"  {_candidate(info)}" for info in matches[:20])
    more = f"\n  … and {len(matches) - 20} more" if len(matches) > 20 else ""
    raise CommandError(f"{given!r} starts {len(matches)} session ids; give more of one:\n{shown}{more}")


def _candidate(info: SessionInfo) -> str:
    return f"{info.id}  {_modified(info)}  {_title(info, 50)}"


def _modified(info: SessionInfo) -> str:
    return info.modified[:19].replace("T", " ")


def _title(info: SessionInfo, width: int) -> str:
    """The session's name, else its first message, on one line of at most ``width`` characters."""
    title = " ".join((info.name or info.first_message).split())
    return title if len(title) <= width else title[: width - 1] + "…"


def _tree(args: argparse.Namespace) -> int:
    from pi_lsp.service import wire
    from pi_lsp.service.readonly import load_snapshot
    from pi_lsp.service.render import render_tree

    snapshot = load_snapshot(_session_file(args))
    roots = snapshot.tree()
    if args.json:
        _print_json(wire.tree_result(roots, snapshot.leaf_id, args.flat))
        return 0
    name = snapshot.index.session_name
    print(
        f"session {snapshot.session_id}"
        + (f" — {name}" if name else "")
        + f"  ({len(snapshot.index.records)} entries)"
    )
    for line in render_tree(roots, wire.node_fields, lambda node: node.children, snapshot.leaf_id):
        print(line)
    _print_diagnostics(snapshot.diagnostics)
    return 0


def _context(args: argparse.Namespace) -> int:
    from pi_lsp.service import wire
    from pi_lsp.service.readonly import load_snapshot
    from pi_lsp.service.render import context_lines

    snapshot = load_snapshot(_session_file(args))
    view = snapshot.context(args.leaf)
    if args.json:
        _print_json(wire.context_result(view))
        return 0
    leaf = args.leaf or snapshot.leaf_id
    print(f"context of {leaf or '(no leaf)'}: {len(view)} messages")
    for line in context_lines(view.iter_messages(), view.thinking_level, view.model):
        print(line)
    _print_diagnostics(snapshot.diagnostics)
    return 0


def _print_diagnostics(diagnostics: list[dict[str, Any]]) -> None:
    for item in diagnostics:
        print(f"pi-lsp: {item.get('severity')}: {item.get('message')}", file=sys.stderr)


def _prompt_cwd(args: argparse.Namespace) -> str:
    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        raise CommandError(f"not a folder: {cwd}")
    return cwd


def _prompt(args: argparse.Namespace) -> int:
    """``pi-lsp prompt``: the run's own prompt building (``workspace_prompt``) with the run's
    tools and tokenizer settings; exit status 1 when a source is broken."""
    from pi_lsp.prompt.workspace import broken_sources, workspace_prompt
    from pi_lsp.service.settings import Settings

    cwd = _prompt_cwd(args)
    settings = Settings(cwd)
    tools = settings.tools if args.tools is None else [t for arg in args.tools for t in arg.split(",") if t]
    result = workspace_prompt(cwd, tools=tools, tokenizer=settings.tokenizer)
    if args.json:
        _print_json(result.to_json())
    else:
        sys.stdout.write(result.text if result.text.endswith("\n") else result.text + "\n")
    _print_source_diagnostics(result.diagnostics)
    return 1 if broken_sources(result.skills, result.skill_diagnostics, result.problems) else 0


def _skills(args: argparse.Namespace) -> int:
    """``pi-lsp skills``: name, description and path of each skill; exit status 1 when a skill
    source is broken."""
    from pi_lsp.prompt.assemble import skill_list_json
    from pi_lsp.prompt.workspace import broken_sources, workspace_skills

    loaded = workspace_skills(_prompt_cwd(args))
    listing = skill_list_json(loaded)
    if args.json:
        _print_json(listing)
    else:
        for skill in listing["skills"]:
            hidden = "  (hidden from the model)" if skill["disableModelInvocation"] else ""
            print(f"{skill['name']}\t{skill['description']}\t{skill['path']}{hidden}")
    _print_source_diagnostics(listing["diagnostics"])
    return 1 if broken_sources(loaded.skills, loaded.diagnostics) else 0


def _print_source_diagnostics(diagnostics: Sequence[Mapping[str, Any]]) -> None:
    _print_diagnostics([{**d, "message": f"{d['path']}: {d['message']}"} for d in diagnostics])
