"""A bundle for a second CPU target costs no export, lowering or validation: the same program.

An XNNPACK `.pte` does not depend on the CPU architecture, so the target is in no
stage cache key; only bundle.json (its target fingerprint: arch only, every GPU
field unset) differs. The examples list cpu-x86_64 and cpu-aarch64 for this.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.fixtures_bundles import SOURCE_DATE_EPOCH
from tests.helpers.session_builds import fixture_cache_dir

pytestmark = pytest.mark.slow


def test_cpu_aarch64_reuses_the_x86_64_build_stages(vision_manifest: Path, tmp_path: Path) -> None:
    from trt_edge.pipeline.run import BuildOptions, build

    def bundle_for(target: str) -> tuple[Path, dict[str, bool], dict[str, float]]:
        options = BuildOptions(
            out_dir=tmp_path / target,
            cache_dir=fixture_cache_dir(),
            source_date_epoch=SOURCE_DATE_EPOCH,
            target=target,
        )
        result = build(vision_manifest, options)
        return result.bundle_dir, result.cached, result.stage_seconds

    x86, _, _ = bundle_for("cpu-x86_64")
    arm, cached, stages = bundle_for("cpu-aarch64")
    assert cached["lower"] and cached["validate"], cached
    assert "export" not in stages  # a cached lowering needs no exported program
    assert (arm / "model.pte").read_bytes() == (x86 / "model.pte").read_bytes()
    target = json.loads((arm / "bundle.json").read_text())["target"]
    assert target["id"] == "cpu-aarch64" and target["arch"] == "aarch64"
    # A CPU bundle asks its architecture only (the catalog's per-backend fingerprint).
    assert set(target) == {"id", "kind", "arch"}
