"""Configuring the C++ runner without OpenSSL fails unless size-only checks are asked for."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import CPP_SRC

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed"),
]


def configure(build: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            "cmake",
            "-S",
            str(CPP_SRC),
            "-B",
            str(build),
            f"-DPython3_EXECUTABLE={sys.executable}",
            # Hide an installed OpenSSL, as on a device image without libssl-dev.
            "-DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON",
            *options,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_without_openssl_configure_fails_and_says_what_to_do(tmp_path: Path) -> None:
    done = configure(tmp_path / "no-ssl")
    assert done.returncode != 0
    assert "OpenSSL (libcrypto) not found" in done.stderr
    assert "-DTRT_EDGE_ALLOW_SIZE_ONLY_CHECK=ON" in done.stderr


def test_size_only_build_must_be_asked_for_and_warns(tmp_path: Path) -> None:
    done = configure(tmp_path / "size-only", "-DTRT_EDGE_ALLOW_SIZE_ONLY_CHECK=ON")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "checked by size only" in done.stderr
