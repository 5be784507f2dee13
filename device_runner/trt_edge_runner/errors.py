"""The one error root of trt-edge, and the typed errors of the device runner.

Every failure a user can cause or meet is a `TrtEdgeError`: it carries the
message (what happened), `where` (file, line/col, option, manifest field, input
name), a `hint` (what to do) and its process exit code. Commands raise; the one
command-line shell (`trt_edge_runner.cli_shell`) renders `PROG CMD: error: …`
and exits with `error.exit_code`. Each area (build, containers, inspect,
manifest, signing, fleet, flash, agent, runner) derives its own base from the
root, so tests and callers still tell failures apart by type.

Exit codes (docs/runner-interface.md): 0 ok; 1 the job ran and found
problems or failed; 2 bad input or usage; 130 interrupted. A class sets its
default; an instance may override it only where one class really spans both
(e.g. a container build that passes on the inner build's own code).

Standard library only, Python 3.10: this module ships to devices, and the host
package `trt_edge` imports it (never the reverse). No dataclasses: the shell
imports this on every start-up.
"""

from __future__ import annotations

from typing import Any, TextIO

EXIT_OK = 0
EXIT_FAILED = 1  # the job ran and found problems, or failed
EXIT_BAD_INPUT = 2  # bad input or usage: nothing was done
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it


class Where:
    """Where a problem is: a file (line/col in it) or a value, the option that named it, a
    field inside the file, an input.

    Rendered the way a user typed or reads it: `--plot out/x.png`, `--mirror ftp:x`,
    `manifest.yaml:12:5: profiles[1].dims.seq`, `bundle.json: input 'input_ids'`.
    """

    __slots__ = ("col", "field", "file", "input", "line", "option", "value")

    def __init__(
        self,
        file: object = None,
        *,
        line: int | None = None,
        col: int | None = None,
        option: str | None = None,
        value: str | None = None,
        field: str | None = None,
        input: str | None = None,
    ) -> None:
        self.file = None if file is None else str(file)
        self.line = line
        self.col = col
        self.option = option
        self.value = value
        self.field = field
        self.input = input

    def __str__(self) -> str:
        place = self.file or ""
        if place and self.line is not None:
            place += f":{self.line}" + (f":{self.col}" if self.col is not None else "")
        head = " ".join(part for part in (self.option, place or self.value) if part)
        tail = [part for part in (self.field, self.input and f"input {self.input!r}") if part]
        return ": ".join([head, *tail] if head else tail)

    def __repr__(self) -> str:
        return f"Where({self.to_dict()!r})"

    def to_dict(self) -> dict[str, Any]:
        """The fields that are set, for JSON error documents."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        return {name: value for name, value in fields.items() if value is not None}


class TrtEdgeError(Exception):
    """Base of every error trt-edge reports to a user; `str(error)` is `where: message`."""

    exit_code: int = EXIT_FAILED

    def __init__(
        self,
        message: str,
        *,
        where: Where | None = None,
        hint: str | None = None,
        exit_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        place = str(self.where) if self.where is not None else ""
        return f"{place}: {self.message}" if place else self.message

    def print_details(self, stream: TextIO, *, color: bool) -> None:
        """Lines printed under the error line (e.g. manifest diagnostics, a caret); none here."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON error document a `--json` command prints on stdout when it fails."""
        doc: dict[str, Any] = {
            "ok": False,
            "error": str(self),
            "type": type(self).__name__,
            "exit_code": self.exit_code,
        }
        if self.where is not None:
            doc["where"] = self.where.to_dict()
        if self.hint is not None:
            doc["hint"] = self.hint
        return doc


class UsageError(TrtEdgeError):
    """A command-line value that cannot be used: a missing file, a directory for a file, a
    number out of range. Found before any work starts."""

    exit_code = EXIT_BAD_INPUT


class ResultWriteError(TrtEdgeError):
    """The job ran, but its result could not be written where the user asked (exit 1).

    The result must not be lost (a benchmark took minutes, a rollout changed
    devices): it travels with the error, and a `--json` command's error document
    carries it under `result`.
    """

    def __init__(self, message: str, *, where: Where, result: Any) -> None:
        super().__init__(message, where=where)
        self.result = result

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "result": self.result}


# ---- the device runner's errors ---------------------------------------------------
class RunnerError(TrtEdgeError):
    """Base of every error the runner raises for bad bundles, requests or inputs.

    Exit 2 by default (the request or the inputs are wrong); the bundle and runtime
    failures below are exit 1.
    """

    exit_code = EXIT_BAD_INPUT


class ProfileMismatchError(RunnerError):
    """An input shape the selected profile (or, under auto, every profile) does not accept."""


class UnknownPhaseError(RunnerError):
    """A phase name the bundle's runtime policy does not define."""


class RequestedProfileUnavailableError(RunnerError):
    """A pinned profile index the bundle cannot honour (negative, or past the last profile)."""


class InputSpecError(RunnerError):
    """Wrong number of inputs, or an input's dtype or rank differs from the bundle's I/O spec."""


class InputValueError(RunnerError):
    """An integer input holds a value outside the `values` range the bundle declares."""


class OutputPathError(RunnerError):
    """An output path (e.g. `--save-outputs`) is a directory, or its folder is not writable."""


class RunnerFailedError(RunnerError):
    """Base of the runner's failures that are not the request's (exit 1): the bundle, or
    the ExecuTorch runtime on this device."""

    exit_code = EXIT_FAILED


class BundleFormatMismatchError(RunnerFailedError):
    """`bundle.json` is missing or not a document this runner reads (wraps BundleFormatError)."""


class BundleIntegrityError(RunnerFailedError):
    """A bundle file is missing, or its size or sha256 differs from `bundle.json`."""


class ProgramLoadError(RunnerFailedError):
    """The ExecuTorch runtime could not load `model.pte` or its method."""


class ExecutionError(RunnerFailedError):
    """The ExecuTorch runtime failed while executing the method."""


class RuntimeUnavailableError(RunnerFailedError):
    """The ExecuTorch runtime (or numpy) is not installed on this device."""
