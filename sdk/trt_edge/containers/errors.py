"""Typed errors of images and container builds, under the one root (`trt_edge_runner.errors`).

Every error carries a message written for the user (what failed, where, and the
command that fixes it) and its exit code (1 the daemon or a build failed, 2 bad
input), so `trt-edge images` and `trt-edge build --container` never show a docker
stack trace.
"""

from __future__ import annotations

from pathlib import Path

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError


class ContainerError(TrtEdgeError):
    """Base of every containers-area error: `str(err)` is the user message."""


class DockerUnavailableError(ContainerError):
    """No engine answers on the configured socket (not installed, not started)."""


class DockerPermissionError(ContainerError):
    """The engine exists but this user may not use its socket."""


class ImageMissingError(ContainerError):
    """The image a command needs is not present locally (and cannot be pulled)."""


class ImageBuildError(ContainerError):
    """`docker build` of one of our images failed; the message quotes the failing step."""


class LockFileError(ContainerError):
    """A lock file is malformed or does not match its wheelhouse; exit code 2 (bad input)."""

    exit_code = EXIT_BAD_INPUT


class WheelhouseError(ContainerError):
    """The host could not prepare the wheelhouse (pip download failed, hash mismatch)."""


class BaseImageError(ContainerError):
    """The Debian base could not be made (debootstrap missing, not root, mirror unreachable)."""


class DockerfileError(ContainerError):
    """An image's Dockerfile names a fragment, placeholder or file that does not exist."""


class RunnerTarballError(ContainerError):
    """The device runner tarball a device image carries could not be built or read."""


class RunnerTarballInvalidError(RunnerTarballError):
    """A runner tarball that is not what `make device-<arch>` writes for this checkout.

    It carries the tarball and why apart from the message, so `trt-edge flash`
    words the same refusal for its own option (`--runner-tarball PATH: why`).
    """

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"{path}: {why}",
            hint="build it with `make device-<arch>` "
            "(dist/trt-edge-runner-<version>-linux-<arch>.tar.gz)",
        )
        self.path = path
        self.why = why


class UnknownImageError(ContainerError):
    """An image name that has no folder under images/; exit code 2 (bad input)."""

    exit_code = EXIT_BAD_INPUT


class ContainerBuildError(ContainerError):
    """The build pipeline failed inside the container; carries the container's own error."""


class ContainerTimeoutError(ContainerBuildError):
    """The containerized build ran longer than its timeout and was killed."""


class ContainerResourceError(ContainerBuildError):
    """The container was killed by the engine (out of memory, or another signal)."""


class ImageReferenceError(ContainerError):
    """An image reference or tag that the engine's grammar rejects; exit code 2 (bad input)."""

    exit_code = EXIT_BAD_INPUT
