"""Golden tests: typical manifest mistakes, each with its exact place and message.

Each case edits one spot of a valid base manifest and pins the diagnostic the
user sees: line, column (the token the caret must point at), path and message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from trt_edge.manifest import load_manifest


@dataclass(frozen=True)
class Case:
    id: str
    old: str  # text of the base manifest to replace
    new: str
    line: int  # expected line of the diagnostic
    token: str  # the caret points at the first occurrence of this on that line
    path: str
    message: str  # the full message
    severity: str = "error"
    stage: str | None = None
    other_errors: int = 0  # further, independent errors the same edit causes


CASES = [
    Case(
        "unknown-top-level-key",
        "profiles:\n",
        "profile:\n",
        11,
        "profile",
        "profile",
        "unknown key 'profile' (did you mean 'profiles'?); allowed here: apiVersion, kind, "
        "metadata, model, inputs, profiles, runtime, build, validate",
        stage="schema",
    ),
    Case(
        "unknown-range-key",
        "max: 512}",
        "mxa: 512}",
        15,
        "mxa",
        "profiles[1].dims.seq.mxa",
        "unknown key 'mxa' (did you mean 'max'?); allowed here: min, opt, max",
        stage="schema",
    ),
    Case(
        "missing-version",
        "metadata: {name: tiny-llm, version: 0.1.0}",
        "metadata: {name: tiny-llm}",
        4,
        "metadata",
        "metadata.version",
        "missing required key 'version'",
        stage="schema",
    ),
    Case(
        "wrong-api-version",
        "apiVersion: trt-edge/v1",
        "apiVersion: trt-edge/v2",
        2,
        "trt-edge/v2",
        "apiVersion",
        "expected one of 'trt-edge/v1', got 'trt-edge/v2' (did you mean 'trt-edge/v1'?)",
        stage="schema",
    ),
    Case(
        "policy-typo",
        "policy: pinned",
        "policy: pined",
        17,
        "pined",
        "runtime.policy",
        "expected one of 'pinned', 'auto', got 'pined' (did you mean 'pinned'?)",
        stage="schema",
    ),
    Case(
        "dtype-typo",
        "dtype: float32",
        "dtype: flaot32",
        10,
        "flaot32",
        "inputs[2].dtype",
        "expected one of 'float32', 'float16', 'bfloat16', 'float64', 'int64', 'int32', "
        "'int16', 'int8', 'uint8', 'bool', got 'flaot32' (did you mean 'float32'?)",
        stage="schema",
    ),
    Case(
        "version-is-a-number",
        "version: 0.1.0}",
        "version: 1.0}",
        4,
        "1.0",
        "metadata.version",
        'expected a string, got 1.0 (a number); quote it to keep it text: "1.0"',
        stage="schema",
    ),
    Case(
        "bad-model-name",
        "name: tiny-llm,",
        "name: Tiny_LLM,",
        4,
        "Tiny_LLM",
        "metadata.name",
        "'Tiny_LLM' is not allowed here: use lower-case letters, digits and '-', starting with "
        "a letter or digit (e.g. 'tiny-llm')",
        stage="schema",
    ),
    Case(
        "dim-is-text",
        "dims: {seq: 1}",
        "dims: {seq: one}",
        13,
        "one",
        "profiles[0].dims.seq",
        "expected an integer (min = opt = max) or a mapping {min, opt, max}, got 'one'",
        stage="schema",
    ),
    Case(
        "min-above-max",
        "{min: 2, opt: 128, max: 512}",
        "{min: 600, opt: 128, max: 512}",
        15,
        "512",
        "profiles[1].dims.seq.max",
        "max 512 is below min 600: need min <= opt <= max",
        stage="semantic",
    ),
    Case(
        "opt-above-max",
        "opt: 128",
        "opt: 1024",
        15,
        "1024",
        "profiles[1].dims.seq.opt",
        "opt 1024 is above max 512: need min <= opt <= max",
    ),
    Case(
        "min-zero",
        "dims: {seq: 1}",
        "dims: {seq: {min: 0, opt: 1, max: 1}}",
        13,
        "0",
        "profiles[0].dims.seq.min",
        "min 0 must be >= 1",
    ),
    Case(
        "profile-misses-symbol",
        "dims: {seq: 1}",
        "dims: {}",
        13,
        "dims",
        "profiles[0].dims",
        "profile 'decode' does not give symbol 'seq' (used at inputs[0].shape[1]): every "
        "profile must give every symbol",
    ),
    Case(
        "profile-unknown-symbol",
        "dims: {seq: 1}",
        "dims: {seq: 1, sq: 2}",
        13,
        "sq:",
        "profiles[0].dims.sq",
        "unknown symbol 'sq' (did you mean 'seq'?); symbols used by the inputs: seq",
    ),
    Case(
        "duplicate-profile-name",
        "  - name: prefill\n",
        "  - name: decode\n",
        14,
        "decode",
        "profiles[1].name",
        "profile name 'decode' is already used by profiles[0]; names must be unique (phases "
        "refer to them)",
        other_errors=1,  # the phase `prefill: prefill` no longer resolves
    ),
    Case(
        "duplicate-input-name",
        "{name: start_pos,",
        "{name: input_ids,",
        9,
        "input_ids",
        "inputs[1].name",
        "input name 'input_ids' is already used by inputs[0]; names must be unique",
    ),
    Case(
        "values-on-float-input",
        "shape: [2, 1, 4, 640, 16]}",
        "shape: [2, 1, 4, 640, 16], values: [0, 1]}",
        10,
        "[0, 1]",
        "inputs[2].values",
        "`values` is only for integer inputs; 'k_cache' is float32: remove `values` or use an "
        "integer dtype",
    ),
    Case(
        "empty-values-range",
        "values: [0, 256]",
        "values: [256, 256]",
        8,
        "[256, 256]",
        "inputs[0].values",
        "values [256, 256) is empty: need low < high (high is exclusive)",
    ),
    Case(
        "pinned-without-phases",
        "  phases: {prefill: prefill, decode: decode}\n",
        "",
        17,
        "pinned",
        "runtime.policy",
        "policy pinned needs a phase map, e.g. phases: {prefill: prefill, decode: decode}; or "
        "use policy auto",
    ),
    Case(
        "phase-unknown-profile",
        "{prefill: prefill,",
        "{prefill: prefil,",
        18,
        "prefil,",
        "runtime.phases.prefill",
        "unknown profile 'prefil' (did you mean 'prefill'?); use a profile name (decode, "
        "prefill), an index",
    ),
    Case(
        "phase-negative-index",
        "decode: decode}",
        "decode: -1}",
        18,
        "-1",
        "runtime.phases.decode",
        "negative profile index -1 is not allowed: use 0..1 or a profile name",
    ),
    Case(
        "phase-index-out-of-range",
        "decode: decode}",
        "decode: 2}",
        18,
        "2}",
        "runtime.phases.decode",
        "profile index 2 is out of range: there are 2 profile(s) (0..1)",
    ),
    Case(
        "phase-boolean",
        "decode: decode}",
        "decode: yes}",
        18,
        "yes",
        "runtime.phases.decode",
        "expected a string or an integer, got yes (a boolean)",
        stage="schema",
    ),
    Case(
        "auto-under-pinned",
        "decode: decode}",
        "decode: auto}",
        18,
        "auto",
        "runtime.phases.decode",
        "'auto' is only allowed under policy auto: name a profile here, or set "
        "runtime.policy: auto",
    ),
    Case(
        "unknown-target",
        "targets: [cpu-x86_64]",
        "targets: [jetson-orin-nano]",
        21,
        "jetson-orin-nano",
        "build.targets[0]",
        "unknown target 'jetson-orin-nano' (did you mean 'jetson-orin-nano-jp6'?); known "
        "targets: cpu-x86_64, cpu-aarch64, jetson-orin-nano-jp6, jetson-orin-nx-jp6, "
        "jetson-agx-orin-jp6, jetson-thor-jp7, x86-ampere, x86-ada, x86-hopper, x86-blackwell, "
        "x86-rtx, x86-rtx-turing, x86-rtx-ampere, x86-rtx-ada, x86-rtx-blackwell",
        stage="compatibility",
    ),
    Case(
        "tensorrt-on-cpu-target",
        "backend: auto",
        "backend: tensorrt",
        21,
        "cpu-x86_64",
        "build.targets[0]",
        "backend tensorrt needs a GPU target with TensorRT; cpu-x86_64 has none: use backend "
        "auto (or xnnpack/portable), or a jetson-*/x86-* target",
        stage="compatibility",
    ),
    Case(
        "entrypoint-file-missing",
        "entrypoint: model.py:build_model",
        "entrypoint: modle.py:build_model",
        6,
        "modle.py",
        "model.entrypoint",
        "file 'modle.py' not found (looked for {dir}/modle.py); the entrypoint file is "
        "relative to the manifest",
    ),
    Case(
        "entrypoint-and-exported",
        "  entrypoint: model.py:build_model\n",
        "  entrypoint: model.py:build_model\n  exported: model.py\n",
        7,
        "exported",
        "model.exported",
        "give either `entrypoint` or `exported`, not both: remove one",
    ),
    Case(
        "duplicate-yaml-key",
        "kind: Model\n",
        "kind: Model\nkind: Model\n",
        4,
        "kind",
        "kind",
        "duplicate key 'kind' (first at line 3); YAML keeps only one of them: remove or rename one",
        stage="parse",
    ),
    Case(
        "tab-indentation",
        "  policy: pinned\n",
        "\tpolicy: pinned\n",
        17,
        "\t",
        "",
        "not valid YAML: a tab character; YAML indentation must use spaces, not tabs",
        stage="parse",
    ),
    Case(
        "symbols-without-profiles",
        "profiles:\n  - name: decode\n    dims: {seq: 1}\n  - name: prefill\n"
        "    dims: {seq: {min: 2, opt: 128, max: 512}}\n",
        "profiles: []\n",
        11,
        "profiles",
        "profiles",
        "inputs use symbol(s) seq but no profile gives their ranges: add `profiles:` with at "
        "least one entry, e.g. - {name: default, dims: {seq: {min: 1, opt: 8, max: 64}}}",
    ),
    Case(
        "targets-not-a-list",
        "targets: [cpu-x86_64]",
        "targets: cpu-x86_64",
        21,
        "cpu-x86_64",
        "build.targets",
        "expected a list, got 'cpu-x86_64'; write a list, e.g. [cpu-x86_64]",
        stage="schema",
    ),
    Case(
        "phase-name-is-a-number",
        "{prefill: prefill,",
        "{1: prefill,",
        18,
        "1:",
        "runtime.phases[1]",
        'keys here must be text, got 1 (a number); quote it: "1"',
        stage="schema",
    ),
    Case(
        "shape-not-a-list-does-not-cascade",
        "shape: [1, seq], values",
        "shape: seq, values",
        8,
        "seq",
        "inputs[0].shape",
        "expected a list, got 'seq'; write a list, e.g. [seq]",
        stage="schema",
    ),
    Case(
        "unused-profile-under-pinned",
        "{prefill: prefill, decode: decode}",
        "{prefill: prefill}",
        12,
        "name",
        "profiles[0]",
        "profile 'decode' (#0) is not used by any phase: under policy pinned it ships but is "
        "never selected",
        severity="warning",
    ),
]


def test_base_manifest_is_valid_without_diagnostics(
    base_text: str, write_manifest: Callable[..., Path]
) -> None:
    result = load_manifest(write_manifest(base_text))
    assert result.ok, [str(d) for d in result.diagnostics]
    assert result.diagnostics == []


def test_there_are_at_least_twenty_golden_mistakes() -> None:
    assert len(CASES) >= 20
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_mistake_is_reported_at_its_place(
    case: Case, base_text: str, write_manifest: Callable[..., Path]
) -> None:
    assert base_text.count(case.old) == 1, "the edit must be unambiguous"
    text = base_text.replace(case.old, case.new)
    path = write_manifest(text)
    result = load_manifest(path)
    wanted = [d for d in result.diagnostics if d.severity == case.severity and d.path == case.path]
    assert len(wanted) == 1, [str(d) for d in result.diagnostics]
    others = [d for d in result.errors if d is not wanted[0]]
    assert len(others) == case.other_errors, [str(d) for d in others]
    d = wanted[0]
    source_line = text.splitlines()[case.line - 1]
    assert d.message == case.message.replace("{dir}", str(path.parent.resolve()))
    assert d.path == case.path
    assert (d.line, d.col) == (case.line, source_line.index(case.token) + 1)
    where = case.path or "<document>"
    assert str(d) == f"{path}:{d.line}:{d.col}: {case.severity}: {where}: {d.message}"
    if case.stage is not None:
        assert d.stage == case.stage
    assert result.ok is (case.severity == "warning")
