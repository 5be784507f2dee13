"""The resolved manifest carries the parse step's positions: later errors point into the YAML."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from trt_edge.manifest import load_manifest_or_raise

Writer = Callable[..., Path]


def test_where_names_the_line_and_column_of_a_value(base_text: str, write_manifest: Writer) -> None:
    path = write_manifest(base_text)
    manifest = load_manifest_or_raise(path)
    source = path.resolve()
    assert manifest.where("model", "entrypoint") == f"{source}:6:15"
    assert manifest.where("inputs", 2, "dtype") == f"{source}:10:28"
    assert manifest.where("build", "backend") == f"{source}:20:12"


def test_where_falls_back_to_the_nearest_value_that_was_written(
    base_text: str, write_manifest: Writer
) -> None:
    source = write_manifest(base_text).resolve()
    manifest = load_manifest_or_raise(source)
    # `build.precision` is not in the file (the schema's default): point at `build:`'s value.
    assert manifest.where("build", "precision") == manifest.where("build") == f"{source}:20:3"
    assert manifest.where() == f"{source}:2:1"


def test_locations_are_read_only_and_not_part_of_what_a_manifest_means(
    base_text: str, write_manifest: Writer
) -> None:
    a = load_manifest_or_raise(write_manifest(base_text, "a.yaml"))
    b = load_manifest_or_raise(write_manifest("\n\n" + base_text, "b.yaml"))
    assert dataclasses.replace(b, source_path=a.source_path, source_sha256=a.source_sha256) == a
    assert a.where("build") != b.where("build")
    with pytest.raises(TypeError):
        a.locations.values[("build",)] = a.locations.values[()]  # type: ignore[index]
