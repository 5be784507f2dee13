"""Arguments several commands share, and the up-front checks of the paths users name.

One definition per argument that means the same thing everywhere (a bundle
directory, `--json`, `-v`, a count of at least one), so the host's and the
device's commands read alike. The path checks run before any work starts: a
path that does not exist, or is of the wrong kind, is a `UsageError` (exit 2)
naming the path and the option, never an `OSError` halfway through a job.

Standard library only (it ships to devices), imported at start-up: keep it light.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

from trt_edge_runner.errors import UsageError, Where


def add_bundle_argument(parser: argparse.ArgumentParser, help: str = "bundle directory") -> None:
    parser.add_argument("bundle", metavar="BUNDLE", type=Path, help=help)


def add_json_argument(
    parser: argparse.ArgumentParser, help: str = "print the result as JSON on stdout"
) -> None:
    """`--json`: the result (or, on failure, the error document) as JSON on stdout."""
    parser.add_argument("--json", action="store_true", help=help)


def add_verbose_argument(parser: argparse.ArgumentParser) -> None:
    """`-v`: show the ExecuTorch runtime's own log lines (hidden by default as noise)."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show the ExecuTorch runtime's own log lines while loading "
        "(also TRT_EDGE_RUNTIME_LOGS=1)",
    )


def at_least(minimum: int, what: str = "the number", hint: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number >= `minimum` (`--runs`, `--iterations`, `--profile`)."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"{value} is too small: {what} must be at least {minimum}{hint}"
            )
        return value

    return whole_number


def positive_seconds(text: str) -> float:
    """An argparse type: a duration in seconds above zero (`--every`, `--timeout`, `--wait`)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive, finite number of seconds")
    return value


def require_file(path: Path | str, what: str = "file", *, option: str | None = None) -> Path:
    """`path` as a Path if it is an existing, readable regular file (or a link to one)."""
    found = _require(path, what, option)
    if found.is_dir():
        raise UsageError(f"is a directory, not a {what}", where=Where(found, option=option))
    return found


def require_dir(path: Path | str, what: str = "directory", *, option: str | None = None) -> Path:
    """`path` as a Path if it is an existing, readable directory."""
    found = _require(path, what, option)
    if not found.is_dir():
        raise UsageError(f"not a {what} (it is a file)", where=Where(found, option=option))
    return found


def require_path(
    path: Path | str, what: str = "file or directory", *, option: str | None = None
) -> Path:
    """`path` as a Path if anything readable is there (commands taking a file or a directory)."""
    return _require(path, what, option)


def _require(path: Path | str, what: str, option: str | None) -> Path:
    found = Path(path)
    if not found.exists():
        raise UsageError(f"no such {what}", where=Where(found, option=option))
    if not os.access(found, os.R_OK | (os.X_OK if found.is_dir() else 0)):
        raise UsageError("cannot be read (permission denied)", where=Where(found, option=option))
    return found


def parse_prompt_ids(text: str) -> list[int]:
    """The one `--prompt-ids` grammar (host `trt-edge generate`, device `trt-edge-device
    generate`): comma-separated token ids, integers >= 0, at least one, spaces around an id
    allowed (`"1, 2,3"` → `[1, 2, 3]`). Anything else is a UsageError (exit 2) quoting it."""
    parts = [part.strip() for part in text.split(",")]
    if not text.strip() or any(not part.isascii() or not part.isdigit() for part in parts):
        raise UsageError(
            f"--prompt-ids {text!r}: expected comma-separated token ids (integers >= 0), e.g. 1,2,3"
        )
    return [int(part) for part in parts]
