"""The stage cache: hits return what was stored; a corrupted entry is detected and dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from trt_edge.pipeline.cache import StageCache, cache_key, default_cache_dir


def test_key_is_independent_of_argument_order() -> None:
    assert cache_key(a=1, b=[1, 2]) == cache_key(b=[1, 2], a=1)
    assert cache_key(a=1) != cache_key(a=2)


def test_put_then_get_returns_the_same_files(tmp_path: Path) -> None:
    cache = StageCache(tmp_path)
    cache.put("lower", "k" * 64, {"model.pte": b"\x00pte", "outputs.json": b"[]"})
    assert cache.get("lower", "k" * 64) == {"model.pte": b"\x00pte", "outputs.json": b"[]"}
    assert cache.get("lower", "j" * 64) is None


def test_disabled_cache_never_reads_but_still_writes(tmp_path: Path) -> None:
    StageCache(tmp_path, enabled=False).put("s", "a" * 64, {"f": b"1"})
    assert StageCache(tmp_path, enabled=False).get("s", "a" * 64) is None
    assert StageCache(tmp_path).get("s", "a" * 64) == {"f": b"1"}


def test_corrupted_entry_is_reported_removed_and_never_used(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    cache = StageCache(tmp_path, on_event=lambda name, fields: events.append((name, fields)))
    key = "c" * 64
    cache.put("lower", key, {"model.pte": b"good bytes"})
    (cache.entry_dir("lower", key) / "model.pte").write_bytes(b"evil bytes")
    assert cache.get("lower", key) is None
    assert events[-1][0] == "cache_corrupted"
    assert events[-1][1]["files"] == ["model.pte"]
    assert not cache.entry_dir("lower", key).exists()


def test_entry_without_digest_is_treated_as_corrupt(tmp_path: Path) -> None:
    cache = StageCache(tmp_path)
    key = "d" * 64
    cache.put("export", key, {"program.pt2": b"x"})
    (cache.entry_dir("export", key) / "digest.json").write_text("{not json")
    assert cache.get("export", key) is None


def test_unwritable_cache_only_costs_time(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache root should be")
    events: list[str] = []
    cache = StageCache(blocker / "cache", on_event=lambda name, fields: events.append(name))
    cache.put("lower", "e" * 64, {"model.pte": b"x"})  # must not raise
    assert events == ["cache_write_failed"]
    assert cache.get("lower", "e" * 64) is None


def test_default_cache_dir_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRT_EDGE_CACHE", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("TRT_EDGE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "trt-edge"
