"""Small documents (a signature, device settings, a key, a plan) read and parsed with
errors that say where.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def read_file_bytes(path: Path, what: str, error: Callable[[str], Exception]) -> bytes:
    """The bytes of `path`, else `error(message)` naming the file, `what` it is and the
    system's reason (`…/keys.json: cannot read the local key policy: Permission denied`)."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc.strerror}") from None


def parse_json_object(
    data: bytes | str, source: str, what: str, error: Callable[[str], Exception]
) -> dict[str, Any]:
    """`data` as a JSON object, else `error(message)` naming `source` (with line:col) and `what`
    (`""` when `source` already says what it is, e.g. `.../bundle.json`)."""
    subject = f"{what} " if what else ""
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise error(
            f"{source}:{exc.lineno}:{exc.colno}: {subject}is not valid JSON: {exc.msg}"
            if what
            else f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"
        ) from None
    except UnicodeDecodeError as exc:
        raise error(f"{source}: {subject}is not UTF-8: {exc}") from None
    if not isinstance(doc, dict):
        raise error(f"{source}: {subject}must be a JSON object")
    return doc
