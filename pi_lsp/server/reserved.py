"""Methods of the contract that this server reserves but does not implement yet.

They are registered like every other method and answer error -32601 with a message saying they are
not available yet (``data.reserved`` names the missing part), so clients can tell "not yet" from a
typo. Implementing one moves it from here to ``capabilities.IMPLEMENTED_METHODS`` with a handler:
see ARCHITECTURE.md ("Adding a method").
"""

from __future__ import annotations

RESERVED_METHODS: dict[str, str] = {}
