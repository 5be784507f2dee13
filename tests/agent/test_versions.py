"""The version order anti-rollback uses: SemVer 2.0 precedence over MAJOR.MINOR.PATCH[-PRE][+BUILD],
and a clear refusal of anything else."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from trt_edge_runner.versions import VersionError, parse_version

# Ascending, as the SemVer 2.0 specification lists its example (plus a few of ours).
ASCENDING = [
    "0.9.9",
    "1.0.0-0",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.2.0",
    "1.10.0",
    "2.0.0",
]


def test_semver_precedence() -> None:
    parsed = [parse_version(v) for v in ASCENDING]
    assert parsed == sorted(parsed)
    assert all(a < b for a, b in itertools.pairwise(parsed))


def test_build_metadata_does_not_order() -> None:
    assert parse_version("1.2.0+jetson") == parse_version("1.2.0+x86")
    assert parse_version("1.2.0+a") == parse_version("1.2.0")


@pytest.mark.parametrize(
    "text",
    [
        "1",
        "1.0",
        "1.0.0.0",
        "01.0.0",
        "1.00.0",
        "v1.0.0",
        "1.0.0-",
        "1.0.0-01",
        "1.0.0+",
        "",
        " 1.0.0",
    ],
)
def test_versions_a_device_cannot_order_are_refused(text: str) -> None:
    with pytest.raises(VersionError, match="is not a version a device can order") as caught:
        parse_version(text, "tiny version")
    assert caught.value.exit_code == 1
    assert "MAJOR.MINOR.PATCH" in str(caught.value)


triples = st.tuples(*[st.integers(min_value=0, max_value=10**6)] * 3)


@given(triples, triples)
def test_release_order_is_the_order_of_the_numbers(
    a: tuple[int, int, int], b: tuple[int, int, int]
) -> None:
    va, vb = parse_version(".".join(map(str, a))), parse_version(".".join(map(str, b)))
    assert (va < vb) == (a < b) and (va == vb) == (a == b)
