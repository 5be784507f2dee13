"""load_manifest / load_manifest_or_raise: resolution of valid manifests and typed failures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.manifest import (
    ManifestCompatibilityError,
    ManifestError,
    ManifestIOError,
    ManifestParseError,
    ManifestSchemaError,
    ManifestSemanticError,
    load_manifest,
    load_manifest_or_raise,
)
from trt_edge_runner.bundle_format import DimRange

REPO = Path(__file__).resolve().parents[2]

Writer = Callable[..., Path]
Edit = Callable[..., Path]  # the edited_manifest fixture


def test_tiny_llm_example_resolves_to_indices_and_ranges() -> None:
    m = load_manifest_or_raise(REPO / "examples" / "tiny_llm" / "manifest.yaml")
    assert (m.name, m.version) == ("tiny-llm", "0.1.0")
    assert [p.name for p in m.profiles] == ["decode", "prefill"]
    assert m.profiles[0].dims["seq"] == DimRange(1, 1, 1)
    assert m.profiles[1].dims["seq"] == DimRange(2, 128, 512)
    assert m.runtime.policy == "pinned"
    assert m.runtime.phases == {"prefill": 1, "decode": 0}
    assert m.inputs[0].shape == (1, "seq") and m.inputs[0].values == (0, 256)
    assert m.symbols() == ("seq",)
    assert m.export_domain() == {"seq": (1, 512)}
    assert m.targets == ("cpu-x86_64", "cpu-aarch64", "x86-rtx")  # the examples build for both CPUs
    assert m.source_path.is_absolute() and len(m.source_sha256) == 64
    assert m.entrypoint == "model.py:build_model" and m.exported is None


def test_every_example_manifest_is_valid() -> None:
    # An example whose model folder a script writes (examples/gemma3/write_model.py) is
    # valid once that ran: tests/llm/test_readme_commands.py runs it, then validates.
    paths = sorted(
        p
        for p in (REPO / "examples").glob("*/manifest.yaml")
        if not (p.parent / "write_model.py").is_file()
    )
    paths += sorted((REPO / "manifests" / "examples").glob("*.yaml"))
    assert paths
    for path in paths:
        result = load_manifest(path)
        assert result.ok, [str(d) for d in result.diagnostics]


def test_auto_policy_keeps_auto_phases_and_compiles_names(edited_manifest: Edit) -> None:
    m = load_manifest_or_raise(
        edited_manifest(
            ("policy: pinned", "policy: auto"),
            ("{prefill: prefill, decode: decode}", "{prefill: 1, decode: auto, chat: decode}"),
        )
    )
    assert m.runtime.policy == "auto"
    assert m.runtime.phases == {"prefill": 1, "decode": "auto", "chat": 0}


def test_missing_runtime_defaults_to_auto_without_phases(edited_manifest: Edit) -> None:
    runtime = "runtime:\n  policy: pinned\n  phases: {prefill: prefill, decode: decode}\n"
    m = load_manifest_or_raise(edited_manifest((runtime, "")))
    assert (m.runtime.policy, m.runtime.phases) == ("auto", {})


def test_static_model_without_profiles_gets_one_static_profile(write_manifest: Writer) -> None:
    text = (
        "apiVersion: trt-edge/v1\nkind: Model\nmetadata: {name: mlp, version: '1'}\n"
        "model: {entrypoint: model.py:build_model}\n"
        "inputs:\n  - {name: x, dtype: float32, shape: [4, 8]}\n"
    )
    result = load_manifest(write_manifest(text))
    assert result.ok and result.diagnostics == []
    assert result.manifest is not None
    assert [(p.name, p.dims) for p in result.manifest.profiles] == [("static", {})]
    assert result.manifest.backend == "auto" and result.manifest.targets == ("cpu-x86_64",)


def test_exported_program_path_resolves_relative_to_the_manifest(edited_manifest: Edit) -> None:
    path = edited_manifest(("entrypoint: model.py:build_model", "exported: m.pt2"))
    (path.parent / "m.pt2").write_bytes(b"placeholder: only existence is checked")
    m = load_manifest_or_raise(path)
    assert m.entrypoint is None and m.exported == (path.parent / "m.pt2").resolve()


def test_module_entrypoint_is_accepted_without_importing(edited_manifest: Edit) -> None:
    path = edited_manifest(("model.py:build_model", "no_such_pkg.models:build"))
    m = load_manifest_or_raise(path)
    assert m.entrypoint == "no_such_pkg.models:build"


@pytest.mark.parametrize(
    ("edit", "error_type"),
    [
        (("kind: Model", "kind: [Model"), ManifestParseError),
        (("kind: Model", "kind: Modle"), ManifestSchemaError),
        (("opt: 128", "opt: 1024"), ManifestSemanticError),
        (("[cpu-x86_64]", "[cpu-risc5]"), ManifestCompatibilityError),
    ],
)
def test_load_or_raise_raises_the_type_of_the_first_failing_step(
    edit: tuple[str, str], error_type: type[ManifestError], edited_manifest: Edit
) -> None:
    path = edited_manifest(edit)
    with pytest.raises(error_type) as info:
        load_manifest_or_raise(path)
    error = info.value
    assert str(error).startswith(f"{path}:")  # one line: where, and how many errors
    assert error.hint is not None and "trt-edge validate" in error.hint
    assert error.errors and all(d.file == str(path) for d in error.errors)  # still structured


def test_all_problems_are_reported_in_one_pass(edited_manifest: Edit) -> None:
    path = edited_manifest(
        ("kind: Model", "kind: Modle"),
        ("opt: 128", "opt: 1024"),
        ("[cpu-x86_64]", "[cpu-risc5]"),
        ("decode: decode}", "decode: -3}"),
    )
    result = load_manifest(path)
    assert {d.stage for d in result.errors} == {"schema", "semantic", "compatibility"}
    assert [d.line for d in result.errors] == sorted(d.line for d in result.errors)
    assert len(result.errors) == 4 and result.manifest is None


def test_missing_file_is_an_io_error(tmp_path: Path) -> None:
    result = load_manifest(tmp_path / "absent.yaml")
    assert not result.ok and [d.stage for d in result.errors] == ["io"]
    with pytest.raises(ManifestIOError):
        load_manifest_or_raise(tmp_path / "absent.yaml")


def test_directory_points_at_its_manifest(tmp_path: Path, base_text: str) -> None:
    (tmp_path / "manifest.yaml").write_text(base_text)
    result = load_manifest(tmp_path)
    assert "did you mean its manifest.yaml?" in result.errors[0].message


def test_non_utf8_bytes_are_located(write_manifest: Writer, base_text: str) -> None:
    path = write_manifest(base_text)
    path.write_bytes(base_text.encode().replace(b"tiny-llm", b"tiny-\xffllm"))
    result = load_manifest(path)
    d = result.errors[0]
    assert (d.line, d.col, d.stage) == (4, 23, "io")
    assert "not UTF-8" in d.message


def test_empty_file_and_multiple_documents_are_parse_errors(write_manifest: Writer) -> None:
    empty = load_manifest(write_manifest("# nothing here\n"))
    assert empty.errors[0].message.startswith("the manifest is empty")
    two = load_manifest(write_manifest("a: 1\n---\nb: 2\n", name="two.yaml"))
    assert two.errors[0].stage == "parse" and two.errors[0].line == 2


def test_alias_bomb_is_refused_quickly(write_manifest: Writer) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    result = load_manifest(write_manifest("\n".join(lines) + "\n"))
    assert "expands to more than" in result.errors[0].message


def test_schema_comment_pointing_nowhere_is_a_warning(
    base_text: str, write_manifest: Writer
) -> None:
    text = "# yaml-language-server: $schema=../nowhere/schema.json\n" + base_text
    result = load_manifest(write_manifest(text))
    assert result.ok
    [warning] = result.warnings
    assert (warning.line, warning.col, warning.path) == (1, 33, "$schema")


def test_schema_comment_with_a_nul_byte_is_a_warning_not_a_crash(
    base_text: str, write_manifest: Writer
) -> None:
    # Path.resolve() raises ValueError on a NUL byte; hypothesis found it in the fuzz test.
    text = "# yaml-language-server: $schema=../sch\x00ema.json\n" + base_text
    result = load_manifest(write_manifest(text))
    assert [d.message for d in result.errors] == [
        "not valid YAML: unacceptable character #x0000: control characters are not allowed"
    ]
    assert any(w.path == "$schema" and "not found" in w.message for w in result.warnings)


def test_overlap_under_auto_explains_sticky_first_fit(edited_manifest: Edit) -> None:
    path = edited_manifest(
        ("dims: {seq: 1}", "dims: {seq: {min: 1, opt: 4, max: 8}}"),
        ("policy: pinned", "policy: auto"),
    )
    result = load_manifest(path)
    assert result.ok
    [warning] = result.warnings
    assert warning.path == "profiles[1]" and warning.line == 14
    assert warning.message == (
        "profiles 'decode' (#0) and 'prefill' (#1) overlap at seq 2..8; under auto, sticky "
        "first-fit keeps whichever of them is active while a shape there fits it, and otherwise "
        "picks 'decode' (#0), the first that fits"
    )


def test_profile_inside_an_earlier_one_is_unreachable_under_auto(edited_manifest: Edit) -> None:
    path = edited_manifest(
        ("dims: {seq: 1}", "dims: {seq: {min: 1, opt: 4, max: 600}}"),
        ("policy: pinned\n  phases: {prefill: prefill, decode: decode}", "policy: auto"),
    )
    result = load_manifest(path)
    [warning] = result.warnings
    assert "never selects 'prefill' (#1)" in warning.message


def test_gap_inside_the_export_domain_is_a_warning(edited_manifest: Edit) -> None:
    result = load_manifest(edited_manifest(("min: 2, opt: 128", "min: 16, opt: 128")))
    assert result.ok
    [warning] = result.warnings
    assert (warning.path, warning.line, warning.col) == ("profiles", 11, 1)
    assert "no profile accepts: seq 2..15;" in warning.message


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("max: 512}", "max: 99999999999999999999999}", "profiles[1].dims.seq.max"),
        ("{min: 2,", "{min: 2147483648,", "profiles[1].dims.seq.min"),
        ("opt: 128", "opt: 3000000000", "profiles[1].dims.seq.opt"),
        ("dims: {seq: 1}", "dims: {seq: 4294967296}", "profiles[0].dims.seq"),
        ("shape: [1], values", "shape: [2147483648], values", "inputs[1].shape[0]"),
    ],
)
def test_extents_above_int32_are_refused_where_written(
    base_text: str, write_manifest: Writer, old: str, new: str, where: str
) -> None:
    assert old in base_text
    result = load_manifest(write_manifest(base_text.replace(old, new)))
    assert not result.ok
    # One int32 error, at the value (min/opt may also break min <= opt <= max: separate).
    bound = [d for d in result.diagnostics if "int32" in d.message]
    assert [d.path for d in bound] == [where], [str(d) for d in result.diagnostics]
    assert "TensorRT dimensions are int32, so at most 2147483647" in bound[0].message
    assert not any(
        "expected a string" in d.message or "mapping" in d.message for d in result.diagnostics
    )
    line = next(i for i, t in enumerate(base_text.replace(old, new).splitlines(), 1) if new in t)
    assert bound[0].line == line


def test_largest_int32_extent_is_accepted(edited_manifest: Edit) -> None:
    m = load_manifest_or_raise(edited_manifest(("max: 512}", "max: 2147483647}")))
    assert m.profiles[1].dims["seq"] == DimRange(2, 128, 2**31 - 1)


def test_values_must_lie_within_int64(base_text: str, write_manifest: Writer) -> None:
    ok = base_text.replace("values: [0, 640]", f"values: [{-(2**63)}, {2**63}]")
    assert load_manifest_or_raise(write_manifest(ok)).inputs[1].values == (-(2**63), 2**63)
    too_big = base_text.replace("values: [0, 640]", "values: [0, 99999999999999999999999]")
    result = load_manifest(write_manifest(too_big))
    messages = {d.path: d.message for d in result.diagnostics if d.severity == "error"}
    assert "is outside int64" in messages["inputs[1].values[1]"]
