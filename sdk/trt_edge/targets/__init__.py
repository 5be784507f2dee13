"""Target catalog: device families (CPU, Jetson, x86 GPU) and their software stacks, as data."""

from trt_edge.targets.catalog import (
    BackendNeeds,
    CatalogError,
    Target,
    TargetCatalog,
    UnknownBackendError,
    UnknownTargetError,
    did_you_mean,
    load_catalog,
)

__all__ = [
    "BackendNeeds",
    "CatalogError",
    "Target",
    "TargetCatalog",
    "UnknownBackendError",
    "UnknownTargetError",
    "did_you_mean",
    "load_catalog",
]
