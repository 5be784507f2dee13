"""The one error root: every error class the packages define derives from it, with an exit
code from the table, and renders its place the way a user typed or reads it."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import pytest
import trt_edge
import trt_edge_runner
from trt_edge.cli.main import main
from trt_edge.pipeline.errors import ManifestInvalidError
from trt_edge_runner.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    TrtEdgeError,
    UsageError,
    Where,
)


def _error_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for package in (trt_edge, trt_edge_runner):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            for name, obj in vars(module).items():
                if (
                    inspect.isclass(obj)
                    and issubclass(obj, BaseException)
                    and obj.__module__ == module.__name__
                ):
                    found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_error_class_derives_from_the_one_root() -> None:
    classes = _error_classes()
    assert len(classes) > 40  # the walk found the packages' errors
    # Private helpers never reach a user: a SIGTERM unwinding as Ctrl-C, a YAML size probe.
    outside = sorted(n for n, c in classes.items() if not issubclass(c, TrtEdgeError))
    assert all(name.rpartition(".")[2].startswith("_") for name in outside), outside
    codes = {name: c.exit_code for name, c in classes.items() if issubclass(c, TrtEdgeError)}
    assert set(codes.values()) == {EXIT_FAILED, EXIT_BAD_INPUT}


def test_value_and_key_errors_keep_their_builtin_base() -> None:
    from trt_edge.targets import CatalogError, UnknownTargetError
    from trt_edge_runner.bundle_format import BundleFormatError
    from trt_edge_runner.conformance import VectorFormatError

    assert issubclass(UnknownTargetError, KeyError)
    for cls in (CatalogError, BundleFormatError, VectorFormatError):
        assert issubclass(cls, ValueError)
    error = UnknownTargetError("cpu-x86", ("cpu-x86_64", "jetson-orin-nano-jp6"))
    assert str(error) == (
        "unknown target 'cpu-x86' (did you mean 'cpu-x86_64'?); "
        "known targets: cpu-x86_64, jetson-orin-nano-jp6"
    )
    assert error.exit_code == EXIT_BAD_INPUT


@pytest.mark.parametrize(
    ("where", "text"),
    [
        (Where("out/x.png", option="--plot"), "--plot out/x.png"),
        (Where(option="--mirror", value="ftp:x"), "--mirror ftp:x"),
        (
            Where("m.yaml", line=12, col=5, field="profiles[1].dims.seq"),
            "m.yaml:12:5: profiles[1].dims.seq",
        ),
        (Where("bundle.json", input="input_ids"), "bundle.json: input 'input_ids'"),
        (Where(field="runtime.policy"), "runtime.policy"),
    ],
)
def test_where_renders_as_a_user_reads_it(where: Where, text: str) -> None:
    assert str(where) == text
    assert str(UsageError("is wrong", where=where)) == f"{text}: is wrong"


def test_the_json_error_document_is_structured() -> None:
    error = UsageError("no such file", where=Where("a.pte", option="--inputs"), hint="check it")
    assert error.to_dict() == {
        "ok": False,
        "error": "--inputs a.pte: no such file",
        "type": "UsageError",
        "exit_code": EXIT_BAD_INPUT,
        "where": {"file": "a.pte", "option": "--inputs"},
        "hint": "check it",
    }


def test_an_invalid_manifest_stays_structured_for_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`build`'s error carries the diagnostics; under --json `validate`'s report fields too."""
    from trt_edge.pipeline.run import load

    manifest = tmp_path / "manifest.yaml"
    manifest.write_text("apiVersion: trt-edge/v1\nkind: Modle\n")
    with pytest.raises(ManifestInvalidError) as info:
        load(manifest)
    error = info.value
    assert error.exit_code == EXIT_BAD_INPUT and error.errors
    doc = error.to_dict()
    assert doc["file"] == str(manifest) and doc["errors"] == len(error.errors)
    assert {d["line"] for d in doc["diagnostics"]} >= {2}
    assert main(["validate", str(manifest), "--json"]) == EXIT_FAILED
    report = json.loads(capsys.readouterr().out)
    assert [d["message"] for d in report["diagnostics"]] == [
        d["message"] for d in doc["diagnostics"]
    ]
