"""`trt-edge-run`'s machine interface, as the Python side reads it.

The C++ runner prints one JSON document on stdout with `--json` (its `"interface"`
field is the version below; a field changing meaning or going away bumps it), and
exits with the code of the kind of failure. This table mirrors the C++ one
(`device_runner/cpp/runner/errors.h`, printed by `trt-edge-run --help`) code for
code; a test holds the two together. A runner killed by a signal has no code here:
that is the parent's to report (`trt_edge_runner.agent.runner_process`).

Standard library only: this module ships to devices.
"""

from __future__ import annotations

INTERFACE_VERSION = 1

EXIT_OK = 0
EXIT_INTERNAL = 1  # unclassified failure (out of memory, a bug)
EXIT_USAGE = 2  # the command line: unknown flag, missing or bad value
EXIT_BUNDLE_FORMAT = 3  # not a bundle, bundle.json unreadable or not schema 1
EXIT_BUNDLE_INTEGRITY = 4  # the integrity rule refused the bundle's files
EXIT_TARGET_MISMATCH = 5  # bundle.json target.arch is not the runner's architecture
EXIT_PROGRAM_LOAD = 6  # model.pte or its method does not load, or disagrees with bundle.json
EXIT_REQUEST_REFUSED = 7  # a phase, pin, shape or input the bundle cannot serve
EXIT_EXECUTION_FAILED = 8  # the method ran and ExecuTorch returned an error
EXIT_OUTPUT_WRITE = 9  # --outputs could not be written

# Exit code -> the `error.kind` word of the JSON error document.
EXIT_KINDS: dict[int, str] = {
    EXIT_INTERNAL: "internal",
    EXIT_USAGE: "usage",
    EXIT_BUNDLE_FORMAT: "bundle_format",
    EXIT_BUNDLE_INTEGRITY: "bundle_integrity",
    EXIT_TARGET_MISMATCH: "target_mismatch",
    EXIT_PROGRAM_LOAD: "program_load",
    EXIT_REQUEST_REFUSED: "request_refused",
    EXIT_EXECUTION_FAILED: "execution_failed",
    EXIT_OUTPUT_WRITE: "output_write",
}

# Kinds that are the caller's fault (a bad flag, a request the bundle cannot serve):
# the agent's commands exit 2 for them, like every other bad input; the rest exit 1.
CALLER_KINDS = frozenset({"usage", "request_refused"})

RUNNER_NAME = "trt-edge-run"
