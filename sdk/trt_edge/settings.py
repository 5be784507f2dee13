"""The host's settings: every `TRT_EDGE_*` variable a user may set for `trt-edge`, read in one
place, each value recording where it came from (docs/environment.md lists them).

One precedence for all: a command-line flag (the caller passes it), then the environment
variable, then the default. A value that does not parse is a `BadSettingError` naming the
variable, what it holds and what it should hold — never a traceback from deep inside a build.
`trt-edge-device` keeps its own settings (`trt_edge_runner.agent.config`): the device side
never imports the host's.

Light at import (the standard library only): `trt-edge --help` reads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError

T = TypeVar("T")

CACHE = "TRT_EDGE_CACHE"
WHEELHOUSE = "TRT_EDGE_WHEELHOUSE"
IMAGES_DIR = "TRT_EDGE_IMAGES_DIR"
EXTRA_CA_DIR = "TRT_EDGE_EXTRA_CA_DIR"
BUILD_MODE = "TRT_EDGE_BUILD_MODE"
CONTAINER_MEMORY = "TRT_EDGE_CONTAINER_MEMORY"
CONTAINER_CPUS = "TRT_EDGE_CONTAINER_CPUS"
CONTAINER_PIDS = "TRT_EDGE_CONTAINER_PIDS"
CONTAINER_TIMEOUT = "TRT_EDGE_CONTAINER_TIMEOUT"

DEFAULT_CA_DIR = Path("/usr/local/share/ca-certificates")


class BadSettingError(TrtEdgeError):
    exit_code = EXIT_BAD_INPUT


@dataclass(frozen=True)
class Setting(Generic[T]):
    """A value and where it came from: `--flag`, `$TRT_EDGE_…` or `default`."""

    value: T
    source: str


def _user_cache(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg else Path.home() / ".cache"


def _positive(kind: Callable[[str], T]) -> Callable[[str], T]:
    def parse(raw: str) -> T:
        value = kind(raw)
        if not value > 0:  # type: ignore[operator]
            raise ValueError(raw)
        return value

    return parse


@dataclass(frozen=True)
class HostSettings:
    """What `trt-edge` reads from its environment (`resolve()` makes one)."""

    cache_dir: Setting[Path]  # the stage cache of `trt-edge build`
    wheelhouse: Setting[Path]  # the locked wheels images install offline
    images_dir: Setting[Path]  # the image definitions (`images/`)
    extra_ca_dir: Setting[Path]  # extra CA certificates put into images
    build_mode: Setting[str | None]  # `local` | `container` | None (decide)
    container_memory: Setting[str]
    container_cpus: Setting[float]
    container_pids: Setting[int]
    container_timeout_s: Setting[float]

    def sources(self) -> dict[str, str]:
        """Every setting's value and origin, as `trt-edge build -v` logs them."""
        return {
            name: f"{getattr(self, name).value} ({getattr(self, name).source})"
            for name in self.__dataclass_fields__
        }


def resolve(env: Mapping[str, str] | None = None) -> HostSettings:
    """The settings from `env` (default: this process's environment)."""
    env = os.environ if env is None else env
    cache = _user_cache(env)

    def read(name: str, default: T, parse: Callable[[str], T], expected: str) -> Setting[T]:
        raw = env.get(name)
        if not raw:
            return Setting(default, "default")
        try:
            return Setting(parse(raw), f"${name}")
        except ValueError:
            raise BadSettingError(
                f"${name}={raw!r}: not {expected}",
                hint=f"set {name} to {expected}, or unset it for the default ({default})",
            ) from None

    def path(raw: str) -> Path:
        return Path(raw).expanduser()

    def mode(raw: str) -> str | None:
        if raw not in ("local", "container"):
            raise ValueError(raw)
        return raw

    return HostSettings(
        cache_dir=read(CACHE, cache / "trt-edge", path, "a directory"),
        wheelhouse=read(WHEELHOUSE, cache / "trt-edge-wheelhouse", path, "a directory"),
        images_dir=read(IMAGES_DIR, _checkout_images(), path, "a directory"),
        extra_ca_dir=read(EXTRA_CA_DIR, DEFAULT_CA_DIR, path, "a directory"),
        build_mode=read(BUILD_MODE, None, mode, "`local` or `container`"),
        container_memory=read(CONTAINER_MEMORY, "6g", str, "a Docker memory size (6g)"),
        container_cpus=read(
            CONTAINER_CPUS, float(os.cpu_count() or 1), _positive(float), "a positive number"
        ),
        container_pids=read(CONTAINER_PIDS, 4096, _positive(int), "a positive integer"),
        container_timeout_s=read(
            CONTAINER_TIMEOUT, 3600.0, _positive(float), "a positive number of seconds"
        ),
    )


def _checkout_images() -> Path:
    """The `images/` folder of the checkout this package lives in."""
    return Path(__file__).resolve().parents[2] / "images"
