"""`trt-edge build --container` in the x86-rtx builder: a real TensorRT-RTX engine built
inside the image, the same engine a local build makes.

Byte equality is not what TensorRT-RTX 1.7 gives: two builds of one network on one machine
(measured: local twice) produce engines of the same size that differ in a few hundred bytes
— the order of the engine's internal tensor-name tables (`output_0 [profile 1]` and
`output_1 [profile 1]` swap) — so the container build is held to everything else: the
engine's size, its record (I/O, profiles as given to the builder, compute capabilities,
release, the builder's memory report) and the bundle's shape (docs/tensorrt.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from docker import DockerClient
from trt_edge.containers.build_runner import build_in_container
from trt_edge.pipeline.run import BuildOptions, build

from tests.containers.builds import quiet

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("container-builds")]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny_llm"


def _engine(bundle: Path) -> dict[str, Any]:
    doc = json.loads((bundle / "bundle.json").read_text())
    (delegate,) = doc["delegates"]
    engine: dict[str, Any] = delegate["engine"]
    return engine


def test_container_build_in_x86_rtx_makes_the_local_engine(
    tmp_path: Path, x86_rtx_image: str, docker_client: DockerClient
) -> None:
    project = tmp_path / "tiny_llm"
    shutil.copytree(EXAMPLE, project)
    manifest = project / "manifest.yaml"

    def options(where: str) -> BuildOptions:
        return BuildOptions(
            out_dir=tmp_path / where / "out",
            cache_dir=tmp_path / where / "cache",
            source_date_epoch=0,
            backend="tensorrt",
            target="x86-rtx",
        )

    local = build(manifest, options("local"))
    inside = build_in_container(
        manifest, options("container"), "x86-rtx", x86_rtx_image, client=docker_client, echo=quiet
    )
    assert inside.backend == "tensorrt" and inside.report.ok
    doc = json.loads((inside.bundle_dir / "bundle.json").read_text())
    assert doc["provenance"]["builder"]["mode"] == "container"
    assert doc["provenance"]["builder"]["image"] == x86_rtx_image
    ours, theirs = _engine(local.bundle_dir), _engine(inside.bundle_dir)
    assert theirs["flavour"] == "tensorrt_rtx" and theirs["version"] == "1.7.1.116"
    same = {k: v for k, v in ours.items() if k != "engine_sha256"}
    assert {k: v for k, v in theirs.items() if k != "engine_sha256"} == same
    assert (inside.bundle_dir / "model.pte").stat().st_size == (
        local.bundle_dir / "model.pte"
    ).stat().st_size
