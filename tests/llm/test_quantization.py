"""Quantization from the manifest (`build.quantize`), on the Qwen3 mini: one quantized build
per session (8da4w linears + 4-bit embeddings), read by every test here; refusals of what a
backend cannot run, at the manifest's line; what enters the cache keys."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.runner import Runner

from tests.helpers.session_builds import build_once
from tests.llm.conftest import build_bundle

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-qwen3")]

ARCH = "qwen3"
# A random-weight mini has near-flat next-token distributions (eager top-2 gaps of a few
# hundredths), so its greedy agreement under 4-bit weights is far below a trained model's;
# the manifest declares its own budget, as a user would.
QUANTIZE = """\
  quantize: {linear: 8da4w, embedding: 4w, group_size: 32}
validate:
  budgets:
    8da4w: {min_agreement: 0.25, max_kl: 0.2}
"""


def quantized_manifest(manifest: Path, name: str, extra: str = QUANTIZE) -> Path:
    """A copy of the mini's manifest (beside it: the folder is `./folder`) with `extra`
    appended to its build section."""
    path = manifest.with_name(name)
    path.write_text(manifest.read_text(encoding="utf-8") + extra, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def quantized_bundle(llm_root: Path, mini_project: Callable[[str], Path]) -> Path:
    manifest = mini_project(ARCH)

    def make(work: Path) -> Path:
        return build_bundle(quantized_manifest(manifest, "manifest-8da4w.yaml"), work / "out")

    return build_once(llm_root, f"{ARCH}-8da4w-bundle", make)


def test_bundle_json_records_the_scheme(quantized_bundle: Path) -> None:
    doc = BundleManifest.from_json((quantized_bundle / "bundle.json").read_bytes())
    assert doc.quantization is not None
    assert doc.quantization["scheme"] == "8da4w"
    assert (doc.quantization["linear"], doc.quantization["embedding"]) == ("8da4w", "4w")
    assert doc.quantization["group_size"] == 32
    assert doc.quantization["library"].startswith("torchao ")


def test_quantized_program_is_a_fraction_of_the_fp32_weights(
    quantized_bundle: Path, mini_project: Callable[[str], Path]
) -> None:
    weights = mini_project(ARCH).parent / "folder" / "model.safetensors"
    pte = (quantized_bundle / "model.pte").stat().st_size
    # fp32 weights are 4 bytes each; 4-bit weights + scales are well under a third of that.
    assert pte < 0.35 * weights.stat().st_size, (pte, weights.stat().st_size)


def test_validation_reports_figures_against_eager_fp32_within_the_declared_budget(
    quantized_bundle: Path,
) -> None:
    report = json.loads((quantized_bundle / "reports" / "validation.json").read_bytes())
    assert report["ok"] is True
    quality = report["quality"]
    assert quality["scheme"] == "8da4w" and quality["calls"] >= 10
    assert quality["budget"] == {"max_abs": 3.0, "min_agreement": 0.25, "max_kl": 0.2}
    assert 0.25 <= quality["agreement"] <= 1.0
    assert 0.0 <= quality["mean_kl"] <= 0.2
    # Quantization moved the logits: the figures are measured, not an fp32 copy.
    assert quality["max_abs"] > 1e-3
    # Parity rows were held to the budget's max_abs, not the manifest's atol 1e-3.
    rows = [row for entry in report["parity"] for row in entry["calls"]]
    assert all(row["ok"] for row in rows) and max(row["max_abs"] for row in rows) > 1e-3


def test_the_python_runner_runs_the_quantized_bundle(quantized_bundle: Path) -> None:
    import numpy as np

    runner = Runner.open(quantized_bundle)
    ids = np.asarray([[5, 6, 7, 8]], dtype=np.int64)
    # input_ids, cache_position, cache_window (`attention: filled`: covers the 4 slots written)
    result = runner.run("prefill", [ids, np.arange(4, dtype=np.int64), np.arange(4)])
    logits = np.asarray(result.outputs[0])
    assert logits.shape[-1] == 512 and np.isfinite(logits).all()


def test_inspect_shows_the_quantization(quantized_bundle: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge", "inspect", str(quantized_bundle)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if "quantization:" in x)
    assert "8da4w" in line and "embedding 4w" in line and "group_size 32" in line


def test_a_budget_the_bundle_misses_fails_validation_naming_it(
    quantized_bundle: Path, mini_project: Callable[[str], Path], tmp_path: Path
) -> None:
    """Export and lower come from the cache (budgets enter only the validate key)."""
    from trt_edge.pipeline.errors import ValidationFailedError

    tight = QUANTIZE.replace("max_kl: 0.2", "max_kl: 0.000001")
    manifest = quantized_manifest(mini_project(ARCH), "manifest-tight.yaml", tight)
    with pytest.raises(ValidationFailedError) as info:
        build_bundle(manifest, tmp_path / "out")
    assert "quality (8da4w): mean KL" in str(info.value)
    assert "validate.budgets.8da4w" in str(info.value)


@pytest.mark.parametrize(
    ("backend", "quantize", "field", "words"),
    [
        ("xnnpack", "{linear: 4w}", "linear", "weight-only 4w linears compute wrong values"),
        ("xnnpack", "{linear: 8w}", "linear", "use 8da4w or 8da8w"),
        ("portable", "{linear: 8da4w}", "linear", "portable backend cannot run"),
        ("tensorrt", "{embedding: 8w}", "embedding", "takes build.precision"),
        ("xnnpack", "{linear: 8da4w, group_size: 48}", "group_size", "multiple of 32"),
    ],
)
def test_a_scheme_the_backend_cannot_run_is_a_manifest_error_at_its_line(
    mini_project: Callable[[str], Path], backend: str, quantize: str, field: str, words: str
) -> None:
    source = mini_project(ARCH)
    text = source.read_text(encoding="utf-8").replace("backend: xnnpack", f"backend: {backend}")
    if backend == "tensorrt":
        text = text.replace("[cpu-x86_64]", "[x86-ampere]")
    path = source.with_name(f"manifest-refused-{backend}-{field}.yaml")
    path.write_text(text + f"  quantize: {quantize}\n", encoding="utf-8")
    line = len(text.splitlines()) + 1
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert f"{path}:{line}:" in output and f"build.quantize.{field}" in output
    assert words in output


def test_backend_override_refuses_the_scheme_before_anything_is_loaded(
    mini_project: Callable[[str], Path], tmp_path: Path
) -> None:
    from trt_edge.pipeline.errors import BadInputError
    from trt_edge.pipeline.run import BuildOptions, build

    manifest = quantized_manifest(mini_project(ARCH), "manifest-override.yaml")
    options = BuildOptions(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache")
    with pytest.raises(BadInputError) as info:
        build(manifest, BuildOptions(**{**vars(options), "backend": "portable"}))
    message = str(info.value)
    assert f"{manifest}:" in message and "build.quantize.linear" in message
    assert "portable backend cannot run" in message


def test_the_scheme_enters_the_export_lower_and_validate_keys(
    mini_project: Callable[[str], Path], tmp_path: Path
) -> None:
    import hashlib

    from trt_edge.pipeline.chain import load_stage, plan_stage
    from trt_edge.pipeline.context import BuildContext
    from trt_edge.pipeline.keys import validate_key
    from trt_edge.pipeline.run import BuildOptions

    source = mini_project(ARCH)
    variants = {
        "fp32": source,
        "8da4w": quantized_manifest(source, "manifest-k1.yaml"),
        "8da8w": quantized_manifest(source, "manifest-k2.yaml", QUANTIZE.replace("4w", "8w")),
        "group64": quantized_manifest(
            source, "manifest-k3.yaml", QUANTIZE.replace("group_size: 32", "group_size: 64")
        ),
    }
    pte = hashlib.sha256(b"same program").hexdigest()  # the validate key takes the .pte's hash
    keys = {}
    for name, manifest in variants.items():
        context = BuildContext.start(BuildOptions(out_dir=tmp_path, cache_dir=tmp_path))
        planned = plan_stage(load_stage(manifest, context), context)
        validate = validate_key(planned.loaded, pte, {})
        keys[name] = (planned.export_key, planned.lower_key, validate)
    for stage in range(3):
        assert len({k[stage] for k in keys.values()}) == len(keys), stage


def test_the_cpp_runner_generates_the_python_runners_tokens(
    quantized_bundle: Path, trt_edge_run: Path
) -> None:
    """trt-edge-run links the quantized kernels (the 4-bit embedding runs outside the XNNPACK
    delegate): without them the load fails with a missing `quantized_decomposed` operator."""
    from trt_edge.llm.generation import greedy_generate

    prompt = [5, 6, 7, 8, 9, 10]
    argv = [str(trt_edge_run), "--bundle", str(quantized_bundle), "--generate", "--json"]
    argv += ["--prompt-ids", ",".join(map(str, prompt)), "--max-new-tokens", "6"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    expected = greedy_generate(Runner.open(quantized_bundle), prompt, 6)
    assert doc["tokens"] == expected.tokens
    assert doc["stop"] == expected.stop
