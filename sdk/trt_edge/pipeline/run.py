"""`build()`: the stages of `trt_edge.pipeline.stages`, wired together with a cache between them.

    load ─▶ plan ─▶ export ─▶ lower ─▶ bundle (staged) ─▶ validate (the staged copy) ─▶ commit

What kind of model is built — a plain module, a Hugging Face causal LM, with or
without a quantization step — is the *recipe*'s business (`trt_edge.pipeline.recipes`):
the stages here ask it what enters each cache key, how to export, which files the
bundle gains and what validation runs, and never branch on the model kind.

Each stage is timed under its name and reported as typed events
(`trt_edge.pipeline.events`: the progress display, `--events FILE` and the container
build's host read them). The outputs of export, lower and validate are cached under
keys made of everything that can change them (model sources, the manifest's inputs
and profiles, backend, precision, the recipe and its steps, package versions, the
installed versions of the model's own requirements, the environment that runs the
stage and the build code itself), so an unchanged rebuild touches neither
torch.export nor the backend — nor even imports torch — and a stage computed in one
environment (the local venv, a builder image) is never reused by a build in another.
`bundle.json` says, per stage, whether it came from the cache and which environment
computed it. The manifest is loaded once per build.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from trt_edge_runner.bundle_format import MODEL_PTE, DelegateInfo, TensorSpec, canonical_json
from trt_edge_runner.durable import write_atomic

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.bundle import (
    StagedBundle,
    bundle_dir_name,
    make_bundle_manifest,
    package_versions,
    write_bundle_json,
    write_file,
)
from trt_edge.pipeline.cache import (
    StageCache,
    cache_key,
    default_cache_dir,
    origin_entry,
    read_origin,
)
from trt_edge.pipeline.code_digest import EXPORT_ENTRIES, VALIDATE_ENTRIES, stage_code_digest
from trt_edge.pipeline.environment import BuildEnvironment, current_environment
from trt_edge.pipeline.errors import (
    BadInputError,
    LoweringError,
    ManifestInvalidError,
    ValidationFailedError,
)
from trt_edge.pipeline.events import (
    BackendChosen,
    BuildWarning,
    BundleWritten,
    Emitter,
    EngineProgress,
    EventSink,
    StageFinished,
    StageStarted,
)
from trt_edge.pipeline.lower import BackendChoice, EngineBuild, Lowered, choose_backend
from trt_edge.pipeline.peak_memory import peak_rss_bytes, release_memory, reset_peak
from trt_edge.pipeline.plan import ExportPlan, make_plan
from trt_edge.pipeline.recipes import Recipe, recipe_for
from trt_edge.pipeline.stages import BUNDLE, COMMIT, EXPORT, LOAD, LOWER, PLAN, VALIDATE, Stage
from trt_edge.pipeline.validate import ValidationReport
from trt_edge.pipeline.validate_engines import engines_unrunnable_here, validate_engine_records
from trt_edge.targets.catalog import Target

log = structlog.get_logger("trt_edge.pipeline")

VALIDATION_REPORT = "reports/validation.json"


@dataclass(frozen=True)
class BuildOptions:
    out_dir: Path
    backend: str | None = None  # overrides the manifest's build.backend
    cache_dir: Path | None = None  # default: $TRT_EDGE_CACHE or ~/.cache/trt-edge
    use_cache: bool = True  # False: rebuild every stage (results are still stored)
    source_date_epoch: int | None = None  # default: $SOURCE_DATE_EPOCH, else manifest mtime
    events: Sequence[EventSink] = ()  # told every `BuildEvent` (progress display, --events)
    target: str | None = None  # a catalog id; default: the manifest's first target
    manifest: ResolvedManifest | None = None  # already loaded by the caller (loaded once)
    memory_headroom_mib: int | None = None  # overrides the manifest's build.memory_headroom_mib


@dataclass(frozen=True)
class BuildResult:
    """What a build produced. `stage_seconds`, `stage_peak_rss` (bytes: the process's peak
    resident memory during the stage, `trt_edge.pipeline.peak_memory`) and `cached` are
    keyed by stage name, in the order the stages ran (the order of `STAGES`; a stage that
    was not needed is absent)."""

    bundle_dir: Path
    report: ValidationReport
    stage_seconds: dict[str, float]
    cached: dict[str, bool] = field(default_factory=dict)
    backend: str = ""
    backend_reason: str = ""
    memory_warnings: tuple[str, ...] = ()  # boards of the target that cannot hold the bundle
    stage_peak_rss: dict[str, int] = field(default_factory=dict)


def _code_digest(*roots: Path, names: tuple[str, ...] | None = None) -> str:
    """Hash of our own sources: a change to the build code invalidates its cached outputs."""
    digest = hashlib.sha256()
    for root in roots:
        paths = sorted(root.rglob("*.py")) if names is None else [root / n for n in names]
        for path in paths:
            if path.is_file():
                digest.update(path.relative_to(root).as_posix().encode() + b"\0")
                digest.update(path.read_bytes())
    return digest.hexdigest()


# Files the recipe adds to the export and lower cache entries (tokenizer, llm facts).
RECIPE_PREFIX = "llm/"


def _io_doc(manifest: ResolvedManifest) -> dict[str, Any]:
    return {
        "inputs": [
            {"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "values": t.values}
            for t in manifest.inputs
        ],
        "profiles": [
            {"name": p.name, "dims": {s: [r.min, r.opt, r.max] for s, r in p.dims.items()}}
            for p in manifest.profiles
        ],
    }


def _source_date(options: BuildOptions, manifest: ResolvedManifest) -> tuple[int, str]:
    if options.source_date_epoch is not None:
        return options.source_date_epoch, "option"
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env:
        try:
            return int(env), "SOURCE_DATE_EPOCH"
        except ValueError:
            raise BadInputError(
                f"SOURCE_DATE_EPOCH={env!r} is not an integer number of seconds"
            ) from None
    return int(manifest.source_path.stat().st_mtime), "manifest-mtime"


def _outputs_to_json(outputs: tuple[TensorSpec, ...]) -> bytes:
    data: bytes = canonical_json(
        [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape)} for t in outputs]
    )
    return data


def _outputs_from_json(data: bytes) -> tuple[TensorSpec, ...]:
    return tuple(
        TensorSpec(name=o["name"], dtype=o["dtype"], shape=tuple(o["shape"]))
        for o in json.loads(data)
    )


ENGINES_JSON = "engines.json"  # the lower stage's TensorRT builder times, beside the .pte


def _engines_to_json(engines: tuple[EngineBuild, ...]) -> bytes:
    data: bytes = canonical_json([dataclasses.asdict(e) for e in engines])
    return data


def _engines_from_json(data: bytes | None) -> tuple[EngineBuild, ...]:
    return tuple(EngineBuild(**e) for e in json.loads(data)) if data else ()


class _Timer:
    """Times each stage, measures its peak RSS (after handing back what earlier stages
    freed, so each figure is the stage's own) and reports both as `StageStarted`/
    `StageFinished` events (and logs)."""

    def __init__(self, emit: Emitter) -> None:
        self.seconds: dict[str, float] = {}
        self.peak_rss: dict[str, int] = {}
        self.cached: dict[str, bool] = {}
        self.emit = emit

    @contextmanager
    def stage(self, stage: Stage) -> Iterator[dict[str, bool]]:
        name = stage.name
        flag = {"cached": False}
        self.emit(StageStarted(name))
        log.debug("stage_started", stage=name)
        release_memory()
        reset_peak()
        started = time.perf_counter()
        yield flag
        elapsed = time.perf_counter() - started
        peak = peak_rss_bytes()
        self.seconds[name] = elapsed
        self.peak_rss[name] = peak
        self.cached[name] = flag["cached"]
        log.info(
            "stage_finished",
            stage=name,
            seconds=round(elapsed, 3),
            cached=flag["cached"],
            peak_rss_mib=peak // 2**20,
        )
        self.emit(StageFinished(name, elapsed, flag["cached"], peak))


def load(manifest_path: Path) -> ResolvedManifest:
    from trt_edge.manifest import ManifestError, load_manifest_or_raise

    try:
        return load_manifest_or_raise(manifest_path)
    except ManifestError as exc:
        raise ManifestInvalidError(exc.path, exc.diagnostics) from exc


def _build_target(manifest: ResolvedManifest, requested: str | None) -> Target:
    """The catalog target this build is for: `--target`, else the manifest's first."""
    from trt_edge.targets import load_catalog
    from trt_edge.targets.catalog import UnknownTargetError

    target_id = requested or (manifest.targets[0] if manifest.targets else "cpu-x86_64")
    if requested is not None and manifest.targets and requested not in manifest.targets:
        raise BadInputError(
            f"--target {requested}: {manifest.where('build', 'targets')}: the manifest builds "
            f"for {', '.join(manifest.targets)} only",
            hint="add the target to build.targets in the manifest, or pick one of those",
        )
    try:
        return load_catalog().get(target_id)
    except UnknownTargetError as exc:
        raise BadInputError(f"{manifest.source_path}: {exc}") from exc


def _target_fingerprint(target: Target, backend: str) -> dict[str, Any]:
    """The bundle's `target`: what a device of the target must match for `backend` to run
    there (the catalog says which fields each backend asks: an XNNPACK bundle the CPU
    architecture, a TensorRT one also SM, CUDA, TensorRT(-RTX), JetPack/L4T)."""
    from trt_edge.targets import load_catalog

    return dict(load_catalog().fingerprint(target, backend))


def _target_has_tensorrt(target: dict[str, Any]) -> bool:
    """Whether the fingerprinted target's devices run TensorRT (a CPU bundle then uses
    only their CPU); read from the catalog, as the fingerprint asks only what it needs."""
    from trt_edge.targets import load_catalog

    return load_catalog().get(str(target["id"])).requires_tensorrt


class _Build:
    """One build's state and its stages: the manifest (loaded once), the recipe, the
    backend and target, the cache, the lazily loaded model and, per cacheable stage
    that ran, the environment that computed its output."""

    def __init__(self, manifest_path: Path, options: BuildOptions, emit: Emitter) -> None:
        """The `load` stage's work: before anything slow."""
        from trt_edge.pipeline.requirements import check_requirements

        self.options = options
        self.emit = emit
        self.timer = _Timer(emit)
        with self.timer.stage(LOAD):
            self.manifest = manifest = options.manifest or load(manifest_path)
            # The model's own packages, at versions it allows.
            self.requirements = check_requirements(manifest)
            self.environment: BuildEnvironment = current_environment()
            target = _build_target(manifest, options.target)
            self.choice: BackendChoice = choose_backend(
                options.backend or manifest.backend, target, self._engine_progress
            )
            self.recipe: Recipe = recipe_for(manifest, self.choice.backend.name)
            self.digest = self.recipe.source_digest()
            self.target = _target_fingerprint(target, self.choice.backend.name)
            self.source_date, self.source_date_from = _source_date(options, manifest)
        self.packages = package_versions(self.choice.backend.packages() + self.recipe.packages())
        self.origins: dict[str, str | None] = {}  # stage name -> environment id
        self.cache = StageCache(
            (options.cache_dir or default_cache_dir()).expanduser(),
            enabled=options.use_cache,
            on_event=self._cache_event,
        )
        self._model: Any = None
        self.recipe_files: dict[str, bytes] = {}  # files the recipe made with the export
        self.engines: tuple[EngineBuild, ...] = ()  # TensorRT: the builder's time per engine

    def _engine_progress(self, phase: str, step: int, steps: int) -> None:
        """The TensorRT builder's top-level phases, into the build's progress display."""
        self.emit(EngineProgress(phase, step, steps))

    def _cache_event(self, name: str, fields: dict[str, Any]) -> None:
        if name == "cache_hit":
            log.debug(name, **fields)
            return
        log.warning(name, **fields)
        detail = ", ".join(f"{k}={v}" for k, v in fields.items())
        self.emit(BuildWarning(name, f"stage cache: {name.replace('_', ' ')} ({detail})"))

    def announce(self) -> None:
        """Say which backend and recipe build what for which target, and what that means."""
        backend, target_id = self.choice.backend.name, str(self.target.get("id"))
        log.info(
            "backend_chosen",
            backend=backend,
            reason=self.choice.reason,
            recipe=self.recipe.name,
            model=self.manifest.name,
            target=target_id,
        )
        self.emit(BackendChosen(backend, self.choice.reason, self.recipe.name, target_id))
        if _target_has_tensorrt(self.target) and backend != "tensorrt":
            hint = (
                "this bundle runs on the target's CPU only; build with --backend tensorrt "
                "in the target's builder image for GPU execution"
            )
            log.warning("target_expects_tensorrt", target=target_id, backend=backend, hint=hint)
            self.emit(BuildWarning("target_expects_tensorrt", f"target {target_id}: {hint}"))

    # -- cache keys ---------------------------------------------------------------------
    def export_key(self) -> str:
        return cache_key(
            stage=EXPORT.name,
            model=self.recipe.model_key(),
            steps=self.recipe.steps_key(),
            source=self.digest.sha256,
            io=_io_doc(self.manifest),
            packages=self.packages,
            requirements=self.requirements,
            environment=self.environment.id,
            code=stage_code_digest(EXPORT_ENTRIES),
        )

    def lower_key(self, export_key: str) -> str:
        return cache_key(
            stage=LOWER.name,
            export=export_key,
            backend=self.choice.backend.name,
            backend_identity=self.choice.backend.identity(),
            precision=self.manifest.precision,
            steps=self.recipe.steps_key(),
            environment=self.environment.id,
        )

    def validate_key(self, pte_sha256: str) -> str:
        manifest = self.manifest
        return cache_key(
            stage=VALIDATE.name,
            pte=pte_sha256,
            io=_io_doc(manifest),
            tolerance=[manifest.atol, manifest.rtol],
            runtime={"policy": manifest.runtime.policy, "phases": dict(manifest.runtime.phases)},
            code=stage_code_digest(VALIDATE_ENTRIES),
            requirements=self.requirements,
            environment=self.environment.id,
            **self.recipe.validate_key(self.digest.sha256, self.recipe_files),
        )

    # -- the cache ----------------------------------------------------------------------
    def cached(self, stage: Stage, key: str) -> dict[str, bytes] | None:
        """The stage's cache entry, noting where it was computed (read from the entry)."""
        hit = self.cache.get(stage.name, key)
        if hit is not None:
            self.origins[stage.name] = read_origin(hit)
        return hit

    def store(self, stage: Stage, key: str, files: Mapping[str, bytes | Path]) -> None:
        """Store what this environment just computed for the stage, with its origin."""
        self.origins[stage.name] = self.environment.id
        self.cache.put(stage.name, key, {**files, **origin_entry(self.environment.id)})

    def stage_provenance(self) -> dict[str, Any]:
        """`provenance.stages`: per cacheable stage that ran, whether its output came from
        the cache and which environment computed it. A stage absent here was not needed
        (a later stage's output came from the cache)."""
        return {
            name: {"cached": self.timer.cached.get(name, False), "computed_in": origin}
            for name, origin in self.origins.items()
        }

    def model(self) -> Any:
        if self._model is None:
            self._model = self.recipe.load()
        return self._model

    # -- export and lower -------------------------------------------------------------
    def program(self, plan: ExportPlan, key: str) -> Any:
        """The ExportedProgram: from the cache or by the recipe's export. The recipe's
        files (e.g. the tokenizer and the `llm` facts) are cached beside it."""
        import torch

        with self.timer.stage(EXPORT) as flag:
            hit = self.cached(EXPORT, key)
            if hit is not None:
                flag["cached"] = True
                self.recipe_files = _recipe_entries(hit)
                return torch.export.load(io.BytesIO(hit["program.pt2"]))
            loaded = self.model()
            program = self.recipe.export(plan, loaded)
            self.recipe_files = self.recipe.files(loaded.module)
            with self.cache.scratch_dir() as scratch:
                # Saved to a file, not to memory: the archive holds a copy of every weight.
                torch.export.save(program, scratch / "program.pt2")
                files: dict[str, bytes | Path] = {"program.pt2": scratch / "program.pt2"}
                files.update({RECIPE_PREFIX + n: d for n, d in self.recipe_files.items()})
                self.store(EXPORT, key, files)
            return program

    def lowered(self, plan: ExportPlan) -> tuple[Lowered, tuple[TensorSpec, ...]]:
        export_key = self.export_key()
        key = self.lower_key(export_key)
        choice = self.choice
        hit = self.cached(LOWER, key)
        if hit is not None:
            with self.timer.stage(LOWER) as flag:
                flag["cached"] = True
                ptd = {n[len("ptd/") :]: d for n, d in hit.items() if n.startswith("ptd/")}
                engines = _engines_from_json(hit.get(ENGINES_JSON))
                lowered = Lowered(choice.backend.name, hit[MODEL_PTE], ptd, engines)
                self.engines = engines
                self.recipe_files = _recipe_entries(hit)
                return lowered, _outputs_from_json(hit["outputs.json"])
        from trt_edge.pipeline.export import output_specs

        program = self.program(plan, export_key)
        self.release_model()  # the program holds what lowering needs
        with self.timer.stage(LOWER):
            try:
                lowered = choice.backend.lower(
                    program, self.manifest, plan, self.recipe.lowering(choice.backend.name)
                )
            except LoweringError as exc:
                raise LoweringError(
                    f"{self.manifest.source_path}: {exc.message}", hint=exc.hint
                ) from exc
            outputs = output_specs(self.manifest, program)
            self.engines = lowered.engines
            files = {
                MODEL_PTE: lowered.pte,
                "outputs.json": _outputs_to_json(outputs),
                ENGINES_JSON: _engines_to_json(lowered.engines),
            }
            files.update({f"ptd/{n}": d for n, d in lowered.ptd.items()})
            files.update({RECIPE_PREFIX + n: d for n, d in self.recipe_files.items()})
            self.store(LOWER, key, files)
        return lowered, outputs

    # -- bundle, validate, commit -----------------------------------------------------
    def write_staged(
        self, staged: Path, lowered: Lowered, outputs: tuple[TensorSpec, ...]
    ) -> tuple[DelegateInfo, ...]:
        """The `bundle` stage: the program, its data, the recipe's files and bundle.json."""
        from trt_edge.pipeline.delegates import read_delegates, signature_check_summary

        write_file(staged / MODEL_PTE, lowered.pte)
        # One external-data file is named model.ptd: the name the runner loads.
        for name, data in lowered.ptd.items():
            write_file(staged / ("model.ptd" if len(lowered.ptd) == 1 else name), data)
        for name, data in self.recipe.bundle_files(self.recipe_files).items():
            write_file(staged / name, data)
        self.outputs = outputs
        self.delegates = read_delegates(staged / MODEL_PTE, self.manifest)
        llm = self.recipe.llm_section(self.recipe_files, outputs)
        self.memory, self.memory_warnings = _memory(
            self.manifest, self.options, staged, llm, self.target, self.delegates
        )
        self.provenance: dict[str, Any] = {
            "manifest_sha256": self.manifest.source_sha256,
            "model_source_sha256": self.digest.sha256,
            "model_source_files": list(self.digest.files),
            "packages": self.packages,
            "source_date_epoch": self.source_date,
            "source_date_from": self.source_date_from,
            "builder": {"mode": "local"},
            "requirements": self.requirements,
            "environment": self.environment.provenance(),
            "backend_reason": self.choice.reason,
            # Where TensorRT profile signatures came from (the compile inputs, not the
            # engines) and hence what the cross-delegate check did and did not prove.
            "profile_signatures": signature_check_summary(self.delegates),
        }
        if self.engines:
            # The builder's time per engine: here, not in the engine's record inside the
            # .pte, so an engine rebuilt identically gives an identical program.
            self.provenance["engine_builds"] = [dataclasses.asdict(e) for e in self.engines]
        write_bundle_json(staged, self.document(staged))
        return self.delegates

    def document(self, staged: Path) -> Any:
        """bundle.json as it stands (validate joins `provenance.stages` at commit)."""
        self.provenance["stages"] = self.stage_provenance()
        doc = make_bundle_manifest(
            self.manifest,
            bundle_dir=staged,
            backend=self.choice.backend.name,
            target=self.target,
            outputs=self.outputs,
            delegates=self.delegates,
            provenance=self.provenance,
            llm=self.recipe.llm_section(self.recipe_files, self.outputs),
            quantization=self.recipe.record().get("quantization"),
        )
        return dataclasses.replace(doc, memory=self.memory)

    def release_model(self) -> None:
        """Let go of the model loaded for export when the recipe's validation does not run it
        (a causal LM is checked against its folder, loaded afresh by transformers): two
        copies of the weights must not be alive while the bundle runs."""
        if not self.recipe.validates_loaded_model:
            self._model = None

    def validate(self, plan: ExportPlan, staged: Path, pte_sha256: str) -> ValidationReport:
        key = self.validate_key(pte_sha256)
        with self.timer.stage(VALIDATE) as flag:
            hit = self.cached(VALIDATE, key)
            if hit is not None:
                flag["cached"] = True
                return ValidationReport(json.loads(hit["validation.json"]))
            unrunnable = engines_unrunnable_here(self.delegates)
            if unrunnable is not None:
                self.emit(BuildWarning("engine_not_executed", f"validation: {unrunnable}"))
                report = validate_engine_records(
                    staged,
                    self.manifest,
                    self.choice.backend.name,
                    self.delegates,
                    self.outputs,
                    unrunnable,
                )
            else:
                report = self.recipe.validate(
                    staged, plan, self.choice.backend.name, self.delegates, self.model
                )
            if report.ok:
                self.store(VALIDATE, key, {"validation.json": canonical_json(report.doc)})
            return report

    def refuse(self, report: ValidationReport) -> ValidationFailedError:
        failed = failed_report(self.options.out_dir, self.manifest)
        write_atomic(failed, canonical_json(report.doc))
        return ValidationFailedError(
            f"{self.manifest.source_path}: validation failed; the previous bundle (if any) is "
            f"unchanged. Report: {failed}\n  " + "\n  ".join(report.failures),
            report_path=str(failed),
        )

    def commit(self, staged: StagedBundle, report: ValidationReport) -> Path:
        write_file(staged.path / VALIDATION_REPORT, canonical_json(report.doc))
        write_bundle_json(staged.path, self.document(staged.path))
        bundle_dir = staged.commit()
        # A report of an earlier failed attempt no longer describes this bundle.
        failed_report(self.options.out_dir, self.manifest).unlink(missing_ok=True)
        return bundle_dir


def _recipe_entries(hit: dict[str, bytes]) -> dict[str, bytes]:
    return {n[len(RECIPE_PREFIX) :]: d for n, d in hit.items() if n.startswith(RECIPE_PREFIX)}


def failed_report(out_dir: Path, manifest: ResolvedManifest) -> Path:
    """Where a failed validation leaves its report: beside the bundle, never inside it."""
    return out_dir / f"{bundle_dir_name(manifest)}.validation-failed.json"


def build(manifest_path: Path | str, options: BuildOptions) -> BuildResult:
    """Build, validate and atomically write `OUT/<name>-<version>/`; raise `BuildError`s."""
    from trt_edge.pipeline.bundle import check_out_dir

    check_out_dir(options.out_dir)  # before the slow stages, not after them
    emit = Emitter(options.events)
    job = _Build(Path(manifest_path), options, emit)
    job.announce()
    with job.timer.stage(PLAN):
        plan = make_plan(job.manifest)
    lowered, outputs = job.lowered(plan)
    staged = StagedBundle(options.out_dir, bundle_dir_name(job.manifest))
    try:
        with job.timer.stage(BUNDLE):
            job.write_staged(staged.path, lowered, outputs)
            pte_sha256 = hashlib.sha256(lowered.pte).hexdigest()
        # Validation reads the staged files: the program's bytes (the size of the weights)
        # and the export's model are not kept alive beside the runner's copy.
        del lowered
        job.release_model()
        report = job.validate(plan, staged.path, pte_sha256)
        if not report.ok:
            raise job.refuse(report)
        with job.timer.stage(COMMIT):
            bundle_dir = job.commit(staged, report)
    except BaseException:
        staged.discard()
        raise
    log.info("bundle_written", path=str(bundle_dir), model=job.manifest.name)
    emit(BundleWritten(str(bundle_dir), job.manifest.name))
    return BuildResult(
        bundle_dir=bundle_dir,
        report=report,
        stage_seconds=dict(job.timer.seconds),
        stage_peak_rss=dict(job.timer.peak_rss),
        cached=dict(job.timer.cached),
        backend=job.choice.backend.name,
        backend_reason=job.choice.reason,
        memory_warnings=job.memory_warnings,
    )


def _memory(
    manifest: ResolvedManifest,
    options: BuildOptions,
    staged: Path,
    llm: Any,
    target: dict[str, Any],
    delegates: tuple[DelegateInfo, ...],
) -> tuple[Any, tuple[str, ...]]:
    """The bundle's `memory` section and a warning per board of the target that cannot
    hold it (`trt_edge.memory`; logged here, shown again in the build summary)."""
    from trt_edge.memory import bundle_memory, over_budget
    from trt_edge.targets import load_catalog

    memory = bundle_memory(staged, llm, delegates=delegates)
    headroom = options.memory_headroom_mib
    if headroom is None:
        headroom = manifest.memory_headroom_mib
    warnings = tuple(over_budget(memory, load_catalog().get(str(target["id"])), headroom))
    for warning in warnings:
        log.warning("memory_over_budget", detail=warning)
    return memory, warnings
