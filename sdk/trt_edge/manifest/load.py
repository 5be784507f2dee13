"""Loading a manifest: read (once) → parse → schema → semantic → resolve → coverage warnings.

Every step appends diagnostics and the next step runs on whatever it can still
check, so one `trt-edge validate` shows every problem. Only resolution needs a
clean manifest. Nothing here imports torch, executorch or docker: validation
must stay instant.
"""

from __future__ import annotations

from pathlib import Path

from trt_edge.manifest.conform import check_schema
from trt_edge.manifest.coverage import coverage_diagnostics
from trt_edge.manifest.diagnostics import LoadResult, error_for, sort_key
from trt_edge.manifest.parse import parse_source, schema_comment_diagnostics
from trt_edge.manifest.resolve import resolve
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.manifest.semantic import check_semantics
from trt_edge.manifest.source import ManifestSource, read_source
from trt_edge.targets.catalog import TargetCatalog, load_catalog


def load_manifest(path: str | Path, *, catalog: TargetCatalog | None = None) -> LoadResult:
    """Load and check a manifest; never raises for a bad manifest (see `LoadResult`)."""
    return load_source(read_source(path), catalog=catalog)


def load_source(source: ManifestSource, *, catalog: TargetCatalog | None = None) -> LoadResult:
    """Check a manifest already read (`read_source`): parse → schema → semantic → resolve.

    The steps know the document, not its file: each reports at a line and column, and the
    file is written into every diagnostic here, once (`ManifestSource.located`)."""
    result = LoadResult(path=source.given)
    if source.text is None:
        result.diagnostics = source.located(list(source.problems))
        return result
    parsed = parse_source(source)
    diagnostics = parsed.diagnostics + schema_comment_diagnostics(source)
    # `null` parses fine to None: the schema step then says a mapping was expected.
    if parsed.data is not None or not parsed.diagnostics:
        model, schema_diags = check_schema(parsed.data, parsed.locations)
        diagnostics += schema_diags
        diagnostics += check_semantics(
            parsed.data, parsed.locations, source.directory, catalog or load_catalog()
        )
        if model is not None and not any(d.severity == "error" for d in diagnostics):
            resolved = resolve(model, source, source.locations(parsed.locations))
            diagnostics += coverage_diagnostics(resolved, parsed.locations)
            result.manifest = resolved
    result.diagnostics = sorted(source.located(diagnostics), key=sort_key)
    return result


def load_manifest_or_raise(
    path: str | Path, *, catalog: TargetCatalog | None = None
) -> ResolvedManifest:
    """The resolved manifest, or a typed `ManifestError` carrying every diagnostic."""
    return manifest_or_raise(load_manifest(path, catalog=catalog))


def manifest_or_raise(result: LoadResult) -> ResolvedManifest:
    """`result`'s manifest, or its typed `ManifestError` carrying every diagnostic."""
    if result.manifest is None or result.errors:
        raise error_for(result.path, result.diagnostics)
    return result.manifest
