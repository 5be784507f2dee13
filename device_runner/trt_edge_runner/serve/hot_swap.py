"""Follow the device agent's active slot: load the new one beside the old, then switch.

The agent commits an install or a rollback by replacing `ROOT/state.json` atomically
(`trt_edge_runner.agent.store`); that file's `active` slot is the one source of truth, so the
watcher polls its identity (inode, mtime, size) and, when the active slot or the bundle in
it changed, loads the new slot in a second engine and smoke-runs it. Only then do new
requests go to it; the old model finishes what it holds (`Scheduler.drain`) and its engine
stops. A load that fails leaves the old model serving and is logged; the next change of
`state.json` is tried again.

Two models in memory at once must fit (`trt_edge_runner.serve.swap_room`); when they do not,
the swap is in place: new requests get 503 while the old model drains and stops, then the
new one loads; if it fails, the old one is loaded again.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.agent.store import DeviceStore
from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest
from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.serve.engine_client import EngineError
from trt_edge_runner.serve.loaded_model import LoadedModel
from trt_edge_runner.serve.service import Service
from trt_edge_runner.serve.swap_room import IN_PLACE, swap_room

LOG = logging.getLogger("trt_edge_runner.serve.hot_swap")
POLL_S = 1.0


@dataclass(frozen=True)
class ActiveSlot:
    slot: str
    bundle: Path
    bundle_sha256: str


def active_slot(root: Path) -> ActiveSlot | None:
    """The slot `state.json` under `root` names active, or None when nothing is installed."""
    store = DeviceStore(root)
    state = store.load()
    info = state.info(state.active)
    if state.active is None or info is None:
        return None
    return ActiveSlot(state.active, store.slot_dir(state.active), info.bundle_sha256)


async def swap_to(service: Service, target: ActiveSlot) -> bool:
    """Serve `target` instead of the current model. Beside it when both fit in memory (no
    request notices); in place otherwise. False when `target` did not load: the old model
    keeps serving (beside), or is loaded again (in place)."""
    old = service.current
    try:
        manifest = BundleManifest.from_json(
            (target.bundle / BUNDLE_JSON).read_bytes(), str(target.bundle / BUNDLE_JSON)
        )
    except (TrtEdgeError, OSError) as exc:
        return _not_loaded(service, target, exc)
    options = service.options
    room = swap_room(
        manifest, old.manifest if old else None, options.meminfo, options.memory_headroom_mib
    )
    if room.mode == IN_PLACE and old is not None:
        LOG.warning("slot %s: swapping in place (503 until it is loaded): %s", target.slot,
                    room.reason)  # fmt: skip
        return await _swap_in_place(service, old, target)
    LOG.info("slot %s: loading beside the served model: %s", target.slot, room.reason)
    try:
        model = await service.load(target.bundle, target.slot)
    except (EngineError, TrtEdgeError, OSError) as exc:
        return _not_loaded(service, target, exc)
    service.serve(model)
    LOG.info("serving %s %s from slot %s", model.name, model.version, target.slot)
    if old is not None:
        await old.scheduler.drain()
        await old.close()
    return True


async def _swap_in_place(service: Service, old: LoadedModel, target: ActiveSlot) -> bool:
    """Stop serving, let `old` finish and stop, load `target`; on failure load `old` again."""
    service.unload(f"swapping to slot {target.slot}")
    await old.scheduler.drain()
    await old.close()
    try:
        model = await service.load(target.bundle, target.slot)
    except (EngineError, TrtEdgeError, OSError) as exc:
        _not_loaded(service, target, exc)
        try:
            again = await service.load(old.bundle, old.slot)
        except (EngineError, TrtEdgeError, OSError) as exc2:
            service.load_error = f"slot {target.slot} did not load and {old.slot} neither: {exc2}"
            LOG.error("%s", service.load_error)
            return False
        service.serve(again)
        LOG.info("serving %s %s from slot %s again", again.name, again.version, old.slot)
        return False
    service.serve(model)
    LOG.info("serving %s %s from slot %s", model.name, model.version, target.slot)
    return True


def _not_loaded(service: Service, target: ActiveSlot, exc: BaseException) -> bool:
    what = "still serving the previous model" if service.current else "no model is served"
    LOG.error("slot %s did not load; %s: %s", target.slot, what, exc)
    service.swap_error = f"slot {target.slot}: {exc}"
    return False


class SlotWatcher:
    """Polls `ROOT/state.json` and swaps when the active slot changes."""

    def __init__(self, service: Service, root: Path, serving: ActiveSlot | None) -> None:
        self.service = service
        self.state_path = DeviceStore(root).state_path
        self.root = root
        self.serving = serving
        self._seen = self._identity()

    def _identity(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.state_path)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(POLL_S)
            seen = self._identity()
            if seen == self._seen:
                continue
            self._seen = seen
            try:
                target = active_slot(self.root)
            except TrtEdgeError as exc:
                LOG.error("cannot read the agent state: %s", exc)
                continue
            # The slot last served is loaded again when nothing is served now: an in-place
            # swap whose new slot and then old slot both failed to load left no model.
            if target is None or (target == self.serving and self.service.current is not None):
                continue
            if await swap_to(self.service, target):
                self.serving = target
