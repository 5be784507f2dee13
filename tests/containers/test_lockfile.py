"""Lock files: parsing, error messages with file:line, hash identity, and the checked-in locks."""

from __future__ import annotations

from pathlib import Path

import pytest
from trt_edge.containers import catalog
from trt_edge.containers.errors import LockFileError
from trt_edge.containers.lockfile import (
    dist_name_version,
    lock_sha256,
    normalize_name,
    parse_lock,
    parse_requirements_in,
    render_lock,
    wheel_name_version,
)

H1 = "a" * 64
H2 = "b" * 64


def write(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "img"
    folder.mkdir(exist_ok=True)
    path = folder / "lock.txt"
    path.write_text(text)
    return path


def test_parses_pins_with_continuations_and_comments(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f"# header\n\ntorch==2.13.0+cpu \\\n    --hash=sha256:{H1} \\\n    --hash=sha256:{H2}\n"
        f"Jinja2==3.1.6 --hash=sha256:{H1}  # trailing comment\n",
    )
    lock = parse_lock(path)
    assert [(e.name, e.version, e.line) for e in lock.entries] == [
        ("torch", "2.13.0+cpu", 3),
        ("Jinja2", "3.1.6", 6),
    ]
    assert lock.entries[0].hashes == (H1, H2)
    assert lock.by_key()["jinja2"].version == "3.1.6"


def test_lock_hash_ignores_comments_order_and_name_spelling(tmp_path: Path) -> None:
    a = parse_lock(
        write(tmp_path, f"Jinja2==3.1.6 --hash=sha256:{H1}\nnumpy==2.4.6 --hash=sha256:{H2}\n")
    )
    b_path = tmp_path / "other.txt"
    b_path.write_text(
        f"# x\nnumpy==2.4.6 \\\n  --hash=sha256:{H2}\njinja2==3.1.6 --hash=sha256:{H1}\n"
    )
    b = parse_lock(b_path)
    assert a.sha256() == b.sha256()
    c_path = tmp_path / "changed.txt"
    c_path.write_text(f"Jinja2==3.1.6 --hash=sha256:{H1}\nnumpy==2.4.6 --hash=sha256:{H1}\n")
    assert parse_lock(c_path).sha256() != a.sha256()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("torch==2.13.0\n", ":1: torch==2.13.0 has no --hash"),
        ("torch>=2.13 --hash=sha256:" + H1 + "\n", ":1: expected 'name==version"),
        ("torch==2.13.0 --hash=md5:abc\n", "unsupported option '--hash=md5:abc'"),
        (
            f"# c\nnumpy==1 --hash=sha256:{H1}\nNumPy==1 --hash=sha256:{H1}\n",
            ":3: NumPy is pinned twice (first on line 2)",
        ),
        ("# only comments\n", "lock file has no pins"),
    ],
)
def test_rejects_malformed_locks_naming_file_and_line(
    tmp_path: Path, text: str, needle: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(LockFileError) as info:
        parse_lock(path)
    assert str(path) in str(info.value)
    assert needle in str(info.value)
    assert info.value.exit_code == 2


def test_render_then_parse_round_trips(tmp_path: Path) -> None:
    first = parse_lock(
        write(
            tmp_path, f"a-b==1.0 --hash=sha256:{H1} --hash=sha256:{H2}\nc==2 --hash=sha256:{H2}\n"
        )
    )
    path = tmp_path / "img" / "again.txt"
    path.write_text(render_lock("img", "requirements.in", first.entries))
    again = parse_lock(path)
    assert again.sha256() == first.sha256() == lock_sha256(first.entries)


def test_wheel_file_names() -> None:
    assert wheel_name_version("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl") == (
        "torch",
        "2.13.0+cpu",
    )
    assert normalize_name("ruamel_yaml") == normalize_name("ruamel.yaml") == "ruamel-yaml"
    with pytest.raises(LockFileError):
        wheel_name_version("antlr4-python3-runtime-4.9.3.tar.gz")


def test_sdist_file_names() -> None:
    """The few packages an image locks as source (`pip.sdists`) are named by their sdist."""
    assert dist_name_version("tensorrt_rtx_cu13-1.7.1.116.tar.gz") == (
        "tensorrt_rtx_cu13",
        "1.7.1.116",
    )
    assert dist_name_version("mdurl-0.1.2-py3-none-any.whl") == ("mdurl", "0.1.2")
    with pytest.raises(LockFileError, match=r"not a 'name-version\.tar\.gz'"):
        dist_name_version("noversion.tar.gz")


def test_the_x86_rtx_builder_carries_the_cpu_builder_exactly() -> None:
    """x86-rtx is the cpu builder's stack plus TensorRT for RTX and the ONNX exporter: every
    pin of the cpu lock, at the same version and bytes, so a .pte either builds is the same."""
    cpu = parse_lock(catalog.load_spec("cpu").lock_file).by_key()
    rtx = parse_lock(catalog.load_spec("x86-rtx").lock_file).by_key()
    differ = sorted(
        key
        for key, pin in cpu.items()
        if key not in rtx or (rtx[key].version, rtx[key].hashes) != (pin.version, pin.hashes)
    )
    assert not differ, f"images/x86-rtx/requirements.in is out of step with images/cpu: {differ}"
    added = set(rtx) - set(cpu)
    assert {"tensorrt-rtx", "tensorrt-rtx-cu13-libs", "onnx", "onnxscript"} <= added


@pytest.mark.parametrize("name", catalog.image_names())
def test_checked_in_lock_matches_its_requirements_in(name: str) -> None:
    """Every image's lock parses, hashes every pin, and pins exactly what requirements.in asks."""
    spec = catalog.load_spec(name)
    lock = parse_lock(spec.lock_file)
    wanted = {normalize_name(n): v for n, v in parse_requirements_in(spec.requirements_in)}
    locked = {e.key: e.version for e in lock.entries}
    assert set(locked) == set(wanted), (
        f"{spec.lock_file} is stale: run `trt-edge images lock {name}`"
    )
    for key, version in wanted.items():
        assert locked[key].split("+", 1)[0] == version.split("+", 1)[0], key
    assert all(len(h) == 64 for e in lock.entries for h in e.hashes)
