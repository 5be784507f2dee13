"""The manifest: one YAML file declaring a model's inputs, profiles, runtime policy and targets.

`load_manifest(path)` runs parse → schema → semantic → resolve and returns a
`LoadResult` with every diagnostic; `load_manifest_or_raise(path)` returns the
`ResolvedManifest` or raises a typed `ManifestError`. Importing this package is
cheap (PyYAML, pydantic, stdlib): it must not slow down `trt-edge validate`.
"""

from trt_edge.manifest.diagnostics import (
    Diagnostic,
    LoadResult,
    ManifestCompatibilityError,
    ManifestError,
    ManifestIOError,
    ManifestParseError,
    ManifestSchemaError,
    ManifestSemanticError,
)
from trt_edge.manifest.load import load_manifest, load_manifest_or_raise
from trt_edge.manifest.resolved import ResolvedManifest

__all__ = [
    "Diagnostic",
    "LoadResult",
    "ManifestCompatibilityError",
    "ManifestError",
    "ManifestIOError",
    "ManifestParseError",
    "ManifestSchemaError",
    "ManifestSemanticError",
    "ResolvedManifest",
    "load_manifest",
    "load_manifest_or_raise",
]
