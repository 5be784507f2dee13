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


# ---- the environment that ran a stage: part of its key and of provenance ----------------
PROBE = "trt_edge_probe"  # a tiny distribution written at test time, in two versions
PROBE_REQUIREMENT = "trt-edge-probe>=1"


def _write_probe_wheel(folder: Path, version: str, scale: float) -> Path:
    """A real (pure, py3-none-any) wheel of `trt-edge-probe` whose module says SCALE."""
    import base64
    import hashlib
    import zipfile

    info = f"{PROBE}-{version}.dist-info"
    files = {
        f"{PROBE}/__init__.py": f"SCALE = {scale!r}\n".encode(),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: trt-edge-probe\nVersion: {version}\n"
        ).encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: trt-edge tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    record = [
        f"{name},sha256="
        + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")
        + f",{len(data)}"
        for name, data in files.items()
    ]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    wheel = folder / f"{PROBE}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


def _install_probe(root: Path, version: str, scale: float) -> Path:
    """`pip install --target` of the probe wheel into its own folder (never the venv)."""
    import subprocess
    import sys

    root.mkdir(parents=True, exist_ok=True)
    wheel = _write_probe_wheel(root, version, scale)
    target = root / f"site-{version}"
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
    subprocess.run([*command, "--target", str(target), str(wheel)], check=True, capture_output=True)
    return target


@pytest.mark.slow
def test_a_new_installed_version_of_a_declared_requirement_reruns_the_export(
    write_project: Any, linear_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model imports its requirement; v2 scales differently, so a reused v1 export
    would ship the wrong program. Going back to v1 finds v1's entries again."""
    import hashlib
    import json
    import sys

    from trt_edge.pipeline.run import BuildOptions, build

    sites = {"1.0": _install_probe(tmp_path / "probe", "1.0", 1.0)}
    sites["2.0"] = _install_probe(tmp_path / "probe", "2.0", 3.0)
    model = linear_model(
        f"return self.linear(x) * {PROBE}.SCALE",
        imports=f"import {PROBE}",
        build="torch.manual_seed(0)",
    )
    manifest = write_project(model, backend="portable")
    text = manifest.read_text()
    manifest.write_text(
        text.replace(
            "  entrypoint: model.py:build\n",
            f'  entrypoint: model.py:build\n  requirements: ["{PROBE_REQUIREMENT}"]\n',
        )
    )

    def build_with(version: str) -> tuple[Any, dict[str, Any]]:
        monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in map(str, sites.values())])
        monkeypatch.syspath_prepend(str(sites[version]))  # also invalidates import caches
        monkeypatch.delitem(sys.modules, PROBE, raising=False)
        result = build(
            manifest,
            BuildOptions(out_dir=tmp_path / version / "out", cache_dir=tmp_path / "cache"),
        )
        return result, json.loads((result.bundle_dir / "bundle.json").read_bytes())["provenance"]

    def pte(result: Any) -> str:
        return hashlib.sha256((result.bundle_dir / "model.pte").read_bytes()).hexdigest()

    first, first_doc = build_with("1.0")
    second, second_doc = build_with("2.0")
    again, again_doc = build_with("1.0")
    assert first_doc["requirements"] == {PROBE_REQUIREMENT: "1.0"}
    assert second_doc["requirements"] == {PROBE_REQUIREMENT: "2.0"}
    # v2 is another environment: the export reran (and gave another program) ...
    assert not second.cached["export"] and not second.cached["lower"]
    assert pte(second) != pte(first)
    assert second_doc["environment"]["id"] != first_doc["environment"]["id"]
    assert second_doc["stages"]["export"] == {
        "cached": False,
        "computed_in": second_doc["environment"]["id"],
    }
    # ... and back on v1, v1's own entries are found again.
    assert again.cached["lower"] and again.cached["validate"] and pte(again) == pte(first)
    assert again_doc["environment"] == first_doc["environment"]
    assert again_doc["stages"]["lower"] == {
        "cached": True,
        "computed_in": first_doc["environment"]["id"],
    }


def test_origin_is_read_back_from_the_entry_and_never_guessed(tmp_path: Path) -> None:
    from trt_edge.pipeline.cache import origin_entry, read_origin

    cache = StageCache(tmp_path)
    cache.put("export", "f" * 64, {"program.pt2": b"x", **origin_entry("env-a")})
    hit = cache.get("export", "f" * 64)
    assert hit is not None and read_origin(hit) == "env-a"
    assert read_origin({"program.pt2": b"x"}) is None  # no origin: not claimed
    assert read_origin({"origin.json": b"{not json"}) is None


def test_local_environment_names_the_prefix_and_the_distribution_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys
    from pathlib import Path as P

    from trt_edge.pipeline.environment import (
        ENVIRONMENT_ENV,
        current_environment,
        distributions_sha256,
        installed_distributions,
    )

    monkeypatch.delenv(ENVIRONMENT_ENV, raising=False)
    env = current_environment()
    assert env.kind == "local"
    assert env.doc["prefix"] == str(P(sys.prefix).resolve())
    assert env.doc["distributions_sha256"] == distributions_sha256()
    dists = installed_distributions()
    assert dists["pytest"] == pytest.__version__
    assert distributions_sha256({**dists, "pytest": "0.0"}) != env.doc["distributions_sha256"]
    assert env.provenance()["id"] == env.id == current_environment().id


def test_container_environment_comes_from_the_host_and_bad_ones_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from trt_edge.pipeline.environment import (
        ENVIRONMENT_ENV,
        container_description,
        current_environment,
    )
    from trt_edge.pipeline.errors import BadInputError

    monkeypatch.setenv(ENVIRONMENT_ENV, container_description("sha256:d", "sha256:b", "l", None))
    env = current_environment()
    assert (env.kind, env.doc["image_id"], env.doc["builder_image_id"]) == (
        "container",
        "sha256:d",
        "sha256:b",
    )
    assert env.doc["requirements_lock_sha256"] is None
    monkeypatch.setenv(ENVIRONMENT_ENV, container_description("sha256:e", "sha256:b", "l", None))
    assert current_environment().id != env.id  # another image, another environment
    for bad in (
        "{not json",
        '{"image_id": "x"}',
        '{"image_id": 1, "builder_image_id": "b", '
        '"builder_lock_sha256": null, "requirements_lock_sha256": null}',
    ):
        monkeypatch.setenv(ENVIRONMENT_ENV, bad)
        with pytest.raises(BadInputError) as info:
            current_environment()
        assert ENVIRONMENT_ENV in str(info.value)
