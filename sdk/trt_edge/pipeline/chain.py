"""The stages of a build, each a function of the previous stage's value (`values`) and the
build's services (`context`), in the order `trt_edge.pipeline.run.build` chains them:

    load ─▶ plan ─▶ export ─▶ lower ─▶ bundle (staged) ─▶ validate (the staged copy) ─▶ commit

What kind of model is built — a plain module, a Hugging Face causal LM, with or without a
quantization step — is the recipe's business (`trt_edge.pipeline.recipes`): the stages ask
it what enters each key, how to export, which files the bundle gains and what validation
runs, and never branch on the model kind. Export, lower and validate go through
`BuildContext.cached`, under the keys of `trt_edge.pipeline.keys`, so an unchanged rebuild
touches neither torch.export nor the backend — nor even imports torch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import structlog
from trt_edge_runner.bundle_format import (
    MODEL_PTE,
    BundleManifest,
    DelegateInfo,
    TensorSpec,
    canonical_json,
)
from trt_edge_runner.durable import write_atomic

from trt_edge.manifest import ManifestError
from trt_edge.manifest.load import load_source, manifest_or_raise
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.manifest.source import ManifestSource, read_source
from trt_edge.memory import bundle_memory, over_budget
from trt_edge.pipeline.bundle import (
    StagedBundle,
    bundle_dir_name,
    file_entries,
    make_bundle_manifest,
    package_versions,
    write_bundle_json,
    write_file,
)
from trt_edge.pipeline.context import BuildContext, BuildOptions
from trt_edge.pipeline.delegates import read_delegates, signature_check_summary
from trt_edge.pipeline.errors import (
    BadInputError,
    LoweringError,
    ManifestInvalidError,
    ValidationFailedError,
)
from trt_edge.pipeline.events import BackendChosen, BuildWarning
from trt_edge.pipeline.export import output_specs
from trt_edge.pipeline.keys import export_key, io_doc, lower_key, validate_key
from trt_edge.pipeline.lower import EngineBuild, LoweredProgram, choose_backend
from trt_edge.pipeline.plan import make_plan
from trt_edge.pipeline.recipes import recipe_for
from trt_edge.pipeline.requirements import check_requirements
from trt_edge.pipeline.stages import BUNDLE, COMMIT, EXPORT, LOAD, LOWER, PLAN, VALIDATE
from trt_edge.pipeline.validate import ValidationReport
from trt_edge.pipeline.validate_engines import engines_unrunnable_here, validate_engine_records
from trt_edge.pipeline.values import Exported, Loaded, Lowered, Planned, Staged, Validated
from trt_edge.targets import load_catalog
from trt_edge.targets.catalog import Target, UnknownTargetError

log = structlog.get_logger("trt_edge.pipeline")

VALIDATION_REPORT = "reports/validation.json"
RECIPE_PREFIX = "llm/"  # the recipe's files in the export and lower entries (tokenizer, llm facts)
ENGINES_JSON = "engines.json"  # the lower stage's TensorRT builder times, beside the .pte


# -- load ---------------------------------------------------------------------------------
def load(manifest_path: Path) -> ResolvedManifest:
    """The manifest, or `ManifestInvalidError` with every diagnostic."""
    return checked(read_source(manifest_path))


def checked(source: ManifestSource) -> ResolvedManifest:
    """The manifest read into `source`, checked and resolved, or `ManifestInvalidError`
    with every diagnostic."""
    try:
        return manifest_or_raise(load_source(source))
    except ManifestError as exc:
        raise ManifestInvalidError(exc.path, exc.diagnostics) from exc


def load_stage(manifest_path: Path, context: BuildContext) -> Loaded:
    """Everything decided before anything slow: the manifest (read once, here, unless the
    caller already loaded it), its model's packages at versions it allows, the target, the
    backend, the recipe, the source hash."""
    options = context.options
    with context.timer.stage(LOAD):
        manifest = options.manifest or checked(read_source(manifest_path))
        requirements = check_requirements(manifest)
        target = build_target(manifest, options.target)
        choice = choose_backend(
            options.backend or manifest.backend, target, context.engine_progress
        )
        recipe = recipe_for(manifest, choice.backend.name)
        digest = recipe.source_digest()
        date, date_from = source_date(options, manifest)
    loaded = Loaded(
        manifest=manifest,
        requirements=requirements,
        environment=context.environment,
        target=target,
        fingerprint=dict(load_catalog().fingerprint(target, choice.backend.name)),
        choice=choice,
        recipe=recipe,
        digest=digest,
        packages=package_versions(choice.backend.packages() + recipe.packages()),
        source_date=date,
        source_date_from=date_from,
        bundle_name=bundle_dir_name(manifest),
        io=io_doc(manifest),
    )
    announce(loaded, context)
    return loaded


def build_target(manifest: ResolvedManifest, requested: str | None) -> Target:
    """The catalog target this build is for: `--target`, else the manifest's first."""
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


def source_date(options: BuildOptions, manifest: ResolvedManifest) -> tuple[int, str]:
    """The bundle's timestamp and where it came from: the option, `$SOURCE_DATE_EPOCH`,
    else the manifest's mtime (a rebuild of the same sources gives the same bundle)."""
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


def announce(loaded: Loaded, context: BuildContext) -> None:
    """Say which backend and recipe build what for which target, and what that means."""
    backend, target_id, reason = loaded.backend, loaded.target.id, loaded.choice.reason
    recipe = loaded.recipe.name
    log.info("backend_chosen", backend=backend, reason=reason, recipe=recipe, target=target_id)
    context.emit(BackendChosen(backend, reason, recipe, target_id))
    if loaded.target.requires_tensorrt and backend != "tensorrt":
        hint = (
            "this bundle runs on the target's CPU only; build with --backend tensorrt "
            "in the target's builder image for GPU execution"
        )
        log.warning("target_expects_tensorrt", target=target_id, backend=backend, hint=hint)
        context.emit(BuildWarning("target_expects_tensorrt", f"target {target_id}: {hint}"))


# -- plan ---------------------------------------------------------------------------------
def plan_stage(loaded: Loaded, context: BuildContext) -> Planned:
    """One export Dim per symbol over the union of the profiles, and the keys under which
    the export and lower stages find (or leave) their outputs."""
    with context.timer.stage(PLAN):
        plan = make_plan(loaded.manifest)
        export = export_key(loaded)
        return Planned(loaded, plan, export, lower_key(loaded, export))


# -- export -------------------------------------------------------------------------------
def export_stage(planned: Planned, context: BuildContext) -> Exported:
    """The ExportedProgram, from the cache or by the recipe's export; the recipe's files
    (e.g. the tokenizer and the `llm` facts) are cached beside it. Not run at all when the
    lower stage's output is cached."""
    reused = context.lookup(LOWER, planned.lower_key)
    if reused is not None:
        return Exported(planned, None, recipe_entries(reused), None, reused)
    recipe = planned.loaded.recipe

    def export() -> Exported:
        model = recipe.load()
        program = recipe.export(planned.plan, model)
        return Exported(planned, program, recipe.files(model.module), model)

    def decode(hit: dict[str, bytes]) -> Exported:
        import torch

        program = torch.export.load(io.BytesIO(hit["program.pt2"]))
        return Exported(planned, program, recipe_entries(hit), None)

    exported = context.cached(EXPORT, planned.export_key, export, _encode_export, decode)
    if recipe.validates_loaded_model:
        return exported
    # A causal LM is validated against its folder, loaded afresh by transformers: the
    # model loaded for export goes now, so two copies of the weights are never alive.
    return dataclasses.replace(exported, model=None)


def _encode_export(exported: Exported, scratch: Path) -> dict[str, bytes | Path]:
    import torch

    # Saved to a file, not to memory: the archive holds a copy of every weight.
    torch.export.save(exported.program, scratch / "program.pt2")
    files: dict[str, bytes | Path] = {"program.pt2": scratch / "program.pt2"}
    files.update({RECIPE_PREFIX + n: d for n, d in exported.recipe_files.items()})
    return files


# -- lower --------------------------------------------------------------------------------
def lower_stage(exported: Exported, context: BuildContext) -> Lowered:
    """The backend's `.pte` (with its recipe's passes and configs) and the output specs."""
    planned = exported.planned
    loaded = planned.loaded

    def lower() -> Lowered:
        backend = loaded.choice.backend
        manifest = loaded.manifest
        try:
            program = backend.lower(
                exported.program, manifest, planned.plan, loaded.recipe.lowering(backend.name)
            )
        except LoweringError as exc:
            raise LoweringError(f"{manifest.source_path}: {exc.message}", hint=exc.hint) from exc
        outputs = output_specs(manifest, exported.program)
        return Lowered(planned, program, outputs, exported.recipe_files, exported.model)

    def decode(hit: dict[str, bytes]) -> Lowered:
        ptd = {n[len("ptd/") :]: d for n, d in hit.items() if n.startswith("ptd/")}
        engines = tuple(EngineBuild(**e) for e in json.loads(hit.get(ENGINES_JSON) or b"[]"))
        program = LoweredProgram(loaded.backend, hit[MODEL_PTE], ptd, engines)
        outputs = tuple(
            TensorSpec(name=o["name"], dtype=o["dtype"], shape=tuple(o["shape"]))
            for o in json.loads(hit["outputs.json"])
        )
        return Lowered(planned, program, outputs, recipe_entries(hit), exported.model)

    return context.cached(
        LOWER, planned.lower_key, lower, _encode_lower, decode, hit=exported.reused
    )


def _encode_lower(lowered: Lowered, scratch: Path) -> dict[str, bytes | Path]:
    program = lowered.program
    files: dict[str, bytes | Path] = {
        MODEL_PTE: program.pte,
        "outputs.json": canonical_json([dataclasses.asdict(t) for t in lowered.outputs]),
        ENGINES_JSON: canonical_json([dataclasses.asdict(e) for e in program.engines]),
    }
    files.update({f"ptd/{n}": d for n, d in program.ptd.items()})
    files.update({RECIPE_PREFIX + n: d for n, d in lowered.recipe_files.items()})
    return files


def recipe_entries(hit: dict[str, bytes]) -> dict[str, bytes]:
    return {n[len(RECIPE_PREFIX) :]: d for n, d in hit.items() if n.startswith(RECIPE_PREFIX)}


# -- bundle -------------------------------------------------------------------------------
def bundle_stage(lowered: Lowered, context: BuildContext) -> Staged:
    """The program, its data, the recipe's files and bundle.json, in a staging directory
    beside the final path (`StagedBundle`; discarded unless committed)."""
    bundle = StagedBundle(context.options.out_dir, lowered.planned.loaded.bundle_name)
    try:
        with context.timer.stage(BUNDLE):
            staged = _write_staged(bundle, lowered, context)
    except BaseException:
        bundle.discard()
        raise
    return staged


def _write_staged(bundle: StagedBundle, lowered: Lowered, context: BuildContext) -> Staged:
    loaded = lowered.planned.loaded
    program, recipe = lowered.program, loaded.recipe
    write_file(bundle.path / MODEL_PTE, program.pte)
    # One external-data file is named model.ptd: the name the runner loads.
    for name, data in program.ptd.items():
        write_file(bundle.path / ("model.ptd" if len(program.ptd) == 1 else name), data)
    for name, data in recipe.bundle_files(lowered.recipe_files).items():
        write_file(bundle.path / name, data)
    delegates = read_delegates(bundle.path / MODEL_PTE, loaded.manifest)
    llm = recipe.llm_section(lowered.recipe_files, lowered.outputs)
    memory = bundle_memory(bundle.path, llm, delegates=delegates)
    headroom = context.options.memory_headroom_mib
    if headroom is None:
        headroom = loaded.manifest.memory_headroom_mib
    warnings = tuple(over_budget(memory, loaded.target, headroom))
    for warning in warnings:
        log.warning("memory_over_budget", detail=warning)
    document = make_bundle_manifest(
        loaded.manifest,
        bundle_dir=bundle.path,
        backend=loaded.backend,
        target=loaded.fingerprint,
        outputs=lowered.outputs,
        delegates=delegates,
        provenance=provenance(loaded, delegates, program.engines),
        llm=llm,
        quantization=recipe.record().get("quantization"),
    )
    staged = Staged(
        planned=lowered.planned,
        bundle=bundle,
        pte_sha256=hashlib.sha256(program.pte).hexdigest(),
        outputs=lowered.outputs,
        delegates=delegates,
        memory_warnings=warnings,
        document=dataclasses.replace(document, memory=memory),
        recipe_files=lowered.recipe_files,
        model=lowered.model,
    )
    write_bundle_json(bundle.path, sealed(staged, context))
    return staged


def provenance(
    loaded: Loaded, delegates: tuple[DelegateInfo, ...], engines: tuple[EngineBuild, ...]
) -> dict[str, Any]:
    """bundle.json's `provenance` (`stages` is joined at each write: `sealed`)."""
    doc: dict[str, Any] = {
        "manifest_sha256": loaded.manifest.source_sha256,
        "model_source_sha256": loaded.digest.sha256,
        "model_source_files": list(loaded.digest.files),
        "packages": loaded.packages,
        "source_date_epoch": loaded.source_date,
        "source_date_from": loaded.source_date_from,
        "builder": {"mode": "local"},
        "requirements": loaded.requirements,
        "environment": loaded.environment.provenance(),
        "backend_reason": loaded.choice.reason,
        # Where TensorRT profile signatures came from (the compile inputs, not the
        # engines) and hence what the cross-delegate check did and did not prove.
        "profile_signatures": signature_check_summary(delegates),
    }
    if engines:
        # The builder's time per engine: here, not in the engine's record inside the
        # .pte, so an engine rebuilt identically gives an identical program.
        doc["engine_builds"] = [dataclasses.asdict(e) for e in engines]
    return doc


def sealed(staged: Staged, context: BuildContext) -> BundleManifest:
    """bundle.json with the files the staged directory holds and `provenance.stages` as they
    stand (commit adds the validation report and validate's stage)."""
    document = staged.document
    provenance = {**document.provenance, "stages": context.stage_provenance()}
    files = file_entries(staged.path)
    return dataclasses.replace(document, files=files, provenance=provenance)


# -- validate -----------------------------------------------------------------------------
def validate_stage(staged: Staged, context: BuildContext) -> Validated:
    """The staged bundle through the device runner, against eager (or, where the engines
    cannot run here, their records checked: `validate_engines`); raises
    `ValidationFailedError` with the report written beside the bundle if it fails."""
    loaded = staged.loaded
    key = validate_key(loaded, staged.pte_sha256, staged.recipe_files)

    def validate() -> ValidationReport:
        unrunnable = engines_unrunnable_here(staged.delegates)
        if unrunnable is not None:
            context.emit(BuildWarning("engine_not_executed", f"validation: {unrunnable}"))
            return validate_engine_records(
                staged.path,
                loaded.manifest,
                loaded.backend,
                staged.delegates,
                staged.outputs,
                unrunnable,
            )
        model = staged.model or loaded.recipe.load()
        return loaded.recipe.validate(
            staged.path, staged.planned.plan, loaded.backend, staged.delegates, lambda: model
        )

    report = context.cached(VALIDATE, key, validate, _encode_report, _decode_report)
    if not report.ok:
        raise refusal(report, loaded, context.options.out_dir)
    return Validated(staged, report)


def _encode_report(report: ValidationReport, scratch: Path) -> dict[str, bytes | Path] | None:
    return {"validation.json": canonical_json(report.doc)} if report.ok else None


def _decode_report(hit: dict[str, bytes]) -> ValidationReport:
    return ValidationReport(json.loads(hit["validation.json"]))


def refusal(report: ValidationReport, loaded: Loaded, out_dir: Path) -> ValidationFailedError:
    """The error of a failed validation, its report written beside the (unchanged) bundle."""
    failed = failed_report(out_dir, loaded.bundle_name)
    write_atomic(failed, canonical_json(report.doc))
    return ValidationFailedError(
        f"{loaded.manifest.source_path}: validation failed; the previous bundle (if any) is "
        f"unchanged. Report: {failed}\n  " + "\n  ".join(report.failures),
        report_path=str(failed),
    )


def failed_report(out_dir: Path, bundle_name: str) -> Path:
    """Where a failed validation leaves its report: beside the bundle, never inside it."""
    return out_dir / f"{bundle_name}.validation-failed.json"


# -- commit -------------------------------------------------------------------------------
def commit_stage(validated: Validated, context: BuildContext) -> Path:
    """Add the validation report, seal bundle.json, swap the bundle into place."""
    staged = validated.staged
    with context.timer.stage(COMMIT):
        write_file(staged.path / VALIDATION_REPORT, canonical_json(validated.report.doc))
        write_bundle_json(staged.path, sealed(staged, context))
        bundle_dir = staged.bundle.commit()
        # A report of an earlier failed attempt no longer describes this bundle.
        failed_report(context.options.out_dir, staged.loaded.bundle_name).unlink(missing_ok=True)
    return bundle_dir
