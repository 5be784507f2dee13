"""`build()`: the stages of `trt_edge.pipeline.stages`, wired together with a cache between them.

    load ─▶ plan ─▶ export ─▶ lower ─▶ bundle (staged) ─▶ validate (the staged copy) ─▶ commit

Each stage is timed under its name (the progress display and `BuildResult` read
them). The outputs of export, lower and validate are cached under keys made of
everything that can change them (model sources, the manifest's inputs and
profiles, backend, precision, package versions, the installed versions of the
model's own requirements, the environment that runs the stage and the build code
itself), so an unchanged rebuild touches neither torch.export nor the backend — nor
even imports torch — and a stage computed in one environment (the local venv, a
builder image) is never reused by a build in another. `bundle.json` says, per stage,
whether it came from the cache and which environment computed it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

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
from trt_edge.pipeline.lower import BackendChoice, Lowered, choose_backend
from trt_edge.pipeline.plan import ExportPlan, make_plan
from trt_edge.pipeline.stages import BUNDLE, COMMIT, EXPORT, LOAD, LOWER, PLAN, VALIDATE, Stage
from trt_edge.pipeline.validate import ValidationReport

log = structlog.get_logger("trt_edge.pipeline")

VALIDATION_REPORT = "reports/validation.json"


class ProgressSink(Protocol):
    """Told when each stage starts and ends, by `Stage.name` (the CLI draws a progress display)."""

    def stage_started(self, stage: str) -> None: ...

    def stage_finished(self, stage: str, seconds: float, cached: bool) -> None: ...


@dataclass(frozen=True)
class BuildOptions:
    out_dir: Path
    backend: str | None = None  # overrides the manifest's build.backend
    cache_dir: Path | None = None  # default: $TRT_EDGE_CACHE or ~/.cache/trt-edge
    use_cache: bool = True  # False: rebuild every stage (results are still stored)
    source_date_epoch: int | None = None  # default: $SOURCE_DATE_EPOCH, else manifest mtime
    progress: ProgressSink | None = None
    target: str | None = None  # a catalog id; default: the manifest's first target
    memory_headroom_mib: int | None = None  # overrides the manifest's build.memory_headroom_mib


@dataclass(frozen=True)
class BuildResult:
    """What a build produced. `stage_seconds` and `cached` are keyed by stage name, in the
    order the stages ran (the order of `STAGES`; a stage that was not needed is absent)."""

    bundle_dir: Path
    report: ValidationReport
    stage_seconds: dict[str, float]
    cached: dict[str, bool] = field(default_factory=dict)
    backend: str = ""
    backend_reason: str = ""
    memory_warnings: tuple[str, ...] = ()  # boards of the target that cannot hold the bundle


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


# What a Hugging Face model's stages also depend on: transformers and the recipe's code.
RECIPE_PACKAGES = ("transformers", "tokenizers", "safetensors")
# Files the recipe adds to the export and lower cache entries (tokenizer, llm facts).
RECIPE_PREFIX = "llm/"


def _recipe_code_digest() -> str:
    """Hash of `trt_edge.llm` (the wrapper, rewrites, passes, validation)."""
    return _code_digest(Path(__file__).resolve().parent.parent / "llm")


def _model_key(manifest: ResolvedManifest) -> Any:
    """What names the model source in the export key (never an absolute path)."""
    source = manifest.huggingface
    if source is None:
        return manifest.entrypoint or str(manifest.exported)
    return {
        "huggingface": source.architecture,
        "max_cache_len": source.max_cache_len,
        "recipe": _recipe_code_digest(),
    }


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


class _Timer:
    """Times each stage, tells the progress sink and logs `stage_started`/`stage_finished`."""

    def __init__(self, progress: ProgressSink | None) -> None:
        self.seconds: dict[str, float] = {}
        self.cached: dict[str, bool] = {}
        self.progress = progress

    @contextmanager
    def stage(self, stage: Stage) -> Iterator[dict[str, bool]]:
        name = stage.name
        flag = {"cached": False}
        if self.progress is not None:
            self.progress.stage_started(name)
        log.debug("stage_started", stage=name)
        started = time.perf_counter()
        yield flag
        elapsed = time.perf_counter() - started
        self.seconds[name] = elapsed
        self.cached[name] = flag["cached"]
        log.info("stage_finished", stage=name, seconds=round(elapsed, 3), cached=flag["cached"])
        if self.progress is not None:
            self.progress.stage_finished(name, elapsed, flag["cached"])


def load(manifest_path: Path) -> ResolvedManifest:
    from trt_edge.manifest import ManifestError, load_manifest_or_raise

    try:
        return load_manifest_or_raise(manifest_path)
    except ManifestError as exc:
        raise ManifestInvalidError(exc.path, exc.diagnostics) from exc


def _target_fingerprint(
    manifest: ResolvedManifest, requested: str | None, backend: str
) -> dict[str, Any]:
    """The bundle's `target`: what a device of the target must match for `backend` to run
    there (the catalog says which fields each backend asks: an XNNPACK bundle the CPU
    architecture, a TensorRT one also SM, CUDA, TensorRT, JetPack/L4T)."""
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
        catalog = load_catalog()
        return dict(catalog.fingerprint(catalog.get(target_id), backend))
    except UnknownTargetError as exc:
        raise BadInputError(f"{manifest.source_path}: {exc}") from exc


def _target_has_tensorrt(target: dict[str, Any]) -> bool:
    """Whether the fingerprinted target's devices run TensorRT (a CPU bundle then uses
    only their CPU); read from the catalog, as the fingerprint asks only what it needs."""
    from trt_edge.targets import load_catalog

    return load_catalog().get(str(target["id"])).requires_tensorrt


class _Build:
    """One build's state: the manifest, the cache, the lazily loaded model and, per
    cacheable stage that ran, the environment that computed its output."""

    def __init__(
        self,
        manifest: ResolvedManifest,
        options: BuildOptions,
        timer: _Timer,
        environment: BuildEnvironment,
    ) -> None:
        self.manifest = manifest
        self.options = options
        self.timer = timer
        self.environment = environment
        self.origins: dict[str, str | None] = {}  # stage name -> environment id
        self.cache = StageCache(
            (options.cache_dir or default_cache_dir()).expanduser(),
            enabled=options.use_cache,
            on_event=lambda name, fields: (
                log.warning(name, **fields) if name != "cache_hit" else log.debug(name, **fields)
            ),
        )
        self._model: Any = None
        self.recipe_files: dict[str, bytes] = {}  # a Hugging Face model's extra files

    def cached(self, stage: Stage, key: str) -> dict[str, bytes] | None:
        """The stage's cache entry, noting where it was computed (read from the entry)."""
        hit = self.cache.get(stage.name, key)
        if hit is not None:
            self.origins[stage.name] = read_origin(hit)
        return hit

    def store(self, stage: Stage, key: str, files: dict[str, bytes]) -> None:
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
            from trt_edge.pipeline.load_model import load_model

            self._model = load_model(self.manifest)
        return self._model

    def program(self, plan: ExportPlan, key: str) -> Any:
        """The ExportedProgram: from the cache, from the `.pt2`, or by torch.export.

        For a Hugging Face model the export also yields the recipe's files (the
        tokenizer and the `llm` facts, `trt_edge.llm.section`), cached beside it."""
        import io

        import torch

        from trt_edge.pipeline.export import check_exported_domain, export_program

        with self.timer.stage(EXPORT) as flag:
            hit = self.cached(EXPORT, key)
            if hit is not None:
                flag["cached"] = True
                self.recipe_files = _recipe_entries(hit)
                return torch.export.load(io.BytesIO(hit["program.pt2"]))
            loaded = self.model()
            if loaded.exported is not None:
                check_exported_domain(self.manifest, plan, loaded.exported)
                program = loaded.exported
            else:
                program = export_program(self.manifest, plan, loaded.module)
            if self.manifest.huggingface is not None:
                from trt_edge.llm.section import recipe_files

                self.recipe_files = recipe_files(self.manifest, loaded.module)
            buffer = io.BytesIO()
            torch.export.save(program, buffer)
            files = {"program.pt2": buffer.getvalue()}
            files.update({RECIPE_PREFIX + n: d for n, d in self.recipe_files.items()})
            self.store(EXPORT, key, files)
            return program

    def lowered(
        self, plan: ExportPlan, choice: BackendChoice, export_key: str, key: str
    ) -> tuple[Lowered, tuple[TensorSpec, ...]]:
        hit = self.cached(LOWER, key)
        if hit is not None:
            with self.timer.stage(LOWER) as flag:
                flag["cached"] = True
                ptd = {n[len("ptd/") :]: d for n, d in hit.items() if n.startswith("ptd/")}
                lowered = Lowered(choice.backend.name, hit[MODEL_PTE], ptd)
                self.recipe_files = _recipe_entries(hit)
                return lowered, _outputs_from_json(hit["outputs.json"])
        from trt_edge.pipeline.export import output_specs

        program = self.program(plan, export_key)
        with self.timer.stage(LOWER):
            try:
                lowered = choice.backend.lower(program, self.manifest, plan)
            except LoweringError as exc:
                raise LoweringError(
                    f"{self.manifest.source_path}: {exc.message}", hint=exc.hint
                ) from exc
            outputs = output_specs(self.manifest, program)
            files = {MODEL_PTE: lowered.pte, "outputs.json": _outputs_to_json(outputs)}
            files.update({f"ptd/{n}": d for n, d in lowered.ptd.items()})
            files.update({RECIPE_PREFIX + n: d for n, d in self.recipe_files.items()})
            self.store(LOWER, key, files)
        return lowered, outputs


def _recipe_entries(hit: dict[str, bytes]) -> dict[str, bytes]:
    return {n[len(RECIPE_PREFIX) :]: d for n, d in hit.items() if n.startswith(RECIPE_PREFIX)}


def failed_report(out_dir: Path, manifest: ResolvedManifest) -> Path:
    """Where a failed validation leaves its report: beside the bundle, never inside it."""
    return out_dir / f"{bundle_dir_name(manifest)}.validation-failed.json"


def build(manifest_path: Path | str, options: BuildOptions) -> BuildResult:
    """Build, validate and atomically write `OUT/<name>-<version>/`; raise `BuildError`s."""
    manifest_path = Path(manifest_path)
    from trt_edge.pipeline.bundle import check_out_dir

    check_out_dir(options.out_dir)  # before the slow stages, not after them
    timer = _Timer(options.progress)
    with timer.stage(LOAD):
        manifest = load(manifest_path)
        from trt_edge.pipeline.load_model import source_digest
        from trt_edge.pipeline.requirements import check_requirements

        # Before anything slow: the model's own packages, at versions it allows.
        requirements = check_requirements(manifest)
        environment = current_environment()

        digest = source_digest(manifest)
        requested = options.backend or manifest.backend
        choice = choose_backend(requested)
        target = _target_fingerprint(manifest, options.target, choice.backend.name)
        source_date, source_date_from = _source_date(options, manifest)
    log.info(
        "backend_chosen",
        backend=choice.backend.name,
        reason=choice.reason,
        model=manifest.name,
        target=target.get("id"),
    )
    if _target_has_tensorrt(target) and choice.backend.name != "tensorrt":
        log.warning(
            "target_expects_tensorrt",
            target=target.get("id"),
            backend=choice.backend.name,
            hint="this bundle runs on the target's CPU only; build with --backend tensorrt "
            "in the target's builder image for GPU execution",
        )
    job = _Build(manifest, options, timer, environment)
    with timer.stage(PLAN):
        plan = make_plan(manifest)
    extra_packages: tuple[str, ...] = (
        ("torch-tensorrt",) if choice.backend.name == "tensorrt" else ()
    )
    if manifest.huggingface is not None:
        extra_packages += RECIPE_PACKAGES
    packages = package_versions(extra_packages)
    build_code = stage_code_digest(EXPORT_ENTRIES)
    export_key = cache_key(
        stage=EXPORT.name,
        model=_model_key(manifest),
        source=digest.sha256,
        io=_io_doc(manifest),
        packages=packages,
        requirements=requirements,
        environment=environment.id,
        code=build_code,
    )
    lower_key = cache_key(
        stage=LOWER.name,
        export=export_key,
        backend=choice.backend.name,
        precision=manifest.precision,
        environment=environment.id,
    )
    lowered, outputs = job.lowered(plan, choice, export_key, lower_key)

    staged = StagedBundle(options.out_dir, bundle_dir_name(manifest))
    try:
        with timer.stage(BUNDLE):
            from trt_edge.pipeline.delegates import read_delegates, signature_check_summary

            write_file(staged.path / MODEL_PTE, lowered.pte)
            # One external-data file is named model.ptd: the name the runner loads.
            for name, data in lowered.ptd.items():
                target_name = "model.ptd" if len(lowered.ptd) == 1 else name
                write_file(staged.path / target_name, data)
            llm = None
            if manifest.huggingface is not None:
                from trt_edge.llm.section import bundle_files, llm_section

                for name, data in bundle_files(job.recipe_files).items():
                    write_file(staged.path / name, data)
                llm = llm_section(job.recipe_files, "forward", outputs)
            delegates = read_delegates(staged.path / MODEL_PTE, manifest)
            memory, memory_warnings = _memory(manifest, options, staged.path, llm, target)
            provenance: dict[str, Any] = {
                "manifest_sha256": manifest.source_sha256,
                "model_source_sha256": digest.sha256,
                "model_source_files": list(digest.files),
                "packages": packages,
                "source_date_epoch": source_date,
                "source_date_from": source_date_from,
                "builder": {"mode": "local"},
                "requirements": requirements,
                "environment": environment.provenance(),
                "backend_reason": choice.reason,
                # Where TensorRT profile signatures came from (the compile inputs, not the
                # engines) and hence what the cross-delegate check did and did not prove.
                "profile_signatures": signature_check_summary(delegates),
            }

            def document() -> Any:
                provenance["stages"] = job.stage_provenance()  # validate joins at commit
                doc = make_bundle_manifest(
                    manifest,
                    bundle_dir=staged.path,
                    backend=choice.backend.name,
                    target=target,
                    outputs=outputs,
                    delegates=delegates,
                    provenance=provenance,
                    llm=llm,
                )
                return dataclasses.replace(doc, memory=memory)

            write_bundle_json(staged.path, document())
        report = _validate(
            job, plan, staged.path, choice, lowered, delegates, digest.sha256, requirements
        )
        if not report.ok:
            failed = failed_report(options.out_dir, manifest)
            write_atomic(failed, canonical_json(report.doc))
            raise ValidationFailedError(
                f"{manifest.source_path}: validation failed; the previous bundle (if any) is "
                f"unchanged. Report: {failed}\n  " + "\n  ".join(report.failures),
                report_path=str(failed),
            )
        with timer.stage(COMMIT):
            write_file(staged.path / VALIDATION_REPORT, canonical_json(report.doc))
            write_bundle_json(staged.path, document())
            bundle_dir = staged.commit()
            # A report of an earlier failed attempt no longer describes this bundle.
            failed_report(options.out_dir, manifest).unlink(missing_ok=True)
    except BaseException:
        staged.discard()
        raise
    log.info("bundle_written", path=str(bundle_dir), model=manifest.name)
    return BuildResult(
        bundle_dir=bundle_dir,
        report=report,
        stage_seconds=dict(timer.seconds),
        cached=dict(timer.cached),
        backend=choice.backend.name,
        backend_reason=choice.reason,
        memory_warnings=memory_warnings,
    )


def _memory(
    manifest: ResolvedManifest,
    options: BuildOptions,
    staged: Path,
    llm: Any,
    target: dict[str, Any],
) -> tuple[Any, tuple[str, ...]]:
    """The bundle's `memory` section and a warning per board of the target that cannot
    hold it (`trt_edge.memory`; logged here, shown again in the build summary)."""
    from trt_edge.memory import bundle_memory, over_budget
    from trt_edge.targets import load_catalog

    memory = bundle_memory(staged, llm)
    headroom = options.memory_headroom_mib
    if headroom is None:
        headroom = manifest.memory_headroom_mib
    warnings = tuple(over_budget(memory, load_catalog().get(str(target["id"])), headroom))
    for warning in warnings:
        log.warning("memory_over_budget", detail=warning)
    return memory, warnings


def _validate(
    job: _Build,
    plan: ExportPlan,
    staged: Path,
    choice: BackendChoice,
    lowered: Lowered,
    delegates: tuple[DelegateInfo, ...],
    source_sha256: str,
    requirements: dict[str, str],
) -> ValidationReport:
    from trt_edge.pipeline.validate import validate_bundle

    manifest = job.manifest
    parts: dict[str, Any] = {}
    if manifest.huggingface is not None:
        # The eager reference is the folder itself, run by transformers with the
        # recipe's checks; the tokenizer file is part of what is validated.
        parts = {
            "source": source_sha256,
            "recipe": _recipe_code_digest(),
            "recipe_files": {
                n: hashlib.sha256(d).hexdigest() for n, d in sorted(job.recipe_files.items())
            },
            "packages": package_versions(RECIPE_PACKAGES),
        }
    key = cache_key(
        stage=VALIDATE.name,
        pte=hashlib.sha256(lowered.pte).hexdigest(),
        io=_io_doc(manifest),
        tolerance=[manifest.atol, manifest.rtol],
        runtime={"policy": manifest.runtime.policy, "phases": dict(manifest.runtime.phases)},
        code=stage_code_digest(VALIDATE_ENTRIES),
        requirements=requirements,
        environment=job.environment.id,
        **parts,
    )
    with job.timer.stage(VALIDATE) as flag:
        hit = job.cached(VALIDATE, key)
        if hit is not None:
            flag["cached"] = True
            return ValidationReport(json.loads(hit["validation.json"]))
        if manifest.huggingface is not None:
            from trt_edge.llm.validation import validate_causal_lm

            report = validate_causal_lm(staged, manifest, plan, choice.backend.name, delegates)
        else:
            report = validate_bundle(
                staged, manifest, plan, job.model().module, choice.backend.name, delegates
            )
        if report.ok:
            job.store(VALIDATE, key, {"validation.json": canonical_json(report.doc)})
        return report
