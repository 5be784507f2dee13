"""Install's memory check: refuse a bundle this device's memory cannot hold.

The bundle says what it needs (`bundle.json` `memory.total_bytes`, written by the build);
the device measures what it has (`MemTotal` in `/proc/meminfo`, capped by a container's
memory limit) and keeps a headroom for
the OS, the agent and the CUDA/TensorRT libraries (`trt_edge_runner.memory_budget`, the
rule the host's build warning uses too). A bundle over budget is refused before anything
is extracted, naming both figures and what to do; `--ignore-memory-check` lets it
through on purpose. Bundles built before the `memory` section existed are not checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.agent.errors import InstallRefused
from trt_edge_runner.bundle_format import BundleManifest, MemorySection
from trt_edge_runner.memory_budget import (
    DEFAULT_HEADROOM_MIB,
    MEMINFO,
    MIB,
    MemInfoError,
    device_memory,
    mib,
)


def needs_line(memory: MemorySection) -> str:
    """`X MiB (weights …, planned … incl. KV cache …, runner …)`: what a bundle needs."""
    return (
        f"{mib(memory.total_bytes)} (weights {mib(memory.weights_bytes)}, planned "
        f"{mib(memory.planned_bytes)} incl. KV cache {mib(memory.kv_cache_bytes)}, runner "
        f"{mib(memory.runner_bytes)})"
    )


@dataclass(frozen=True)
class MemoryCheck:
    """How install judges memory: where the device's figures are read, the headroom kept
    free, and whether an over-budget bundle is let through on purpose."""

    meminfo: Path = MEMINFO
    headroom_mib: int = DEFAULT_HEADROOM_MIB
    ignore: bool = False

    def check(self, manifest: BundleManifest, where: str) -> str | None:
        """None when the bundle fits (or records no needs); a note when it does not but
        `ignore` is set; raises `InstallRefused` otherwise."""
        memory = manifest.memory
        if memory is None:
            return f"{manifest.name} {manifest.version} records no memory needs: not checked"
        try:
            device = device_memory(self.meminfo)
        except MemInfoError as exc:
            if self.ignore:
                return f"memory not checked (--ignore-memory-check): {exc}"
            raise InstallRefused(str(exc), hint=exc.hint) from None
        headroom = self.headroom_mib * MIB
        usable = device.usable_bytes(headroom)
        short = max(memory.total_bytes - usable, 0)
        if short == 0:
            return None
        if device.host_total_bytes is None:
            has = (
                f"this device has {mib(device.total_bytes)} (MemTotal in {device.source}) "
                f"less {mib(headroom)} headroom for the OS = {mib(usable)}"
            )
        else:  # in a container: its limit, and the host less the headroom
            has = (
                f"this container may use {mib(device.total_bytes)} ({device.source}; the "
                f"host has {mib(device.host_total_bytes)} less {mib(headroom)} headroom for "
                f"the OS) = {mib(usable)}"
            )
        problem = (
            f"{where}: {manifest.name} {manifest.version} needs {needs_line(memory)} at run "
            f"time; {has}: {mib(short)} short"
        )
        if self.ignore:
            return f"installed over the memory budget on purpose (--ignore-memory-check): {problem}"
        raise InstallRefused(
            problem,
            hint="build a smaller bundle (quantize the weights with build.quantize, shorten "
            "max_cache_len), install it on a device with more memory, lower the headroom with "
            "--memory-headroom-mib if the OS needs less, or pass --ignore-memory-check to "
            "install it anyway",
        )
