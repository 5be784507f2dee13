"""Writes `mode_decision.json`, the conformance vectors for how a bundle runs on a runner.

The decision (`trt_edge_runner.policy.decide_mode`, C++ `trt_edge/mode_decision.h`)
takes the bundle's delegate backend ids, its profile count, whether the runner has
a native TensorRT profile guard (the Python runner never; the C++ runner when built
with -DTRT_EDGE_TORCHTRT_PROFILE_GUARD=ON) and whether the policy is honoured, and
answers a mode (native or emulated), whether only profile 0 runs, and which notice
to give once (none, "tensorrt_without_native_guard", "policy_ignored"). Every
expectation is written by hand from docs/design.md ("Runner: decide, apply, or
emulate", and "a multi-profile .pte on a runner without profile support is load
compatible: profile 0 only"); nothing here calls an implementation. Regenerate with:

    .venv/bin/python tests/vectors/generate_mode_decision.py   # --check: compare only
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vector_file import vector_document, write_or_check

OUT = Path(__file__).with_name("mode_decision.json")

TRT = "TensorRTBackend"
XNN = "XnnpackBackend"
CUDA = "CudaBackend"

Case = dict[str, Any]
Expect = tuple[str, bool, str | None]  # (mode, profile 0 only, notice)

NO_GUARD = "tensorrt_without_native_guard"
IGNORED = "policy_ignored"

EMULATED: Expect = ("emulated", False, None)
NATIVE: Expect = ("native", False, None)
PROFILE0_NO_GUARD: Expect = ("emulated", True, NO_GUARD)
PROFILE0_IGNORED: Expect = ("emulated", True, IGNORED)
PROFILE0_SILENT: Expect = ("emulated", True, None)
NATIVE_PROFILE0_IGNORED: Expect = ("native", True, IGNORED)
NATIVE_PROFILE0_SILENT: Expect = ("native", True, None)


def cases() -> list[Case]:
    out: list[Case] = []

    def add(
        name: str,
        backends: list[str],
        profiles: int,
        expect: Expect,
        *,
        guard: bool = False,
        honour: bool = True,
    ) -> None:
        mode, profile0_only, notice = expect
        out.append(
            {
                "name": name,
                "delegate_backends": backends,
                "profiles": profiles,
                "native_guard": guard,
                "honour_policy": honour,
                "expect": {"mode": mode, "profile0_only": profile0_only, "notice": notice},
            }
        )

    # CPU bundles: emulated whatever the runner has; the runner itself is the policy.
    add("xnnpack, 2 profiles, no guard", [XNN], 2, EMULATED)
    add("xnnpack, 2 profiles, guard present", [XNN], 2, EMULATED, guard=True)
    add("portable (no delegates), 3 profiles", [], 3, EMULATED)
    add("portable, 1 profile, guard present", [], 1, EMULATED, guard=True)
    add("a CUDA delegate is not TensorRT", [CUDA], 2, EMULATED, guard=True)
    add("a backend id differing in case is not TensorRT", ["tensorrtbackend"], 2, EMULATED)
    # TensorRT with a native guard: the engine itself switches.
    add("tensorrt, 2 profiles, guard", [TRT], 2, NATIVE, guard=True)
    add("tensorrt, 1 profile, guard", [TRT], 1, NATIVE, guard=True)
    add("tensorrt and xnnpack delegates, guard", [XNN, TRT], 3, NATIVE, guard=True)
    add("two tensorrt delegates, guard", [TRT, TRT], 2, NATIVE, guard=True)
    # TensorRT without one: load compatible, profile 0 only, said once when N > 1.
    add("tensorrt, 2 profiles, no guard", [TRT], 2, PROFILE0_NO_GUARD)
    add("tensorrt, 3 profiles, no guard, mixed delegates", [TRT, XNN], 3, PROFILE0_NO_GUARD)
    add("tensorrt, 1 profile, no guard: unchanged and silent", [TRT], 1, EMULATED)
    add("tensorrt, no profiles, no guard", [TRT], 0, EMULATED)
    # The policy ignored on request: profile 0 only, said for multi-profile bundles.
    add("policy ignored, xnnpack, 2 profiles", [XNN], 2, PROFILE0_IGNORED, honour=False)
    add("policy ignored, xnnpack, 1 profile: silent", [XNN], 1, PROFILE0_SILENT, honour=False)
    add(
        "policy ignored, tensorrt with guard, 2 profiles",
        [TRT],
        2,
        NATIVE_PROFILE0_IGNORED,
        guard=True,
        honour=False,
    )
    add(
        "policy ignored, tensorrt with guard, 1 profile",
        [TRT],
        1,
        NATIVE_PROFILE0_SILENT,
        guard=True,
        honour=False,
    )
    add(
        "policy ignored, tensorrt without guard, 2 profiles: the guard notice wins",
        [TRT],
        2,
        PROFILE0_NO_GUARD,
        honour=False,
    )
    add("policy ignored, portable, no profiles", [], 0, PROFILE0_SILENT, honour=False)
    return out


def document() -> str:
    description = (
        "Conformance vectors for the trt-edge mode decision (docs/design.md, 'Runner: decide, "
        "apply, or emulate'). Run: python -m trt_edge_runner.conformance FILE, and the C++ "
        "trt_edge_conformance FILE."
    )
    header = {"format": "mode_decision", "tensorrt_backend_id": TRT}
    return vector_document(cases(), description, header)


if __name__ == "__main__":
    write_or_check(OUT, document())
