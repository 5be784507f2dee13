"""The host wheelhouse: locks resolve to real wheels whose bytes match, and `images lock`."""

from __future__ import annotations

import json
import platform
import shutil
from pathlib import Path

import pytest
from trt_edge.containers import catalog
from trt_edge.containers.errors import WheelhouseError
from trt_edge.containers.lockfile import file_sha256, parse_lock
from trt_edge.containers.wheelhouse import generate_lock, prepare, wheelhouse_dir

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "name", [n for n in catalog.image_names() if catalog.load_spec(n).buildable_here]
)
def test_buildable_locks_resolve_to_wheels_with_matching_bytes(name: str) -> None:
    spec = catalog.load_spec(name)
    lock = parse_lock(spec.lock_file)
    wheels = prepare(lock, spec.pip)
    assert len(wheels) == len(lock.entries)
    for entry, wheel in zip(lock.entries, wheels, strict=True):
        assert wheel.parent == wheelhouse_dir()
        assert file_sha256(wheel) in entry.hashes, wheel.name


def make_image(root: Path, requirements: str, sdists: tuple[str, ...] = ()) -> catalog.ImageSpec:
    folder = root / "tiny"
    folder.mkdir(parents=True)
    pip = {"platforms": [], **({"sdists": list(sdists)} if sdists else {})}
    (folder / "image.json").write_text(
        json.dumps({"description": "t", "role": "runtime", "default_base": "x", "pip": pip})
    )
    (folder / "requirements.in").write_text(requirements)
    return catalog.load_spec("tiny", root)


def test_images_lock_pins_the_downloaded_bytes(tmp_path: Path) -> None:
    spec = make_image(tmp_path / "images", "# a pure wheel\nmdurl==0.1.2\n")
    lock = generate_lock(spec, folder=tmp_path / "wheels")
    [entry] = lock.entries
    assert (entry.name, entry.version) == ("mdurl", "0.1.2")
    [wheel] = (tmp_path / "wheels").glob("mdurl-0.1.2-*.whl")
    assert entry.hashes == (file_sha256(wheel),)
    assert "trt-edge images lock tiny" in spec.lock_file.read_text()


def test_a_wheel_whose_bytes_differ_from_the_lock_is_refused(tmp_path: Path) -> None:
    spec = make_image(tmp_path / "images", "mdurl==0.1.2\n")
    lock = generate_lock(spec, folder=tmp_path / "wheels")
    tampered = spec.lock_file.read_text().replace(lock.entries[0].hashes[0], "0" * 64)
    spec.lock_file.write_text(tampered)
    folder = tmp_path / "other-wheels"
    folder.mkdir()
    for wheel in (tmp_path / "wheels").glob("*.whl"):
        shutil.copy(wheel, folder)
    with pytest.raises(WheelhouseError) as info:
        prepare(parse_lock(spec.lock_file), spec.pip, folder=folder)
    assert "pip download failed" in str(info.value)
    assert "HASHES" in str(info.value).upper()


def test_the_lock_names_the_wheel_pip_picks_not_another_in_the_wheelhouse(tmp_path: Path) -> None:
    """The wheelhouse is shared by every image: another wheel of the same release that also
    fits (as cryptography's cp39-abi3 and cp311-abi3 both fit Python 3.12) must not be what
    the lock pins, or `pip download --require-hashes` of the lock fails."""
    spec = make_image(tmp_path / "images", "mdurl==0.1.2\n")
    folder = tmp_path / "wheels"
    folder.mkdir()
    other = folder / f"mdurl-0.1.2-py3-none-manylinux_2_17_{platform.machine()}.whl"
    other.write_bytes(b"another build of the release")
    [entry] = generate_lock(spec, folder=folder).entries
    picked = folder / "mdurl-0.1.2-py3-none-any.whl"
    assert entry.hashes == (file_sha256(picked),)
    assert not [p for p in folder.iterdir() if p.name.startswith(".lock-")]  # no leftovers


def test_only_the_packages_an_image_names_are_taken_as_sdists() -> None:
    pip = catalog.PipPlatform("3.11", (), None, ("tensorrt-rtx", "tensorrt-rtx-cu13"))
    assert pip.download_args() == [
        "--only-binary=:all:",
        "--no-binary",
        "tensorrt-rtx,tensorrt-rtx-cu13",
    ]
    assert catalog.PipPlatform("3.11", (), None).download_args() == ["--only-binary=:all:"]


def test_images_lock_pins_an_sdist_the_image_names_and_refuses_one_it_does_not(
    tmp_path: Path,
) -> None:
    """`tensorrt-rtx` (a 17 KB metapackage) exists only as an sdist: an image that lists it
    in pip.sdists locks the .tar.gz pip fetched, and the wheelhouse finds it by that hash;
    any other image's lock asks for wheels only, and pip finds none."""
    spec = make_image(tmp_path / "images", "tensorrt-rtx==1.7.1.116\n", ("tensorrt-rtx",))
    lock = generate_lock(spec, folder=tmp_path / "wheels")
    [entry] = lock.entries
    [sdist] = (tmp_path / "wheels").glob("tensorrt_rtx-1.7.1.116.tar.gz")
    assert (entry.version, entry.hashes) == ("1.7.1.116", (file_sha256(sdist),))
    assert prepare(lock, spec.pip, folder=tmp_path / "wheels") == [sdist]
    wheels_only = make_image(tmp_path / "other", "tensorrt-rtx==1.7.1.116\n")
    with pytest.raises(WheelhouseError, match="pip download failed"):
        generate_lock(wheels_only, folder=tmp_path / "wheels")
