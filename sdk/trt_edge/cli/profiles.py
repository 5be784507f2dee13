"""`trt-edge profiles MANIFEST`: the profile table, the export domain and a drawing per symbol.

Print the profile table (index, name, ranges, phases) and, per symbol, a
drawing of every profile's range with overlaps and gaps marked; the manifest's
warnings (what each overlap or gap means under the policy) follow on stdout, each
on its own line. Exit codes as `trt-edge validate`: 0 ok, 1 the manifest has
errors, 2 it cannot be read (or bad flags).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from trt_edge_runner.cli_shell import Command

from trt_edge.cli._manifest import add_manifest_argument, load_readable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_manifest_argument(parser)


def table(manifest: Any) -> list[str]:
    symbols = manifest.symbols()
    phases_by_index: dict[int, list[str]] = {}
    for phase, target in manifest.runtime.phases.items():
        if isinstance(target, int):
            phases_by_index.setdefault(target, []).append(phase)
    header = ["#", "profile", *[f"{s} (min/opt/max)" for s in symbols], "phases"]
    rows = []
    for i, p in enumerate(manifest.profiles):
        cells = [str(i), p.name]
        for s in symbols:
            r = p.dims[s]
            cells.append(f"{r.min}/{r.opt}/{r.max}")
        pinned = phases_by_index.get(i, [])
        cells.append(", ".join(pinned) if pinned else "-")
        rows.append(cells)
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True)).rstrip()

    out = [line(header), line(["─" * w for w in widths])]
    out += [line(r) for r in rows]
    auto = [ph for ph, t in manifest.runtime.phases.items() if t == "auto"]
    policy = f"policy {manifest.runtime.policy}"
    if auto:
        policy += f"; phases on auto (sticky first-fit): {', '.join(auto)}"
    out.append(policy)
    return out


def run(args: argparse.Namespace) -> int:
    from trt_edge.manifest import analysis
    from trt_edge.manifest.diagnostics import print_diagnostics
    from trt_edge.manifest.drawing import draw_symbol

    result = load_readable(args.manifest)
    if result.manifest is None:  # the job ran and found problems: shown as validate shows them
        print_diagnostics(result.diagnostics, result.path, sys.stderr, color=sys.stderr.isatty())
        return 1
    m = result.manifest
    lines = [f"{m.name} {m.version}: {len(m.profiles)} profile(s)", ""]
    lines += table(m)
    domain = m.export_domain()
    symbols = m.symbols()
    if not symbols:
        lines += ["", "all inputs are static: no symbols, every call uses profile 0"]
    for symbol in symbols:
        lines.append("")
        lines += draw_symbol(symbol, m.profiles, domain[symbol])
    found_overlaps = analysis.overlaps(m.profiles, symbols)
    found_gaps = analysis.gaps(m.profiles, symbols)
    if len(symbols) > 1 or found_overlaps or found_gaps:
        lines.append("")
    for ov in found_overlaps:
        a, b = m.profiles[ov.first].name, m.profiles[ov.second].name
        lines.append(
            f"overlap: #{ov.first} {a} and #{ov.second} {b} at {analysis.format_box(ov.box)}"
        )
    for gap in found_gaps:
        lines.append(f"gap: no profile accepts {analysis.format_box(gap.box)}")
    print("\n".join(lines))
    if result.warnings:
        # Part of the report, so on the same stream after it, set apart by a blank line:
        # a reader that joins stdout and stderr cannot run a warning into the last line.
        print(f"\n{len(result.warnings)} warning(s):")
        print_diagnostics(result.warnings, result.path, sys.stdout, color=sys.stdout.isatty())
    return 0


COMMAND = Command(
    "show a manifest's optimization profiles, export domain, overlaps and gaps",
    add_arguments=add_arguments,
    run=run,
)
