"""Starting a real server on ``--tcp``/``--ws`` (port 0) and reading its address and token."""

from __future__ import annotations

import asyncio
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.server.support import SERVER, run_cli, server_env

ANNOUNCE = re.compile(rb"pi-lsp listening on (\w+)://\[?([\d.:a-f]+?)\]?:(\d+) token=(\S+)")


@dataclass
class NetworkServer:
    process: asyncio.subprocess.Process
    host: str
    port: int
    token: str
    announcement: bytes

    async def stop(self) -> bytes:
        """Terminate the server; returns the rest of its stderr (the log)."""
        if self.process.returncode is None:
            self.process.terminate()
        assert self.process.stderr is not None
        rest = await asyncio.wait_for(self.process.stderr.read(), 10)
        await asyncio.wait_for(self.process.wait(), 10)
        return rest


async def start_network_server(
    tmp_path: Path,
    flag: str,
    *args: str,
    log_level: str = "warning",
    address: str = "127.0.0.1:0",
    **env: str,
) -> NetworkServer:
    """A server on ``address`` (127.0.0.1 with a free port); ``env`` adds variables (HOME,
    PI_LSP_TOKEN…)."""
    process = await asyncio.create_subprocess_exec(
        *SERVER,
        flag,
        address,
        "--log-level",
        log_level,
        *args,
        env=server_env(tmp_path / "agent", **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    line = await asyncio.wait_for(process.stderr.readline(), 20)
    match = ANNOUNCE.search(line)
    assert match, line
    return NetworkServer(process, match.group(2).decode(), int(match.group(3)), match.group(4).decode(), line)


def run_server(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``pi-lsp ARGS`` to completion (for start-ups that must fail), stdin closed."""
    return run_cli(tmp_path, *args, cwd=Path.cwd())
