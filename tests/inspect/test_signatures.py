"""check_profile_signatures: one guard index must mean the same regime in every TRT delegate."""

from __future__ import annotations

import json
from typing import Any

import pytest
from trt_edge.inspect.signatures import (
    MalformedProfileSignature,
    ProfileSignatureMismatch,
    check_profile_signatures,
    profile_signature,
    validate_signature,
)
from trt_edge_runner.bundle_format import DelegateInfo, DimRange, Profile, TensorSpec

IDS = TensorSpec(name="input_ids", dtype="int64", shape=(1, "seq"))
DECODE = Profile(name="decode", dims={"seq": DimRange(1, 1, 1)})
PREFILL = Profile(name="prefill", dims={"seq": DimRange(32, 512, 2048)})


def trt(index: int, signature: dict[str, Any] | None, method: str = "forward") -> DelegateInfo:
    return DelegateInfo(
        backend_id="TensorRTBackend",
        method=method,
        index=index,
        blob_size=1000,
        profile_signature=signature,
    )


def sig(*ranges: tuple[int, int]) -> dict[str, Any]:
    """A one-input signature whose profile i accepts seq in ranges[i]."""
    return profile_signature(
        [
            Profile(name=f"p{i}", dims={"seq": DimRange(lo, lo, hi)})
            for i, (lo, hi) in enumerate(ranges)
        ],
        [IDS],
    )


def test_profile_signature_shape_is_the_documented_one() -> None:
    doc = profile_signature([DECODE, PREFILL], [IDS])
    assert doc == {
        "count": 2,
        "profiles": [
            {"inputs": [{"name": "input_ids", "min": [1, 1], "max": [1, 1], "opt": [1, 1]}]},
            {"inputs": [{"name": "input_ids", "min": [1, 32], "max": [1, 2048], "opt": [1, 512]}]},
        ],
    }
    # JSON-serialisable as bundle.json stores it, and valid.
    assert json.loads(json.dumps(doc)) == doc
    validate_signature(trt(0, doc))


def test_identical_multi_profile_delegates_pass() -> None:
    s = sig((1, 1), (32, 2048))
    check_profile_signatures([trt(0, s), trt(1, json.loads(json.dumps(s)))])


def test_single_profile_delegate_beside_multi_profile_passes() -> None:
    check_profile_signatures([trt(0, sig((1, 1), (32, 2048))), trt(1, sig((1, 4096)))])


def test_non_tensorrt_delegates_are_ignored() -> None:
    xnn = DelegateInfo("XnnpackBackend", "forward", 2, 10, None)
    check_profile_signatures([trt(0, sig((1, 1), (2, 8))), xnn, trt(1, sig((1, 1), (2, 8)))])


def test_count_mismatch_names_each_delegate_count_and_first_index() -> None:
    with pytest.raises(ProfileSignatureMismatch) as err:
        check_profile_signatures(
            [trt(0, sig((1, 1), (2, 8))), trt(3, sig((1, 1), (2, 8), (9, 64)))]
        )
    text = str(err.value)
    assert "delegate 0 (TensorRTBackend)" in text and "delegate 3 (TensorRTBackend)" in text
    assert "has 3 profiles" in text and "has 2" in text
    assert "first differing index: 2" in text
    assert "method 'forward'" in text


def test_range_mismatch_reports_first_differing_index_and_ranges() -> None:
    with pytest.raises(ProfileSignatureMismatch) as err:
        check_profile_signatures([trt(0, sig((1, 1), (2, 8))), trt(1, sig((1, 1), (2, 16)))])
    text = str(err.value)
    assert "differ first at index 1" in text
    assert "max [1, 8]" in text and "max [1, 16]" in text
    assert "2 profiles" in text


def test_same_ranges_in_swapped_order_is_a_mismatch_at_index_0() -> None:
    with pytest.raises(ProfileSignatureMismatch, match="index 0"):
        check_profile_signatures([trt(0, sig((1, 1), (2, 8))), trt(1, sig((2, 8), (1, 1)))])


def test_opt_is_not_part_of_the_identity() -> None:
    a = sig((1, 1), (2, 8))
    b = json.loads(json.dumps(a))
    b["profiles"][1]["inputs"][0]["opt"] = [1, 3]
    check_profile_signatures([trt(0, a), trt(1, b)])


def test_methods_are_checked_separately_and_all_problems_reported() -> None:
    two = sig((1, 1), (2, 8))
    three = sig((1, 1), (2, 8), (9, 64))
    # Different methods may use different profile lists.
    check_profile_signatures([trt(0, two, "prefill"), trt(0, three, "decode")])
    with pytest.raises(ProfileSignatureMismatch) as err:
        check_profile_signatures(
            [
                trt(0, two, "prefill"),
                trt(1, three, "prefill"),
                trt(0, two, "decode"),
                trt(1, sig((1, 1), (2, 9)), "decode"),
            ]
        )
    assert "method 'prefill'" in str(err.value) and "method 'decode'" in str(err.value)


def test_input_names_compared_when_both_present() -> None:
    a = sig((1, 1), (2, 8))
    b = json.loads(json.dumps(a))
    for p in b["profiles"]:
        p["inputs"][0]["name"] = "tokens"
    with pytest.raises(ProfileSignatureMismatch, match="'tokens'"):
        check_profile_signatures([trt(0, a), trt(1, b)])
    for p in b["profiles"]:
        del p["inputs"][0]["name"]
    check_profile_signatures([trt(0, a), trt(1, b)])


@pytest.mark.parametrize(
    ("signature", "fragment"),
    [
        ([], "must be an object"),
        ({"count": 0, "profiles": []}, "'count' must be an integer >= 1"),
        ({"count": True, "profiles": [{}]}, "'count'"),
        ({"count": 2, "profiles": [{"inputs": []}]}, "exactly count=2"),
        ({"count": 1, "profiles": ["x"]}, "'inputs' list"),
        ({"count": 1, "profiles": [{"inputs": [{"min": [1], "max": "2"}]}]}, "list of integers"),
        ({"count": 1, "profiles": [{"inputs": [{"min": [1], "max": [1, 2]}]}]}, "rank"),
        ({"count": 1, "profiles": [{"inputs": [{"min": [3], "max": [2]}]}]}, "above max"),
        ({"count": 1, "profiles": [{"inputs": [{"name": 3, "min": [], "max": []}]}]}, "name"),
    ],
)
def test_malformed_signatures_name_the_delegate(signature: Any, fragment: str) -> None:
    with pytest.raises(MalformedProfileSignature) as err:
        check_profile_signatures([trt(7, signature)])
    assert fragment in str(err.value)
    assert "delegate 7 (TensorRTBackend) of method 'forward'" in str(err.value)
