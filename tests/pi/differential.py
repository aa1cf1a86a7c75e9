"""One differential case: the same tree twice, pi's tool in one copy and ours in the other."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.pi.pi_tools import PiTools, make_tree, run_ours, snapshot, swap_root


async def compare(
    pi_tools: PiTools,
    tmp_path: Path,
    tool: str,
    args: Any,
    files: Mapping[str, bytes | str | None],
    *,
    cwd: str = "",
) -> dict[str, Any]:
    """Run both, assert equal results and equal trees afterwards; returns our result."""
    pi_root, our_root = tmp_path / "pi", tmp_path / "ours"
    make_tree(pi_root, files)
    make_tree(our_root, files)
    pi_cwd, our_cwd = str(pi_root / cwd), str(our_root / cwd)
    pi_args = swap_root(args, str(our_root), str(pi_root))
    theirs = pi_tools.call("execute", tool=tool, cwd=pi_cwd, args=pi_args)
    theirs.pop("updates", None)
    ours = await run_ours(tool, args, our_cwd)
    assert ours == swap_root(theirs, str(pi_root), str(our_root))
    assert snapshot(our_root) == snapshot(pi_root)
    return ours
