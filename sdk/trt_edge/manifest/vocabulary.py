"""Names and patterns shared by the models and the semantic checks.

Kept apart from `models.py` so that the checks (which run on every validate)
never import pydantic's model machinery.
"""

from __future__ import annotations

# The integer dtypes (integer `values` ranges apply to them) come from the one dtype table.
from trt_edge_runner.dtypes import INTEGER_DTYPES as INTEGER_DTYPES

API_VERSION = "trt-edge/v1"
NAME_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
SYMBOL_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"

# TensorRT dimensions (nvinfer1::Dims) are int32: an extent above this cannot be built or
# bound, so it is refused where it is written rather than deep inside the build.
MAX_EXTENT = 2**31 - 1
# `values` is [low, high) over integer inputs, at most int64: high may be 2**63 (exclusive).
VALUES_MIN = -(2**63)
VALUES_MAX = 2**63
