"""`bundle.json` `memory` on the mini causal LMs: read from the program, checked against the
model's config, an independent reader of the `.pte` and the runner's measured peak RSS;
and the build's warning when a target's board cannot hold the bundle."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleFormatError, BundleManifest

from tests.llm.llm_folders import ARCHITECTURES, MAX_CACHE_LEN

ARCH = [pytest.param(a, marks=pytest.mark.xdist_group(f"llm-{a}")) for a in ARCHITECTURES]


def manifest_of(bundle: Path) -> BundleManifest:
    return BundleManifest.from_json((bundle / BUNDLE_JSON).read_bytes())


def tight_orin_manifest(source: Path, tmp_path: Path) -> Path:
    """The mini's manifest (`source`) also built for the Orin Nano, with a headroom that
    leaves its 4 GiB module 8 MiB, written in `tmp_path`."""
    text = source.read_text().replace("./folder", str(source.parent / "folder"))
    old = "targets: [cpu-x86_64]"
    assert old in text
    text = text.replace(
        old, "targets: [cpu-x86_64, jetson-orin-nano-jp6]\n  memory_headroom_mib: 4088"
    )
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text)
    return manifest


@pytest.mark.parametrize("arch", ARCH)
def test_kv_cache_bytes_follow_the_models_config(
    arch: str, mini_bundle: Callable[[str], Path], mini_project: Callable[[str], Path]
) -> None:
    memory = manifest_of(mini_bundle(arch)).memory
    assert memory is not None
    config = json.loads((mini_project(arch).parent / "folder" / "config.json").read_text())
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads") or config["num_attention_heads"]
    float32 = 4
    expected = 2 * config["num_hidden_layers"] * kv_heads * MAX_CACHE_LEN * head_dim * float32
    assert memory.kv_cache_bytes == expected


@pytest.mark.parametrize("arch", ARCH)
def test_planned_and_weight_bytes_match_executorchs_own_reading(
    arch: str, mini_bundle: Callable[[str], Path], mini_project: Callable[[str], Path]
) -> None:
    from executorch.exir._serialize._program import deserialize_pte_binary

    bundle = mini_bundle(arch)
    memory = manifest_of(bundle).memory
    assert memory is not None
    data = (bundle / "model.pte").read_bytes()
    program = deserialize_pte_binary(data).program
    (plan,) = program.execution_plan
    assert memory.planned_bytes == sum(plan.non_const_buffer_sizes[1:])
    assert memory.kv_cache_bytes < memory.planned_bytes  # the cache is planned memory
    # Weights: at least the folder's fp32 parameters (less the safetensors header), at
    # most the whole program file and its external data (a tied model's `model.ptd`).
    folder = mini_project(arch).parent / "folder"
    parameters = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
    assert parameters > 0
    external = sum(p.stat().st_size for p in bundle.glob("*.ptd"))
    assert parameters * 0.95 <= memory.weights_bytes <= len(data) + external
    assert memory.total_bytes == (memory.weights_bytes + memory.planned_bytes + memory.runner_bytes)


@pytest.mark.xdist_group("llm-qwen3")
def test_the_runners_measured_peak_rss_stays_within_the_recorded_needs(
    mini_bundle: Callable[[str], Path], trt_edge_run: Path, tmp_path: Path
) -> None:
    """The estimate is an upper bound for what the C++ runner really uses with the bundle
    (every phase executed), so a device that passes the check can run the bundle."""
    bundle = mini_bundle("qwen3")
    memory = manifest_of(bundle).memory
    assert memory is not None
    time = shutil.which("time", path="/usr/bin") or pytest.fail(
        "GNU time (/usr/bin/time, Debian package 'time') is missing: run .ci/sysdeps"
    )
    report = tmp_path / "maxrss"
    # GNU time, not ru_maxrss from here: a child forked from pytest counts pytest's own
    # resident pages until its exec.
    run = [str(trt_edge_run), "--bundle", str(bundle), "--phases", "all", "--json"]
    subprocess.run(
        [time, "-f", "%M", "-o", str(report), *run],
        check=True,
        capture_output=True,
    )
    peak = int(report.read_text().split()[-1]) * 1024  # kB
    assert peak <= memory.total_bytes, (peak, memory)


@pytest.mark.xdist_group("llm-qwen3")
def test_a_memory_section_with_a_negative_size_is_refused_naming_the_field(
    mini_bundle: Callable[[str], Path],
) -> None:
    doc = json.loads((mini_bundle("qwen3") / BUNDLE_JSON).read_bytes())
    doc["memory"]["planned_bytes"] = -1
    with pytest.raises(BundleFormatError, match=r"memory\.planned_bytes: must be >= 0"):
        BundleManifest.from_dict(doc)
    del doc["memory"]["total_bytes"]
    with pytest.raises(BundleFormatError, match=r"memory\.total_bytes: missing"):
        BundleManifest.from_dict(doc)


@pytest.mark.xdist_group("llm-qwen3")
def test_build_warns_when_a_boards_memory_less_headroom_cannot_hold_the_bundle(
    mini_project: Callable[[str], Path], tmp_path: Path
) -> None:
    """Built for the Orin Nano with a headroom that leaves the 4 GiB module 8 MiB: the
    build warns for that module only (stage cache: export, lowering and validation are
    the mini's own); the option overrides the manifest's headroom."""
    from trt_edge.cli._build import memory_lines
    from trt_edge.library_noise import quiet_library_noise
    from trt_edge.pipeline.run import BuildOptions, build

    from tests.helpers.fixtures_bundles import SOURCE_DATE_EPOCH
    from tests.helpers.session_builds import fixture_cache_dir

    manifest = tight_orin_manifest(mini_project("qwen3"), tmp_path)

    def built(headroom_mib: int | None = None) -> tuple[str, ...]:
        with quiet_library_noise():
            result = build(
                manifest,
                BuildOptions(
                    out_dir=tmp_path / "out",
                    cache_dir=fixture_cache_dir(),
                    source_date_epoch=SOURCE_DATE_EPOCH,
                    target="jetson-orin-nano-jp6",
                    memory_headroom_mib=headroom_mib,
                ),
            )
        lines = memory_lines(result.bundle_dir, result.memory_warnings)
        assert lines[0].startswith("  memory   needs ")
        return result.memory_warnings

    warnings = built()
    assert [w.split(":")[0] for w in warnings] == ["jetson-orin-nano-jp6 4 GiB"]
    assert "4,088 MiB headroom = 8.0 MiB" in warnings[0]
    assert "fits the 8 GiB module" in warnings[0]
    assert built(headroom_mib=0) == ()
    shutil.rmtree(tmp_path / "out")


@pytest.mark.parametrize("arch", ARCH)
def test_the_estimate_before_building_is_a_lower_bound_of_the_built_needs(
    arch: str, mini_bundle: Callable[[str], Path], mini_project: Callable[[str], Path]
) -> None:
    from trt_edge.manifest import load_manifest_or_raise
    from trt_edge.memory.estimate import manifest_estimate

    built = manifest_of(mini_bundle(arch)).memory
    estimate = manifest_estimate(load_manifest_or_raise(mini_project(arch)))
    assert built is not None and estimate is not None
    assert estimate.kv_cache_bytes == built.kv_cache_bytes
    assert estimate.weights_bytes <= built.weights_bytes
    assert estimate.total_bytes <= built.total_bytes


@pytest.mark.xdist_group("llm-qwen3")
def test_validate_warns_before_building_when_a_board_cannot_hold_the_model(
    mini_project: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from trt_edge.cli.main import main

    manifest = tight_orin_manifest(mini_project("qwen3"), tmp_path)
    assert main(["validate", str(manifest)]) == 0  # a warning, not an error
    captured = capsys.readouterr()
    assert "memory estimated before building: at least" in captured.out
    (warning,) = [line for line in captured.err.splitlines() if "warning: memory:" in line]
    assert "jetson-orin-nano-jp6 4 GiB" in warning and "fits the 8 GiB module" in warning
    assert main(["validate", str(manifest), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["memory"]["warnings"] == [warning.split("warning: memory: ", 1)[1]]
