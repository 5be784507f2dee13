"""Whether a bundle's memory needs fit a target's boards, with headroom for the OS.

The target catalog lists each family's module variants (`memory_gib`: an Orin Nano is
4 or 8 GiB). Each variant is judged on its own, so a build for `jetson-orin-nano-jp6`
can say "fits the 8 GiB module, not the 4 GiB one". Targets whose memory the catalog
does not fix (x86 boxes, generic CPUs) are not judged. The rule itself
(`trt_edge_runner.memory_budget.Budget`) is the one the device applies to its
measured memory at install.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest, MemorySection
from trt_edge_runner.memory_budget import DEFAULT_HEADROOM_MIB, GIB, MIB, Budget, mib

from trt_edge.targets import load_catalog
from trt_edge.targets.catalog import Target


@dataclass(frozen=True)
class BoardVerdict:
    """One module variant of a target against a bundle's needs."""

    target_id: str
    memory_gib: int
    budget: Budget
    needed_bytes: int

    @property
    def fits(self) -> bool:
        return self.budget.shortfall(self.needed_bytes) == 0

    def message(self) -> str:
        b = self.budget
        verdict = "fits" if self.fits else f"exceeds it by {mib(b.shortfall(self.needed_bytes))}"
        return (
            f"{self.target_id} {self.memory_gib} GiB: the bundle needs {mib(self.needed_bytes)}"
            f", the board has {mib(b.capacity_bytes)} less {mib(b.headroom_bytes)} headroom "
            f"= {mib(b.usable_bytes)}; {verdict}"
        )


def board_verdicts(
    memory: MemorySection, target: Target, headroom_mib: int | None = None
) -> list[BoardVerdict]:
    """One verdict per module variant of `target` (none when its memory is not fixed)."""
    headroom = (DEFAULT_HEADROOM_MIB if headroom_mib is None else headroom_mib) * MIB
    return [
        BoardVerdict(target.id, gib, Budget(gib * GIB, headroom), memory.total_bytes)
        for gib in target.memory_gib or ()
    ]


def over_budget(
    memory: MemorySection, target: Target, headroom_mib: int | None = None
) -> list[str]:
    """A warning per module variant of `target` that cannot hold the bundle, saying what to
    do; empty when every variant can (or the target's memory is not fixed)."""
    over = [v for v in board_verdicts(memory, target, headroom_mib) if not v.fits]
    if not over:
        return []
    fitting = [v for v in board_verdicts(memory, target, headroom_mib) if v.fits]
    where = (
        f"; it fits the {', '.join(f'{v.memory_gib} GiB' for v in fitting)} module"
        if (fitting)
        else ""
    )
    hint = (
        "quantize the weights (build.quantize), shorten max_cache_len, pick a larger module"
        f"{where}, or lower build.memory_headroom_mib if the board really has that much free"
    )
    return [f"{v.message()} — {hint}" for v in over]


def bundle_warnings(bundle_dir: Path, headroom_mib: int | None = None) -> tuple[str, ...]:
    """`over_budget` for a written bundle, against the target its `bundle.json` names
    (none for a bundle without a `memory` section or built for an unknown target)."""
    document = BundleManifest.from_json((bundle_dir / BUNDLE_JSON).read_bytes())
    catalog = load_catalog()
    target_id = str(document.target.get("id"))
    if document.memory is None or target_id not in catalog:
        return ()
    return tuple(over_budget(document.memory, catalog.get(target_id), headroom_mib))
