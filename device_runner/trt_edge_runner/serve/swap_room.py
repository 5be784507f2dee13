"""Is there room to load the next bundle beside the one being served?

A hot swap (`trt_edge_runner.serve.hot_swap`) loads the new slot in a second engine while
the old one still answers, so for a moment both models are in memory. Install's check
(`trt_edge_runner.agent.memory_check`) asks only whether one bundle fits the device; on an
8 GB Jetson two 3 GB bundles do not fit together, and loading the second beside the first
would push the board into the OOM killer — which on a Jetson may pick the service itself.

So before a swap the service measures what is available now (`MemAvailable`, with the old
model already loaded) and compares it with the new bundle's recorded needs
(`bundle.json` `memory.total_bytes`) plus the same headroom install keeps. When it fits,
the swap is seamless (beside). When it does not, the swap is in place: new requests get
503 with `Retry-After` while the old model finishes what it holds and stops, then the new
one loads. A bundle that records no needs is loaded beside, as before the section existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.memory_budget import MIB, MemInfoError, device_memory, mib

BESIDE = "beside"
IN_PLACE = "in place"


@dataclass(frozen=True)
class SwapRoom:
    """How a swap will load the new model (`BESIDE` or `IN_PLACE`) and why, for the log."""

    mode: str
    reason: str


def swap_room(
    new: BundleManifest, old: BundleManifest | None, meminfo: Path, headroom_mib: int
) -> SwapRoom:
    """Judge whether `new` can load while `old` (None: nothing is loaded) keeps serving."""
    if old is None:
        return SwapRoom(BESIDE, "no model is loaded")
    needs = new.memory
    if needs is None:
        return SwapRoom(BESIDE, f"{new.name} {new.version} records no memory needs")
    try:
        device = device_memory(meminfo)
    except MemInfoError as exc:
        return SwapRoom(IN_PLACE, f"cannot tell the free memory ({exc}); swapping in place")
    headroom = headroom_mib * MIB
    free = device.free_bytes(headroom)
    if free is not None:
        available, what = device.available_bytes, "MemAvailable"
        usable = free
    else:  # old kernels: estimate from the total less what the old bundle said it needs
        used = old.memory.total_bytes if old.memory is not None else 0
        available, what = max(device.total_bytes - used, 0), "MemTotal less the old bundle"
        usable = max(device.usable_bytes(headroom) - used, 0)
    figures = (
        f"{new.name} {new.version} needs {mib(needs.total_bytes)}; {what} in {device.source} "
        f"is {mib(available or 0)}, with {mib(headroom)} headroom kept: {mib(usable)} usable"
    )
    if needs.total_bytes <= usable:
        return SwapRoom(BESIDE, figures)
    return SwapRoom(IN_PLACE, f"{figures}: not enough to load it beside {old.name}")
