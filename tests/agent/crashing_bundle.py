"""A signed bundle whose `model.pte` really crashes `trt-edge-run`, found at test time.

ExecuTorch's loader is not hardened against every malformed program: with full
verification, about 2 in 1,000 mutated programs still end the runner by a signal.
This finds one by the deterministic search of `fuzz.program_mutations.find_crash`
(seed 0, mutations of `model.pte` in index order, digests recomputed) over a copy of
a good agent bundle, then signs it: a bundle any device would accept up to its smoke
run. The same program and runner give the same crash every time; a different
ExecuTorch build may crash on another index, which the search then finds.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from trt_edge.signing import sign_bundle
from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest
from trt_edge_runner.runner_interface import EXIT_KINDS

from tests.fuzz.program_mutations import Mutation, Outcome, find_crash
from tests.helpers.bundles import pack, write_bundle


@dataclasses.dataclass(frozen=True)
class CrashingBundle:
    tar: Path
    directory: Path
    mutation: Mutation
    outcome: Outcome  # what the search saw: "crash:SIGSEGV" / "crash:SIGABRT", and the stage


def make_crashing_tar(
    out: Path, pte: Path, key: Path, runner: Path, version: str = "6.6.6-crash"
) -> CrashingBundle:
    """Search, write and sign `out/tiny-VERSION` (+ its .tar); AssertionError if no crash."""
    good = write_bundle(out / "good" / f"tiny-{version}", pte, version=version, key=key)
    found = find_crash([str(runner)], good, out / "search", EXIT_KINDS)
    assert found is not None, (
        f"no mutation of {pte} crashed {runner} within the search limit: has ExecuTorch "
        "hardened its loader? Then this test's premise is gone; see tests/fuzz"
    )
    case, outcome = found
    bundle = out / "signed" / good.name
    shutil.copytree(good, bundle)
    (bundle / "model.pte").write_bytes(case.pte)
    manifest = BundleManifest.from_json(case.bundle_json)
    (bundle / BUNDLE_JSON).write_bytes(manifest.to_canonical_json())
    sign_bundle(bundle, key)
    return CrashingBundle(pack(bundle, out / f"{bundle.name}.tar"), bundle, case, outcome)
