"""The Python runner end to end: real `.pte` files, the real ExecuTorch runtime.

Each test pins one behaviour of issue 5's list: pinned 0 / nonzero, auto,
phase transitions, sticky overlaps, shapes only a nonzero profile accepts,
invalid indices, the largest output from a nonzero profile, tar round trips,
a policy-ignoring runner, tampered files.
"""

from __future__ import annotations

import logging
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from trt_edge_runner.bundle_format import DelegateInfo
from trt_edge_runner.errors import (
    BundleFormatMismatchError,
    BundleIntegrityError,
    ExecutionError,
    InputSpecError,
    InputValueError,
    ProfileMismatchError,
    RequestedProfileUnavailableError,
    UnknownPhaseError,
)
from trt_edge_runner.guard import OptimizationProfileGuard
from trt_edge_runner.policy import Outcome, Request
from trt_edge_runner.runner import Runner

from tests.helpers.bundles import (
    LLM_PHASES,
    LLM_PROFILES,
    SEQ_MAX,
    VOCAB,
    WIDTH,
    BundleMaker,
    eager,
)

pytestmark = pytest.mark.slow


def ids(seq: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, size=(1, seq), dtype=np.int64)


SCALE = np.array([0.5], dtype=np.float32)


def test_pinned_profile_zero_runs_decode_and_matches_eager(
    llm_like_bundle: Path, tiny_model: Any
) -> None:
    runner = Runner.open(llm_like_bundle)
    x = ids(1)
    result = runner.run(0, [x, SCALE])
    assert result.profile == 0
    assert result.outcome is Outcome.OK
    assert result.outputs[0].shape == (1, 1, WIDTH)
    np.testing.assert_allclose(result.outputs[0], eager(tiny_model, x, SCALE), atol=1e-5)
    assert runner.last_profile == 0
    assert runner.mode == "emulated"


def test_released_runner_refuses_to_execute(llm_like_bundle: Path) -> None:
    """release() drops the program (validation frees it before loading the eager model):
    a later execution is a clear error, not a crash on a freed method."""
    runner = Runner.open(llm_like_bundle)
    assert runner.run(0, [ids(1), SCALE]).profile == 0
    runner.release()
    with pytest.raises(ExecutionError, match="released; open the bundle again"):
        runner.run(0, [ids(1), SCALE])
    assert runner.manifest.method  # the bundle's description stays readable


def test_pinned_nonzero_profile_runs_prefill(llm_like_bundle: Path, tiny_model: Any) -> None:
    runner = Runner.open(llm_like_bundle)
    x = ids(16)
    result = runner.run(1, [x, SCALE])
    assert result.profile == 1
    np.testing.assert_allclose(result.outputs[0], eager(tiny_model, x, SCALE), atol=1e-5)


def test_phase_names_map_to_the_bundle_policy(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle)
    assert runner.phases == ("decode", "prefill")
    assert runner.run("prefill", [ids(8), SCALE]).profile == 1
    assert runner.run("decode", [ids(1), SCALE]).profile == 0


def test_auto_picks_the_only_profile_that_fits(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle)
    assert runner.run(Request.auto(), [ids(1), SCALE]).profile == 0
    assert runner.run(Request.auto(), [ids(40), SCALE]).profile == 1
    assert runner.run(Request.auto(), [ids(1), SCALE]).profile == 0


def test_prefill_decode_prefill_transitions_use_guards(
    llm_like_bundle: Path, tiny_model: Any
) -> None:
    runner = Runner.open(llm_like_bundle)
    seen = []
    for seq, phase in [
        (12, "prefill"),
        (1, "decode"),
        (1, "decode"),
        (30, "prefill"),
        (1, "decode"),
    ]:
        x = ids(seq, seed=seq)
        with runner.phase(phase):
            result = runner.execute([x, SCALE])
        np.testing.assert_allclose(result.outputs[0], eager(tiny_model, x, SCALE), atol=1e-5)
        seen.append(result.profile)
    assert seen == [1, 0, 0, 1, 0]


def test_overlapping_profiles_stay_sticky_under_auto(overlapping_bundle: Path) -> None:
    runner = Runner.open(overlapping_bundle)
    with runner.phase("any"):
        # 12 fits both: first-fit from a fresh table takes profile 0.
        assert runner.execute([ids(12), SCALE]).profile == 0
        # 40 fits only profile 1: switch.
        assert runner.execute([ids(40), SCALE]).profile == 1
        # 12 again: profile 1 still fits, so auto keeps it (sticky), not the lowest index.
        assert runner.execute([ids(12), SCALE]).profile == 1
        # 2 fits only profile 0: rescan.
        assert runner.execute([ids(2), SCALE]).profile == 0
        assert runner.execute([ids(12), SCALE]).profile == 0


def test_shape_only_a_nonzero_profile_accepts(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle)
    with pytest.raises(ProfileMismatchError, match=r"'ids' dim 1 = 20 .*\[1, 1\]"):
        runner.run("decode", [ids(20), SCALE])
    assert runner.run("prefill", [ids(20), SCALE]).profile == 1


def test_shape_no_profile_accepts_lists_every_profile(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle)
    with pytest.raises(ProfileMismatchError) as info:
        runner.run(Request.auto(), [ids(SEQ_MAX + 1), SCALE])
    message = str(info.value)
    assert "profile 0 ('decode')" in message and "profile 1 ('prefill')" in message
    assert "2..64" in message


def test_invalid_profile_index_is_refused_before_running(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle)
    with pytest.raises(RequestedProfileUnavailableError, match=r"pins profile 2.*0\.\.1"):
        runner.run(2, [ids(1), SCALE])
    with pytest.raises(ValueError, match="must be >= 0"):
        runner.run(-1, [ids(1), SCALE])
    assert runner.last_profile is None


def test_unknown_phase_names_the_phases_that_exist(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle)
    with pytest.raises(UnknownPhaseError, match=r"'warmup'.*'decode', 'prefill'"):
        runner.run("warmup", [ids(1), SCALE])


def test_nonzero_profile_produces_the_largest_output(
    llm_like_bundle: Path, tiny_model: Any
) -> None:
    runner = Runner.open(llm_like_bundle)
    x = ids(SEQ_MAX, seed=3)
    result = runner.run("prefill", [x, SCALE])
    assert result.outputs[0].shape == (1, SEQ_MAX, WIDTH)
    np.testing.assert_allclose(result.outputs[0], eager(tiny_model, x, SCALE), atol=1e-5)


def test_bundle_round_tripped_through_tar_runs(
    llm_like_bundle: Path, tmp_path: Path, tiny_model: Any
) -> None:
    archive = tmp_path / "bundle.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(llm_like_bundle, arcname="tiny-0.0.1")
    unpacked = tmp_path / "unpacked"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    runner = Runner.open(unpacked / "tiny-0.0.1")
    x = ids(9)
    result = runner.run("prefill", [x, SCALE])
    np.testing.assert_allclose(result.outputs[0], eager(tiny_model, x, SCALE), atol=1e-5)


def test_policy_ignoring_runner_runs_profile_zero_only(
    llm_like_bundle: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="trt_edge_runner.runner"):
        runner = Runner.open(llm_like_bundle, honour_policy=False)
    assert sum("profile 0 only" in r.message for r in caplog.records) == 1
    # Every request runs profile 0, as an old runner without profile support would.
    assert runner.run("prefill", [ids(1), SCALE]).profile == 0
    assert runner.run(1, [ids(1), SCALE]).profile == 0
    # ... and a prefill-sized input fails against profile 0, as it would on the engine.
    with pytest.raises(ProfileMismatchError, match="profile 0"):
        runner.run("prefill", [ids(16), SCALE])


def test_tensorrt_multi_profile_bundle_without_guard_is_refused_or_profile0(
    make_bundle: BundleMaker,
) -> None:
    # This runtime has no TensorRT backend: a bundle with TensorRT delegates cannot load,
    # and the error says which backend is missing instead of a raw runtime failure.
    bundle = make_bundle(
        LLM_PROFILES, LLM_PHASES, delegates=(DelegateInfo("TensorRTBackend", "forward", 0, 100),)
    )
    with pytest.raises(Exception, match=r"needs backend\(s\) TensorRTBackend"):
        Runner.open(bundle)


def test_tampered_file_is_refused(llm_like_bundle: Path) -> None:
    pte = llm_like_bundle / "model.pte"
    data = bytearray(pte.read_bytes())
    data[len(data) // 2] ^= 0xFF
    pte.write_bytes(bytes(data))
    with pytest.raises(BundleIntegrityError, match=r"model\.pte: sha256 .* was modified"):
        Runner.open(llm_like_bundle)


def test_truncated_and_missing_files_are_refused(llm_like_bundle: Path) -> None:
    pte = llm_like_bundle / "model.pte"
    pte.write_bytes(pte.read_bytes()[:-1])
    with pytest.raises(BundleIntegrityError, match="size"):
        Runner.open(llm_like_bundle)
    pte.unlink()
    with pytest.raises(BundleIntegrityError, match="missing"):
        Runner.open(llm_like_bundle)


def test_not_a_bundle_directory(tmp_path: Path) -> None:
    with pytest.raises(BundleFormatMismatchError, match=r"bundle\.json: missing"):
        Runner.open(tmp_path)


def test_values_checked_when_asked(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle, check_values=True)
    bad = ids(4)
    bad[0, 2] = VOCAB
    with pytest.raises(InputValueError, match=r"'ids'\[0, 2\] = 16 .*\[0, 16\)"):
        runner.run("prefill", [bad, SCALE])
    # Off per call: the runtime reads out of bounds silently, which is why the check exists.
    assert runner.run("prefill", [ids(4), SCALE], check_values=False).profile == 1


def test_wrong_input_count_and_dtype(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle)
    with pytest.raises(InputSpecError, match=r"1 input\(s\) passed.*ids, scale"):
        runner.run("decode", [ids(1)])
    with pytest.raises(InputSpecError, match=r"'scale' has dtype float64.*float32"):
        runner.run("decode", [ids(1), np.array([0.5])])


def test_torch_tensors_are_accepted(llm_like_bundle: Path, tiny_model: Any) -> None:
    import torch

    runner = Runner.open(llm_like_bundle)
    x = ids(5)
    result = runner.run("prefill", [torch.from_numpy(x), torch.tensor([0.5])])
    np.testing.assert_allclose(result.outputs[0], eager(tiny_model, x, SCALE), atol=1e-5)


def test_nested_guards_restore_the_enclosing_request(llm_like_bundle: Path) -> None:
    runner = Runner.open(llm_like_bundle)
    with runner.phase("prefill"):
        with OptimizationProfileGuard(0):
            assert runner.execute([ids(1), SCALE]).profile == 0
        assert runner.execute([ids(3), SCALE]).profile == 1
    # No guard in scope: Default → profile 0.
    assert runner.execute([ids(1), SCALE]).request == Request.default()


def test_check_answers_without_running_or_moving_sticky_state(overlapping_bundle: Path) -> None:
    runner = Runner.open(overlapping_bundle)
    assert runner.run("long", [ids(12), SCALE]).profile == 1
    # Auto would keep profile 1 for seq 12 (sticky); check says so and changes nothing.
    assert runner.check(Request.auto(), [ids(12), SCALE]).profile == 1
    assert runner.check(Request.auto(), [ids(2), SCALE]).profile == 0
    assert runner.run(Request.auto(), [ids(12), SCALE]).profile == 1
    with pytest.raises(ProfileMismatchError):
        runner.check(Request.auto(), [ids(SEQ_MAX + 1), SCALE])
    assert runner.last_profile == 1


def test_pin_on_a_single_profile_bundle_is_ignored_and_said_once(
    make_bundle: BundleMaker, caplog: pytest.LogCaptureFixture
) -> None:
    runner = Runner.open(make_bundle([("all", 1, 8, SEQ_MAX)], {"run": 0}))
    with caplog.at_level(logging.WARNING, logger="trt_edge_runner"):
        first = runner.run(1, [ids(4), SCALE])
        second = runner.run(3, [ids(5), SCALE])
    assert (first.profile, first.outcome) == (0, Outcome.PIN_IGNORED_SINGLE_PROFILE)
    assert second.outcome is Outcome.PIN_IGNORED_SINGLE_PROFILE
    assert sum("ignoring the pin" in r.getMessage() for r in caplog.records) == 1


def test_malformed_bundle_json_names_the_file_and_place(llm_like_bundle: Path) -> None:
    doc = llm_like_bundle / "bundle.json"
    doc.write_text('{"schema_version": 1,', encoding="utf-8")
    with pytest.raises(BundleFormatMismatchError, match=r"bundle\.json:1:\d+: not valid JSON"):
        Runner.open(llm_like_bundle)
    doc.write_text('{"schema_version": 99}', encoding="utf-8")
    with pytest.raises(BundleFormatMismatchError, match="schema version 1, the bundle has 99"):
        Runner.open(llm_like_bundle)
