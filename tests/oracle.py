"""Client for the pi oracle: pi itself, driven by ``tests/pi/driver.mjs`` in a node co-process.

Tests send the driver one JSON request per line and compare pi's answer with ours (the operations
and how to add one are described at the top of the driver). When node or the pi package is missing,
tests that need pi are skipped with the reason, or fail where ``PI_LSP_REQUIRE_ORACLE=1`` (CI) says
pi must be there (see :func:`require_oracle`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.session.jsonl import dumps_compact, loads_line

REPO_ROOT = Path(__file__).resolve().parent.parent
DRIVER = REPO_ROOT / "tests" / "pi" / "driver.mjs"
REQUIRE_ENV = "PI_LSP_REQUIRE_ORACLE"
SKIP_PREFIX = "pi oracle unavailable: "
FIXTURES = REPO_ROOT / "tests" / "fixtures"
PI_FIXTURES = FIXTURES / "pi"


def oracle_dir() -> Path:
    """Where the pi npm package is installed (``.ci/run`` installs it into ``.pi-oracle``)."""
    return Path(os.environ.get("PI_ORACLE_DIR", REPO_ROOT / ".pi-oracle"))


def unavailable_reason() -> str | None:
    """Why the oracle cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not installed"
    package = oracle_dir() / "node_modules" / "@mariozechner" / "pi-coding-agent"
    if not package.exists():
        return f"pi npm package not installed under {oracle_dir()} (run: make oracle)"
    return None


def oracle_required() -> bool:
    """Whether a missing pi is an error here (CI sets ``PI_LSP_REQUIRE_ORACLE=1``), not a skip."""
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def optional_checks_run() -> bool:
    """Whether a test's optional pi checks run: pi is here, or pi is required (and then the
    ``pi_oracle`` fixture fails for want of it)."""
    return unavailable_reason() is None or oracle_required()


def require_oracle() -> None:
    """Skip the calling test or fixture (fail it where pi is required) when pi cannot run here."""
    reason = unavailable_reason()
    if reason is None:
        return
    if oracle_required():
        pytest.fail(f"{SKIP_PREFIX}{reason}, and {REQUIRE_ENV} is set", pytrace=False)
    pytest.skip(f"{SKIP_PREFIX}{reason}")


class PiOracle:
    """One long-lived driver process; requests are answered in order, one line each.

    ``wrapper`` is a command prefix for the node process (e.g. ``setpriv ...`` to drop privileges);
    ``script`` another driver speaking the same line protocol; ``env`` extra environment variables.
    """

    def __init__(
        self, wrapper: Sequence[str] = (), script: Path = DRIVER, env: Mapping[str, str] | None = None
    ) -> None:
        env = dict(os.environ, PI_ORACLE_DIR=str(oracle_dir()), **(env or {}))
        self._proc = subprocess.Popen(
            [*wrapper, "node", str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._lock = threading.Lock()
        self._next_id = 0

    def request(self, op: str, **args: Any) -> dict[str, Any]:
        """Send one request and return the whole response object (``result`` or ``error``)."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with self._lock:
            self._next_id += 1
            payload = {"id": self._next_id, "op": op, **args}
            self._proc.stdin.write(dumps_compact(payload) + b"\n")  # lone surrogates escaped
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"pi oracle exited while answering {op}")
        response: dict[str, Any] = loads_line(line)  # orjson's reader refuses lone surrogates
        return response

    def result(self, op: str, **args: Any) -> Any:
        """Like :meth:`request` but return ``result``, raising on an oracle error."""
        response = self.request(op, **args)
        if "error" in response:
            raise RuntimeError(f"pi oracle {op} failed: {response['error']}")
        return response["result"]

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()


def pi_app_system_prompt(
    oracle: PiOracle,
    *,
    cwd: str,
    agent_dir: str,
    home: str,
    tools: list[str] | None,
    now: str,
    tz: str,
    custom: str | None = None,
    append: str | None = None,
) -> str:
    """pi's app pipeline: its resource loader, then ``buildSystemPrompt`` with the built-in tools."""
    args: dict[str, Any] = {"cwd": cwd, "agentDir": agent_dir, "home": home}
    if custom is not None:
        args["systemPrompt"] = custom
    if append is not None:
        args["appendSystemPrompt"] = [append]
    resources = oracle.result("resources", **args)
    options: dict[str, Any] = {
        "cwd": cwd,
        "skills": resources["skills"],
        "contextFiles": resources["agentsFiles"],
        "selectedTools": tools if tools is not None else ["read", "bash", "edit", "write"],
    }
    if resources["systemPrompt"] is not None:
        options["customPrompt"] = resources["systemPrompt"]
    if resources["appendSystemPrompt"]:
        options["appendSystemPrompt"] = "\n\n".join(resources["appendSystemPrompt"])
    text: str = oracle.result("systemPrompt", options=options, builtinToolMetadata=True, now=now, tz=tz)
    return text
