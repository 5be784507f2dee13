"""Cross-delegate profile signatures: does profile index i mean the same thing everywhere?

One guard index (`OptimizationProfileGuard(i)`, a phase pin, or the index `auto`
picked) applies to every TensorRT delegate of a method. That is only sound when index
i selects the same shape regime in each delegate, so the build records a *profile
signature* per TensorRT delegate (`DelegateInfo.profile_signature` in bundle.json) and
calls `check_profile_signatures` before writing the bundle.

Signature shape (JSON, as stored in bundle.json)::

    {
      "count": 2,                      # number of optimization profiles, >= 1
      "profiles": [                    # exactly `count` entries, in index order
        {"inputs": [                   # one entry per delegate input, in input order
            {"name": "input_ids",      # optional; compared only when both sides have it
             "min": [1, 1], "max": [1, 1],
             "opt": [1, 1]}            # optional; tuning hint, not part of the identity
        ]},
        {"inputs": [{"name": "input_ids", "min": [1, 32], "max": [1, 2048]}]}
      ]
    }

Rules (docs/design.md "Profile semantics"; upstream RFC §5.3 and its review):

* delegates without a signature (XNNPACK, CUDA, …) ignore profile requests: skipped;
* a delegate with `count == 1` is allowed beside multi-profile ones — a single-profile
  engine ignores pins > 0 ("pin ignored"), it cannot misinterpret them;
* two multi-profile delegates of the same method must have the same count and, at
  every index, the same per-input min/max; otherwise `ProfileSignatureMismatch`
  names each delegate, its count and the first differing index.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from trt_edge_runner.bundle_format import DelegateInfo, Profile, TensorSpec

from trt_edge.inspect.errors import MalformedProfileSignature, ProfileSignatureMismatch

__all__ = [
    "MalformedProfileSignature",
    "ProfileSignatureMismatch",
    "check_profile_signatures",
    "profile_signature",
    "validate_signature",
]


@dataclass(frozen=True)
class _Range:
    name: str | None
    min: tuple[int, ...]
    max: tuple[int, ...]

    def same_regime(self, other: _Range) -> bool:
        if self.name is not None and other.name is not None and self.name != other.name:
            return False
        return self.min == other.min and self.max == other.max

    def describe(self) -> str:
        label = f"{self.name!r} " if self.name is not None else ""
        return f"{label}min {list(self.min)} max {list(self.max)}"


@dataclass(frozen=True)
class _Signature:
    count: int
    profiles: tuple[tuple[_Range, ...], ...]


def profile_signature(profiles: Sequence[Profile], inputs: Sequence[TensorSpec]) -> dict[str, Any]:
    """The signature of an engine built from `profiles` over `inputs` (bundle.json types).

    What the build records for each TensorRT delegate it lowers with the manifest's
    profile list; `opt` is included for people, the comparison ignores it.
    """
    specs = tuple(inputs)
    doc_profiles = []
    for profile in profiles:
        opt = profile.opt_symbols()
        rows = []
        for spec, (lo, hi) in zip(specs, profile.bounds(specs), strict=True):
            rows.append(
                {
                    "name": spec.name,
                    "min": list(lo),
                    "max": list(hi),
                    "opt": list(spec.dims_for(opt)),
                }
            )
        doc_profiles.append({"inputs": rows})
    return {"count": len(doc_profiles), "profiles": doc_profiles}


def _label(d: DelegateInfo) -> str:
    return f"delegate {d.index} ({d.backend_id}) of method {d.method!r}"


def _int_list(value: Any, where: str, who: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise MalformedProfileSignature(
            f"{who}: profile signature {where} must be a list of integers, got {value!r}"
        )
    return tuple(value)


def _parse(d: DelegateInfo) -> _Signature:
    who = _label(d)
    sig = d.profile_signature
    if not isinstance(sig, dict):
        raise MalformedProfileSignature(f"{who}: profile signature must be an object, got {sig!r}")
    count = sig.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise MalformedProfileSignature(
            f"{who}: profile signature 'count' must be an integer >= 1, got {count!r}"
        )
    raw = sig.get("profiles")
    if not isinstance(raw, list) or len(raw) != count:
        got = f"{len(raw)} entries" if isinstance(raw, list) else repr(raw)
        raise MalformedProfileSignature(
            f"{who}: profile signature 'profiles' must list exactly count={count} profiles, "
            f"got {got}"
        )
    rows: list[tuple[_Range, ...]] = []
    for i, entry in enumerate(raw):
        inputs = entry.get("inputs") if isinstance(entry, dict) else None
        if not isinstance(inputs, list):
            raise MalformedProfileSignature(
                f"{who}: profile signature profiles[{i}] must be an object with an 'inputs' list"
            )
        ranges = []
        for k, item in enumerate(inputs):
            where = f"profiles[{i}].inputs[{k}]"
            if not isinstance(item, dict):
                raise MalformedProfileSignature(f"{who}: {where} must be an object")
            name = item.get("name")
            if name is not None and not isinstance(name, str):
                raise MalformedProfileSignature(f"{who}: {where}.name must be a string")
            lo = _int_list(item.get("min"), f"{where}.min", who)
            hi = _int_list(item.get("max"), f"{where}.max", who)
            if len(lo) != len(hi):
                raise MalformedProfileSignature(
                    f"{who}: {where} has min of rank {len(lo)} but max of rank {len(hi)}"
                )
            if any(a > b for a, b in zip(lo, hi, strict=True)):
                raise MalformedProfileSignature(
                    f"{who}: {where} has min {list(lo)} above max {list(hi)}"
                )
            ranges.append(_Range(name=name, min=lo, max=hi))
        rows.append(tuple(ranges))
    return _Signature(count=count, profiles=tuple(rows))


def validate_signature(delegate: DelegateInfo) -> None:
    """Raise `MalformedProfileSignature` unless the signature has the documented shape."""
    if delegate.profile_signature is not None:
        _parse(delegate)


def _first_difference(a: _Signature, b: _Signature) -> tuple[int, str] | None:
    """(index, what differs) for the first index whose regime differs; None when equal."""
    for i, (ra, rb) in enumerate(zip(a.profiles, b.profiles, strict=True)):
        if len(ra) != len(rb):
            return i, f"{len(ra)} inputs vs {len(rb)} inputs"
        for k, (x, y) in enumerate(zip(ra, rb, strict=True)):
            if not x.same_regime(y):
                return i, f"input {k}: {x.describe()} vs {y.describe()}"
    return None


def check_profile_signatures(delegates: Iterable[DelegateInfo]) -> None:
    """Fail when two multi-profile TensorRT delegates of one method disagree.

    Delegates are grouped by method; in each method the first multi-profile delegate is
    the reference and every other multi-profile delegate must match it in count and in
    every index's per-input ranges. All problems of all methods are reported at once.
    Raises `MalformedProfileSignature` for a signature that is not of the documented
    shape and `ProfileSignatureMismatch` for a disagreement.
    """
    by_method: dict[str, list[tuple[DelegateInfo, _Signature]]] = {}
    for d in delegates:
        if d.profile_signature is None:
            continue
        by_method.setdefault(d.method, []).append((d, _parse(d)))

    problems: list[str] = []
    for method, entries in by_method.items():
        multi = [(d, s) for d, s in entries if s.count > 1]
        if len(multi) < 2:
            continue
        ref_d, ref_s = multi[0]
        lines = []
        for d, s in multi[1:]:
            if s.count != ref_s.count:
                lines.append(
                    f"  {_label(d)} has {s.count} profiles, {_label(ref_d)} has {ref_s.count}; "
                    f"first differing index: {min(s.count, ref_s.count)}"
                )
                continue
            diff = _first_difference(ref_s, s)
            if diff is not None:
                index, what = diff
                lines.append(
                    f"  {_label(d)} ({s.count} profiles) and {_label(ref_d)} "
                    f"({ref_s.count} profiles) differ first at index {index}: {what}"
                )
        if lines:
            problems.append(
                f"method {method!r}: its multi-profile TensorRT delegates disagree on what a "
                "profile index means (one guard index applies to all of them):\n" + "\n".join(lines)
            )
    if problems:
        raise ProfileSignatureMismatch(
            "\n".join(problems)
            + "\nGive every TensorRT partition of a method the same ordered profile list "
            "(the manifest's `profiles`), or keep the extra partitions single-profile."
        )
