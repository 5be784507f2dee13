"""manifests/schema.json: generated from the models, in sync, and usable by editors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from trt_edge.manifest.compiled import compiled_text
from trt_edge.manifest.schema import main, schema_text

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "manifests" / "schema.json"
CORE = REPO / "sdk" / "trt_edge" / "manifest" / "manifest.core.json"
EXAMPLES = sorted(REPO.glob("examples/*/manifest.yaml")) + sorted(
    REPO.glob("manifests/examples/*.yaml")
)


def test_checked_in_schema_matches_the_models() -> None:
    assert SCHEMA.read_text("utf-8") == schema_text(), (
        "manifests/schema.json is stale: run `python -m trt_edge.manifest.schema`"
    )


def test_checked_in_compiled_validator_matches_the_models() -> None:
    assert CORE.read_text("utf-8") == compiled_text(), (
        "sdk/trt_edge/manifest/manifest.core.json is stale: run "
        "`python -m trt_edge.manifest.schema`"
    )


def test_check_mode_fails_on_drift(tmp_path: Path) -> None:
    stale, core = tmp_path / "schema.json", tmp_path / "core.json"
    stale.write_text("{}\n")
    core.write_text(CORE.read_text("utf-8"))
    args = ["--out", str(stale), "--core-out", str(core)]
    assert main(["--check", *args]) == 1
    assert main(args) == 0
    assert main(["--check", *args]) == 0
    core.write_text("{}\n")
    assert main(["--check", *args]) == 1


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name + "/" + p.name for p in EXAMPLES])
def test_example_manifests_satisfy_the_json_schema(path: Path) -> None:
    schema = json.loads(SCHEMA.read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(yaml.safe_load(path.read_text("utf-8")))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name + "/" + p.name for p in EXAMPLES])
def test_example_schema_line_resolves_relative_to_the_manifest(path: Path) -> None:
    first = path.read_text("utf-8").splitlines()[0]
    match = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
    assert match, f"{path} must start with the yaml-language-server $schema line"
    assert (path.parent / match.group(1)).resolve() == SCHEMA.resolve()


def test_json_schema_rejects_what_the_loader_rejects() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text("utf-8")))
    doc = yaml.safe_load((REPO / "examples/tiny_llm/manifest.yaml").read_text("utf-8"))
    doc["profiles"][1]["dims"]["seq"]["mxa"] = 3
    doc["runtime"]["policy"] = "pined"
    paths = sorted(tuple(map(str, e.absolute_path)) for e in validator.iter_errors(doc))
    assert paths == [("profiles", "1", "dims", "seq"), ("runtime",)]
