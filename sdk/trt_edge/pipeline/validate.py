"""The `validate` stage: run the staged bundle with the real ExecuTorch runtime vs eager.

Validation goes through `trt_edge_runner.Runner` on the *staged* bundle
directory — the very files and the very code path a device uses — so a bundle
that passes here is one the runner accepts. Per profile: samples at min, opt and
max run pinned to that profile and must match eager PyTorch within the
manifest's atol/rtol (np.allclose semantics); the outputs at each profile's max
must come back whole (outputs are planned at the union envelope, and a nonzero
profile may produce the largest one); one step outside each profile must be
refused with the runner's error. The report is deterministic (no timings, no
paths): it is hashed into bundle.json.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from trt_edge_runner.bundle_format import DelegateInfo, Profile, RuntimePolicy, TensorSpec
from trt_edge_runner.errors import RunnerError
from trt_edge_runner.runner import Runner

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.delegates import signature_check_summary
from trt_edge.pipeline.errors import ValidationFailedError
from trt_edge.pipeline.plan import ExportPlan, Sample, sample_inputs

if TYPE_CHECKING:
    from trt_edge_runner.runner import Runner


@dataclass(frozen=True)
class ValidationReport:
    """The report document (as written to reports/validation.json) and its verdict."""

    doc: dict[str, Any]

    @property
    def ok(self) -> bool:
        return bool(self.doc["ok"])

    @property
    def failures(self) -> list[str]:
        return list(self.doc["failures"])


def round_figure(x: float) -> float:
    """4 significant digits: enough to read, stable against last-bit noise in the hash."""
    return float(f"{x:.4g}")


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def compare_arrays(got: np.ndarray, want: np.ndarray, atol: float, rtol: float) -> dict[str, Any]:
    """max abs/rel error of `got` against `want` and whether it is within atol + rtol*|want|
    (np.allclose semantics) and finite."""
    if got.shape != want.shape:
        return {
            "shape": list(got.shape),
            "expected_shape": list(want.shape),
            "max_abs": None,
            "max_rel": None,
            "ok": False,
        }
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    diff = np.abs(g - w)
    max_abs = float(diff.max()) if diff.size else 0.0
    scale = float(np.abs(w).max()) if w.size else 0.0
    ok = bool(np.all(diff <= atol + rtol * np.abs(w))) and bool(np.all(np.isfinite(g)))
    return {
        "shape": list(got.shape),
        "max_abs": round_figure(max_abs),
        "max_rel": round_figure(max_abs / scale) if scale > 0 else round_figure(max_abs),
        "ok": ok,
    }


def _eager(module: Any, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """The reference outputs; a model that raises here fails validation, not the CLI."""
    import torch

    try:
        with torch.no_grad():
            result = module(*(torch.from_numpy(a.copy()) for a in arrays))
    except Exception as exc:
        shapes = ", ".join(str(list(a.shape)) for a in arrays)
        raise ValidationFailedError(
            f"eager PyTorch raised {type(exc).__name__}: {exc} on inputs of shapes {shapes}; "
            "the model must run every shape its profiles accept"
        ) from exc
    return [t.detach().numpy() for t in _flatten(result)]


@dataclass(frozen=True)
class StagedRun:
    """The runner on a staged bundle and what every check reads beside it: the inputs it
    takes, the tolerance against eager, and how a runner error names the model (the
    staging directory, `scrub`, replaced by the model's name: the report holds no paths)."""

    runner: Runner
    inputs: tuple[TensorSpec, ...]
    name: str
    scrub: str
    atol: float = 0.0
    rtol: float = 0.0

    def error(self, exc: Exception) -> str:
        return str(exc).replace(self.scrub, self.name)

    def close(self, got: Any, want: np.ndarray) -> dict[str, Any]:
        return compare_arrays(np.asarray(got), want, self.atol, self.rtol)


def validate_bundle(
    staged_dir: Path,
    manifest: ResolvedManifest,
    plan: ExportPlan,
    module: Any,
    backend: str,
    delegates: tuple[DelegateInfo, ...] = (),
) -> ValidationReport:
    """Run every sample and probe through the runner on `staged_dir`; build the report."""
    failures: list[str] = []
    run = StagedRun(
        open_staged(staged_dir, manifest),
        manifest.inputs,
        manifest.name,
        str(staged_dir),
        manifest.atol,
        manifest.rtol,
    )
    parity, per_profile = _check_samples(run, manifest.profiles, plan, module, failures)
    outside = probe_outside(run, plan, failures)
    phases = _check_phases(run, manifest.runtime, manifest.profiles, module, failures)
    biggest = max(per_profile, key=lambda e: e["bytes"])["profile"] if per_profile else None
    sections = {
        "parity": parity,
        "largest_output": {"per_profile": per_profile, "largest_profile": biggest},
        "outside": outside,
        "phases": phases,
    }
    return validation_report(manifest, backend, run.runner, delegates, sections, failures)


def _check_samples(
    run: StagedRun,
    profiles: tuple[Profile, ...],
    plan: ExportPlan,
    module: Any,
    failures: list[str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each sample pinned to its profile against eager; and, per profile, the outputs at its
    largest sample (its max, else the first it ran), which must come back whole."""
    parity: list[dict[str, Any]] = []
    largest: dict[int, dict[str, Any]] = {}
    for sample in plan.samples:
        profile = profiles[sample.profile]
        arrays = sample_inputs(run.inputs, sample.symbols, sample.seed)
        entry: dict[str, Any] = {
            "profile": sample.profile,
            "profile_name": profile.name,
            "point": sample.point,
            "symbols": dict(sample.symbols),
        }
        parity.append(entry)
        try:
            result = run.runner.run(sample.profile, arrays)
        except RunnerError as exc:
            entry.update(ok=False, error=run.error(exc))
            failures.append(
                f"profile {sample.profile} ({profile.name}) at {sample.point} "
                f"{sample.symbols}: the runner failed: {entry['error']}"
            )
            continue
        ok = _check_sample(
            run, sample, profile.name, result, _eager(module, arrays), entry, failures
        )
        if sample.point == "max" or sample.profile not in largest:
            largest[sample.profile] = {
                "profile": sample.profile,
                "profile_name": profile.name,
                "symbols": dict(sample.symbols),
                "shapes": [list(np.asarray(o).shape) for o in result.outputs],
                "bytes": int(sum(np.asarray(o).nbytes for o in result.outputs)),
                "fits": ok,
            }
    return parity, [largest[i] for i in sorted(largest)]


def _check_sample(
    run: StagedRun,
    sample: Sample,
    profile_name: str,
    result: Any,
    want: list[np.ndarray],
    entry: dict[str, Any],
    failures: list[str],
) -> bool:
    """One sample's outputs against eager's `want`, into `entry`; whether it passed."""
    outputs = [
        {"output": i, **run.close(g, w)}
        for i, (g, w) in enumerate(zip(result.outputs, want, strict=False))
    ]
    ok = len(result.outputs) == len(want) and all(o["ok"] for o in outputs)
    entry.update(selected_profile=result.profile, outputs=outputs, ok=ok)
    if result.profile != sample.profile:
        ok = entry["ok"] = False
        failures.append(
            f"profile {sample.profile} at {sample.point}: the runner selected profile "
            f"{result.profile}"
        )
    if not ok:
        bad = [o for o in outputs if not o["ok"]]
        failures.append(
            f"profile {sample.profile} ({profile_name}) at {sample.point} {sample.symbols}: "
            + (
                "; ".join(
                    f"output {o['output']} max abs error {o['max_abs']} "
                    f"(atol {run.atol}, rtol {run.rtol})"
                    for o in bad
                )
                or f"{len(result.outputs)} outputs, eager gave {len(want)}"
            )
        )
    return ok


def open_staged(staged_dir: Path, manifest: ResolvedManifest) -> Runner:
    """The device runner on the staged bundle, every file checked as a device checks it; a
    bundle it refuses fails validation, named by the model rather than the staging path."""
    try:
        return Runner.open(staged_dir, verify_files=True)
    except RunnerError as exc:
        raise ValidationFailedError(
            f"{manifest.source_path}: the device runner cannot open the built bundle: "
            + str(exc).replace(str(staged_dir), manifest.name)
        ) from exc


def validation_report(
    manifest: ResolvedManifest,
    backend: str,
    runner: Runner,
    delegates: tuple[DelegateInfo, ...],
    sections: dict[str, Any],
    failures: list[str],
) -> ValidationReport:
    """The report of any model: what was validated and how, the model kind's own `sections`
    (in their order), the delegates as bundle.json records them, and the verdict."""
    doc = {
        "model": {"name": manifest.name, "version": manifest.version},
        "backend": backend,
        "tolerance": {"atol": manifest.atol, "rtol": manifest.rtol},
        "runner_mode": runner.mode,
        **sections,
        "delegates": [d.to_dict() for d in delegates],  # as in bundle.json
        "profile_signature_check": signature_check_summary(delegates),
        "ok": not failures,
        "failures": failures,
    }
    return ValidationReport(doc)


def probe_outside(run: StagedRun, plan: ExportPlan, failures: list[str]) -> list[dict[str, Any]]:
    """One step past each profile's bounds: the runner must refuse every probe."""
    outside: list[dict[str, Any]] = []
    for probe in plan.outside:
        arrays = sample_inputs(run.inputs, probe.symbols, seed=7)
        entry = {
            "profile": probe.profile,
            "symbol": probe.symbol,
            "value": probe.value,
            "bound": probe.bound,
        }
        try:
            run.runner.run(probe.profile, arrays)
        except RunnerError as exc:
            entry.update(rejected=True, error_type=type(exc).__name__, error=run.error(exc))
        else:
            entry.update(rejected=False)
            failures.append(
                f"profile {probe.profile}: {probe.symbol}={probe.value} (one past its "
                f"{probe.bound}) was accepted; the runner must refuse it"
            )
        outside.append(entry)
    return outside


def _accepts(profile: Profile, symbols: dict[str, int]) -> bool:
    dims = profile.dims
    return all(dims[s].min <= v <= dims[s].max for s, v in symbols.items() if s in dims)


def _check_phases(
    run: StagedRun,
    runtime: RuntimePolicy,
    profiles: tuple[Profile, ...],
    module: Any,
    failures: list[str],
) -> list[dict[str, Any]]:
    """Run every phase of the runtime policy the way an application would: by name.

    A pinned phase runs at its profile's opt and must land on that profile; an
    `auto` phase runs at every profile's opt in order and must land on a profile
    that accepts the shape. Proves the policy compiled into bundle.json does
    what the manifest said, through the runner's own phase guard.
    """
    entries: list[dict[str, Any]] = []
    for phase, target in runtime.phases.items():
        indices = range(len(profiles)) if target == "auto" else [int(target)]
        for index in indices:
            symbols = profiles[index].opt_symbols()
            arrays = sample_inputs(run.inputs, symbols, seed=500 + index)
            entry: dict[str, Any] = {"phase": phase, "target": target, "symbols": symbols}
            try:
                result = run.runner.run(phase, arrays)
            except RunnerError as exc:
                entry.update(ok=False, error=run.error(exc))
                failures.append(f"phase {phase!r} at {symbols}: {entry['error']}")
                entries.append(entry)
                continue
            want = _eager(module, arrays)
            parity = all(run.close(g, w)["ok"] for g, w in zip(result.outputs, want, strict=False))
            landed = (
                _accepts(profiles[result.profile], symbols)
                if target == "auto"
                else result.profile == index
            )
            entry.update(selected_profile=result.profile, ok=parity and landed)
            if not entry["ok"]:
                failures.append(
                    f"phase {phase!r} ({target}) at {symbols}: ran on profile "
                    f"{result.profile}, parity {'ok' if parity else 'failed'}"
                )
            entries.append(entry)
    return entries


def parity_summary(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per profile: worst max-abs error over its samples and whether all passed."""
    rows: dict[int, dict[str, Any]] = {}
    for entry in doc.get("parity", []):
        row = rows.setdefault(
            entry["profile"],
            {
                "profile": entry["profile"],
                "name": entry["profile_name"],
                "max_abs": 0.0,
                "ok": True,
            },
        )
        row["ok"] = row["ok"] and entry["ok"]
        for out in entry.get("outputs", []):
            if out["max_abs"] is not None:
                row["max_abs"] = max(row["max_abs"], out["max_abs"])
    return [rows[i] for i in sorted(rows)]


def render_table(doc: dict[str, Any]) -> Any:
    """A rich Table of the parity runs, the largest outputs and the outside probes."""
    from rich.table import Table

    delegates = [d["backend_id"] for d in doc.get("delegates", [])]
    counts = {name: delegates.count(name) for name in sorted(set(delegates))}
    caption = "delegates: " + (
        ", ".join(f"{name} x{n}" for name, n in counts.items()) or "none (portable kernels)"
    )
    table = Table(title=f"validation: {doc['model']['name']} ({doc['backend']})", caption=caption)
    if "engines" in doc:  # built, not executed here (trt_edge.pipeline.validate_engines)
        for column in ("delegate", "engine", "check", "result"):
            table.add_column(column)
        for engine in doc["engines"]:
            for check, ok in engine["checks"].items():
                table.add_row(
                    str(engine["delegate"]),
                    engine.get("flavour", "-"),
                    check,
                    "ok" if ok else "FAIL",
                )
        table.caption = f"{caption}; not executed: {doc['execution']['reason']}"
        return table
    for column in ("profile", "point", "symbols", "max abs err", "max rel err", "result"):
        table.add_column(column)
    for entry in doc["parity"]:
        outs = entry.get("outputs", [])
        abs_errs = [o["max_abs"] for o in outs if o["max_abs"] is not None]
        rel_errs = [o["max_rel"] for o in outs if o["max_rel"] is not None]
        table.add_row(
            f"{entry['profile']} {entry['profile_name']}",
            entry["point"],
            " ".join(f"{k}={v}" for k, v in entry["symbols"].items()),
            f"{max(abs_errs):.3g}" if abs_errs else "-",
            f"{max(rel_errs):.3g}" if rel_errs else "-",
            "ok" if entry["ok"] else "FAIL",
        )
    for probe in doc["outside"]:
        table.add_row(
            f"{probe['profile']}",
            f"outside {probe['bound']}",
            f"{probe['symbol']}={probe['value']}",
            "",
            "",
            "rejected" if probe["rejected"] else "ACCEPTED (FAIL)",
        )
    return table
