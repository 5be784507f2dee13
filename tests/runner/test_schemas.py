"""The documents that cross a boundary have schemas (issue 20, point 2).

- the checked-in `*.schema.json` files are what `schemas/source.py` generates (drift test);
- every bundle.json vector (tests/vectors/bundle_documents.json) gets its verdict from the
  Python reader, refused ones naming the vector's field;
- our standard-library validator agrees with the reference implementation (`jsonschema`) on
  every vector, and uses no keyword it does not implement.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from trt_edge_runner.bundle_format import BundleFormatError, BundleManifest
from trt_edge_runner.schemas import DocumentError, schema_file, validate
from trt_edge_runner.schemas.__main__ import rendered
from trt_edge_runner.schemas.source import SCHEMAS
from trt_edge_runner.schemas.validator import unsupported

from tests.helpers.bundles import BundleMaker
from tests.helpers.paths import VECTORS as VECTOR_DIR

VECTORS = json.loads((VECTOR_DIR / "bundle_documents.json").read_text(encoding="utf-8"))["cases"]


def test_schema_files_are_what_the_source_generates() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "trt_edge_runner.schemas", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for name in SCHEMAS:
        assert json.loads(schema_file(name).read_text(encoding="utf-8")) == SCHEMAS[name]


def test_drift_is_reported_naming_the_file(tmp_path: Path) -> None:
    """`--check` compares bytes: an edited copy of a file is one the check names."""
    name = "bundle"
    edited = json.loads(rendered(name))
    edited["properties"]["schema_version"] = {"type": "string"}
    assert (json.dumps(edited, indent=2, sort_keys=True) + "\n").encode() != rendered(name)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_schema_is_valid_draft_07_and_within_our_validator(name: str) -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMAS[name])
    assert unsupported(SCHEMAS[name]) == []


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
def test_python_reader_reaches_each_vectors_verdict(case: dict[str, Any]) -> None:
    if case["valid"]:
        BundleManifest.from_dict(case["document"])
        return
    with pytest.raises(BundleFormatError) as refused:
        BundleManifest.from_dict(case["document"])
    assert f"bundle.json: {case['field']}: " in str(refused.value)


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
def test_our_validator_agrees_with_jsonschema(case: dict[str, Any]) -> None:
    schema_refuses = not case["valid"] and case["refused_by"] == "schema"
    reference = list(jsonschema.Draft7Validator(SCHEMAS["bundle"]).iter_errors(case["document"]))
    assert bool(reference) == schema_refuses, [e.message for e in reference]
    if schema_refuses:
        with pytest.raises(DocumentError) as refused:
            validate("bundle", case["document"], "bundle.json")
        assert refused.value.field == case["field"]
    else:
        validate("bundle", case["document"], "bundle.json")


def test_a_bad_runner_document_is_refused_naming_the_field() -> None:
    doc: dict[str, Any] = {
        "interface": 1,
        "ok": True,
        "runner": {
            "name": "trt-edge-run",
            "version": "0.1.0",
            "arch": "x86_64",
            "executorch": "1.5.1",
            "native_profile_guard": False,
            "verifies_digests": True,
            "backends": ["XnnpackBackend"],
        },
    }
    assert validate("runner-version", doc, "trt-edge-run --version") == doc
    doc["runner"]["backends"] = "XnnpackBackend"
    with pytest.raises(DocumentError, match=r"trt-edge-run --version: runner\.backends: "):
        validate("runner-version", doc, "trt-edge-run --version")


def test_the_real_runners_documents_match_their_schemas(
    trt_edge_run: Path, make_bundle: BundleMaker
) -> None:
    """Each request kind of the real C++ runner, including a pin ignored on a single-profile
    bundle and a refusal: every document it prints matches its schema."""
    single = make_bundle([("only", 1, 8, 64)], {"only": 0})
    multi = make_bundle()
    runs = {
        "runner-version": ["--version"],
        "runner-load": ["--bundle", str(multi), "--load"],
        "runner-run": ["--bundle", str(single), "--profile", "1"],
        "runner-phases": ["--bundle", str(multi), "--phases", "all", "--runs", "1"],
        "runner-error": ["--bundle", str(multi), "--phase", "nope"],
    }
    for name, args in runs.items():
        done = subprocess.run(
            [str(trt_edge_run), *args, "--json"], capture_output=True, text=True, check=False
        )
        doc = json.loads(done.stdout)
        assert validate(name, doc, f"trt-edge-run {' '.join(args)}") == doc
    run = json.loads(
        subprocess.run(
            [str(trt_edge_run), *runs["runner-run"], "--json"], capture_output=True, text=True
        ).stdout
    )
    assert run["outcome"] == "pin_ignored_single_profile"
