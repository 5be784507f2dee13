"""Loading a manifest: read → parse → schema → semantic → resolve → coverage warnings.

Every step appends diagnostics and the next step runs on whatever it can still
check, so one `trt-edge validate` shows every problem. Only resolution needs a
clean manifest. Nothing here imports torch, executorch or docker: validation
must stay instant.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from trt_edge.manifest.conform import check_schema
from trt_edge.manifest.coverage import coverage_diagnostics
from trt_edge.manifest.diagnostics import Diagnostic, LoadResult, error_for, in_file, sort_key
from trt_edge.manifest.parse import parse_text, schema_comment_diagnostics
from trt_edge.manifest.resolve import resolve
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.manifest.semantic import check_semantics
from trt_edge.targets.catalog import TargetCatalog, load_catalog


def _read(path: Path) -> tuple[bytes | None, str | None, list[Diagnostic]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        message = "no such file: check the path (manifests are usually named manifest.yaml)"
        return None, None, [Diagnostic("", 1, 1, "error", "", message, "io")]
    except IsADirectoryError:
        hint = " (did you mean its manifest.yaml?)" if (path / "manifest.yaml").is_file() else ""
        message = f"this is a directory, not a manifest file{hint}"
        return None, None, [Diagnostic("", 1, 1, "error", "", message, "io")]
    except OSError as exc:
        message = f"cannot read the file: {exc.strerror or exc}"
        return None, None, [Diagnostic("", 1, 1, "error", "", message, "io")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        message = f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the manifest as UTF-8"
        return raw, None, [Diagnostic("", line, col, "error", "", message, "io")]
    if text.startswith("\ufeff"):
        text = text[1:]
    return raw, text, []


def load_manifest(path: str | Path, *, catalog: TargetCatalog | None = None) -> LoadResult:
    """Load and check a manifest; never raises for a bad manifest (see `LoadResult`).

    The steps know the document, not its file: each reports at a line and column, and the
    file is written into every diagnostic here, once (`in_file`)."""
    given = Path(path)
    result = LoadResult(path=given)
    raw, text, diagnostics = _read(given)
    if raw is None or text is None:
        result.diagnostics = in_file(diagnostics, given)
        return result
    manifest_dir = given.resolve().parent
    parsed = parse_text(text)
    diagnostics += parsed.diagnostics
    diagnostics += schema_comment_diagnostics(text, manifest_dir)
    # `null` parses fine to None: the schema step then says a mapping was expected.
    if parsed.data is not None or not parsed.diagnostics:
        model, schema_diags = check_schema(parsed.data, parsed.locations)
        diagnostics += schema_diags
        diagnostics += check_semantics(
            parsed.data, parsed.locations, manifest_dir, catalog or load_catalog()
        )
        if model is not None and not any(d.severity == "error" for d in diagnostics):
            source = given.resolve()
            sha256 = hashlib.sha256(raw).hexdigest()
            resolved = resolve(model, source, sha256, parsed.locations.freeze(source))
            diagnostics += coverage_diagnostics(resolved, parsed.locations)
            result.manifest = resolved
    result.diagnostics = sorted(in_file(diagnostics, given), key=sort_key)
    return result


def load_manifest_or_raise(
    path: str | Path, *, catalog: TargetCatalog | None = None
) -> ResolvedManifest:
    """The resolved manifest, or a typed `ManifestError` carrying every diagnostic."""
    result = load_manifest(path, catalog=catalog)
    if result.manifest is None or result.errors:
        raise error_for(result.path, result.diagnostics)
    return result.manifest
