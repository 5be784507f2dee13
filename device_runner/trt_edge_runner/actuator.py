"""The actuator: a backend's own profile switch. In the Python runner there is none.

docs/design.md keeps three things apart: the pure policy (`policy.py`), emulation
(`emulation.py`: the runner selects and validates itself) and the actuator —
the native TensorRT backend's thread-local `OptimizationProfileGuard`, which
makes the engine itself switch profiles.

Upstream ships that guard in C++ only: pytorch/TensorRT's multi-profile
ExecuTorch backend (an open pull request) adds `OptimizationProfileGuard` to
`torch_tensorrt/executorch/TensorRTBackend.h` with no Python binding, and the
released `torch-tensorrt-executorch-runtime` 0.1.0 (the only Python runtime with
the TensorRT backend linked in) runs profile 0 only. So no Python runtime can
switch a TensorRT engine's profile, and the Python runner does not look for one:
a multi-profile TensorRT bundle runs profile 0 only here and says so once
(`policy.decide_mode`). The native switch lives in the C++ runner `trt-edge-run`,
built with `-DTRT_EDGE_TORCHTRT_PROFILE_GUARD=ON` against that backend
(`device_runner/cpp/runner/actuator_torchtrt.cpp`). CPU bundles lose nothing:
emulation is their whole profile support.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

# Whether this (Python) runner can drive a native TensorRT profile guard: never,
# for the reason above. Input to `policy.decide_mode`, reported by `trt-edge-device info`.
NATIVE_PROFILE_GUARD = False

WHERE_THE_NATIVE_SWITCH_LIVES = (
    "the native TensorRT profile switch lives in the C++ runner trt-edge-run "
    "(built with -DTRT_EDGE_TORCHTRT_PROFILE_GUARD=ON); upstream has no Python binding for it"
)
