"""Session fixtures: real bundles and programs that several test areas share.

- `tiny_llm_bundle`, `vision_bundle`: the example bundles, built by
  `trt_edge.pipeline.run.build` from `examples/*/manifest.yaml` — real `.pte` files,
  validated with the real ExecuTorch runtime. Stage outputs go to a persistent cache
  (`$TRT_EDGE_TEST_CACHE`, default `~/.cache/trt-edge/tests`), keyed by content, so an
  unchanged checkout does not re-lower between sessions.
- `tiny_model`, `tiny_pte`: the tiny eager model of `tests.helpers.bundles` and its
  lowered program, around which `write_bundle` makes small bundles.
- `agent_bundles`: signed transport tars of the tiny program (versions, a wrong target,
  an untrusted key, a bundle whose smoke run fails), for the agent and fleet tests.

The slow ones are built once per test session and shared by the pytest-xdist workers
(`tests.helpers.session_builds`). They are shared: treat them as read-only. A test that
edits files copies the directory first (`shutil.copytree(bundle, tmp_path / "b")`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

import pytest

from tests.helpers.bundles import (
    LLM_PROFILES,
    BundleContents,
    ProfileSpec,
    build_tiny_model,
    lower_tiny_model,
    make_signed_tar,
)
from tests.helpers.paths import EXAMPLES
from tests.helpers.session_builds import build_once, fixture_cache_dir, shared_root
from tests.helpers.targets import ORIN_NANO, fingerprint

if TYPE_CHECKING:
    import torch

SOURCE_DATE_EPOCH = 1_780_000_000  # fixed, so the fixture bundles are reproducible


def build_example(example: str, out_dir: Path, target: str | None = None) -> Path:
    """Build `examples/<example>` into `out_dir` with the real pipeline; the bundle dir.

    `target` is a catalog id among the manifest's build.targets (default: its first). The
    stage cache shares export, lowering and validation between targets whose program is
    the same (every CPU target: an XNNPACK .pte does not depend on the architecture).
    """
    from trt_edge.pipeline.run import BuildOptions, build

    result = build(
        EXAMPLES / example / "manifest.yaml",
        BuildOptions(
            out_dir=out_dir,
            cache_dir=fixture_cache_dir(),
            source_date_epoch=SOURCE_DATE_EPOCH,
            target=target,
        ),
    )
    return result.bundle_dir


@pytest.fixture(scope="session")
def tiny_llm_manifest() -> Path:
    return EXAMPLES / "tiny_llm" / "manifest.yaml"


@pytest.fixture(scope="session")
def vision_manifest() -> Path:
    return EXAMPLES / "vision" / "manifest.yaml"


@pytest.fixture(scope="session")
def tiny_llm_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny LLM (profiles decode=0, prefill=1; pinned phases) built for cpu-x86_64."""
    root = shared_root(tmp_path_factory)
    return build_once(root, "tiny_llm", lambda out: build_example("tiny_llm", out))


@pytest.fixture(scope="session")
def vision_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny CNN (batch profiles 1 / 2-8 / 9-32; auto policy) built for cpu-x86_64."""
    root = shared_root(tmp_path_factory)
    return build_once(root, "vision", lambda out: build_example("vision", out))


@pytest.fixture(scope="session")
def tiny_model() -> torch.nn.Module:
    return build_tiny_model()


@pytest.fixture(scope="session")
def tiny_pte(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model lowered with XNNPACK (seq 1..64), once per session."""
    root = shared_root(tmp_path_factory)
    return build_once(
        root, "tiny-pte", lambda out: lower_tiny_model(build_tiny_model(), out / "model.pte")
    )


@dataclass(frozen=True)
class Bundles:
    """Signed transport tars (`DIR/tiny-VERSION.tar`, beside the directory they were packed
    from) and the keys: `keys` is a trusted-keys directory holding `publisher.pub`."""

    keys: Path
    key: Path
    v1: Path
    v2: Path
    v2_rebuilt: Path  # 2.0.0 again, other content (another prefill opt shape)
    slow_to_fail: Path  # signed and valid, but its prefill opt shape is beyond the program
    orin: Path  # a TensorRT fingerprint for a Jetson Orin Nano: wrong target here
    orin_cpu: Path  # an XNNPACK bundle for the Orin Nano: asks only arch aarch64
    other_key: Path  # signed by a key the device does not trust
    pte: Path  # the real program every bundle here carries
    other_private: Path  # the untrusted key's private half

    def make(
        self, out: Path, version: str, key: Path | None = None, **contents: Unpack[BundleContents]
    ) -> Path:
        """Another signed tar of the same program (`key` defaults to the trusted one)."""
        return make_signed_tar(out, self.pte, version, key or self.key, **contents)


@pytest.fixture(scope="session")
def agent_bundles(tmp_path_factory: pytest.TempPathFactory, tiny_pte: Path) -> Bundles:
    from trt_edge.signing import generate_keypair

    root = tmp_path_factory.mktemp("agent-bundles")
    pair = generate_keypair(root / "keys")
    other = generate_keypair(root / "other-keys")
    trusted = root / "trusted"
    trusted.mkdir()
    (trusted / "publisher.pub").write_bytes(pair.public_path.read_bytes())
    key = pair.private_path

    def signed(
        folder: str,
        version: str,
        profiles: Sequence[ProfileSpec] = LLM_PROFILES,
        **contents: Unpack[BundleContents],
    ) -> Path:
        return make_signed_tar(root / folder, tiny_pte, version, key, profiles=profiles, **contents)

    return Bundles(
        keys=trusted,
        key=key,
        v1=signed("v1", "1.0.0"),
        v2=signed("v2", "2.0.0"),
        v2_rebuilt=signed("v2-rebuilt", "2.0.0", [("decode", 1, 1, 1), ("prefill", 2, 32, 64)]),
        slow_to_fail=signed("bad", "3.0.0-bad", [("decode", 1, 1, 1), ("prefill", 2, 100, 128)]),
        orin=signed("orin", "1.0.0-orin", target=fingerprint(ORIN_NANO, "tensorrt")),
        orin_cpu=signed("orin-cpu", "1.0.0-orin-cpu", target=ORIN_NANO),
        other_key=make_signed_tar(root / "other", tiny_pte, "9.9.9", other.private_path),
        pte=tiny_pte,
        other_private=other.private_path,
    )
