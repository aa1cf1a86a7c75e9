"""The agent: pi's run loop and its built-in tools (no server or service imports here)."""
