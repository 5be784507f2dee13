"""`trt-edge rollout` as the fleet tests call it: in this process, arguments as paths."""

from __future__ import annotations

from pathlib import Path

from trt_edge.cli.main import main


def rollout(plan: Path, inventory: Path, *options: str | Path) -> int:
    """`trt-edge rollout PLAN --inventory INVENTORY OPTIONS...`; returns the exit code."""
    return main(["rollout", str(plan), "--inventory", str(inventory), *map(str, options)])
