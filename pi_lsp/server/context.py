"""What every handler receives: the process's services and the connection's client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pi_lsp.server.params import Params
from pi_lsp.service.build import PiService
from pi_lsp.service.registry import Client


@dataclass(eq=False)
class Context:
    service: PiService
    client: Client


Handler = Callable[[Context, Params], Awaitable[Any]]
