"""Overlap and gap warnings for a resolved manifest, located at the profiles concerned.

Overlaps are legal (TensorRT accepts them) but decide behaviour: under `auto`
the runner's sticky first-fit keeps the active profile while a shape fits it
and otherwise takes the first profile, from index 0, that fits. Gaps are shapes
torch.export accepts (inside the export domain) that every profile rejects —
a request there fails at run time, so the user should know now.
"""

from __future__ import annotations

from trt_edge.manifest.analysis import format_box, gaps, overlaps
from trt_edge.manifest.diagnostics import Diagnostic
from trt_edge.manifest.locations import JsonPath, LocationIndex, format_path
from trt_edge.manifest.resolved import ResolvedManifest

MAX_GAPS_SHOWN = 3


def coverage_diagnostics(manifest: ResolvedManifest, locations: LocationIndex) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    symbols = manifest.symbols()
    profiles = manifest.profiles
    if len(profiles) < 2 and not symbols:
        return out
    names = [f"{p.name!r} (#{i})" for i, p in enumerate(profiles)]
    auto = manifest.runtime.policy == "auto" or "auto" in manifest.runtime.phases.values()

    def warn(path: JsonPath, message: str, at_key: bool = False) -> None:
        pos = locations.key(path) if at_key else locations.value(path)
        out.append(
            Diagnostic("", pos.line, pos.col, "warning", format_path(path), message, "semantic")
        )

    for ov in overlaps(profiles, symbols):
        a, b = names[ov.first], names[ov.second]
        message = f"profiles {a} and {b} overlap at {format_box(ov.box)}"
        if auto:
            if ov.second_inside_first:
                message += (
                    f"; under auto, sticky first-fit never selects {b} (it lies inside {a}, "
                    "which is tried first) unless a phase pins it"
                )
            else:
                message += (
                    f"; under auto, sticky first-fit keeps whichever of them is active while a "
                    f"shape there fits it, and otherwise picks {a}, the first that fits"
                )
        else:
            message += "; harmless under policy pinned (each phase names its profile)"
        warn(("profiles", ov.second), message)
    found = gaps(profiles, symbols)
    if found:
        shown = "; ".join(format_box(g.box) for g in found[:MAX_GAPS_SHOWN])
        more = f" (and {len(found) - MAX_GAPS_SHOWN} more)" if len(found) > MAX_GAPS_SHOWN else ""
        domain = ", ".join(f"{s} {lo}..{hi}" for s, (lo, hi) in manifest.export_domain().items())
        warn(
            ("profiles",),
            f"gap: shapes inside the export domain ({domain}) that no profile accepts: "
            f"{shown}{more}; requests there fail at run time — widen a profile or add one",
            at_key=True,
        )
    return out
