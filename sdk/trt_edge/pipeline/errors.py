"""Typed build errors, under the one root (`trt_edge_runner.errors.TrtEdgeError`).

Exit codes follow the CLI contract: 2 for bad input (the manifest or the model
source is wrong, or a backend was asked for that cannot run here), 1 for a job
that failed (export, lowering, validation, writing the bundle). The CLI shell
prints the message and its hint and exits with `error.exit_code`; no traceback
reaches the user.
"""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError

from trt_edge.manifest.diagnostics import ManifestError


class BuildError(TrtEdgeError):
    """Base of every error the build reports to a user."""


class BadInputError(BuildError):
    """The manifest or the model it names is wrong: the user must change something."""

    exit_code = EXIT_BAD_INPUT


class ManifestInvalidError(BadInputError, ManifestError):
    """The manifest failed `trt-edge validate`; carries every diagnostic (file:line:col).

    Both a build error (exit 2) and a `ManifestError`: the shell renders its
    diagnostics exactly as `trt-edge validate` prints them.
    """


class ModelSourceError(BadInputError):
    """The entrypoint or `.pt2` cannot be loaded or does not match the manifest's inputs."""


class BackendUnavailableError(BadInputError):
    """The requested backend cannot run in this environment (e.g. TensorRT without a GPU)."""


class OutputDirError(BadInputError):
    """`--out` is not a directory and cannot be created as one (checked before any work)."""


class ExportError(BuildError):
    """torch.export could not capture the model over the manifest's export domain."""


class LoweringError(BuildError):
    """The backend failed to turn the exported program into a `.pte`."""


class ValidationFailedError(BuildError):
    """The `.pte` ran but disagreed with eager PyTorch or accepted a shape it must reject."""

    def __init__(self, message: str, *, report_path: str | None = None) -> None:
        super().__init__(message)
        self.report_path = report_path


class BundleWriteError(BuildError):
    """The bundle directory could not be written; the previous bundle is left as it was."""
