"""Small JSON documents (a signature, device settings) parsed with errors that say where.

Standard library only: this module ships to devices.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def parse_json_object(
    data: bytes | str, source: str, what: str, error: Callable[[str], Exception]
) -> dict[str, Any]:
    """`data` as a JSON object, else `error(message)` naming `source` (with line:col) and `what`."""
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise error(
            f"{source}:{exc.lineno}:{exc.colno}: {what} is not valid JSON: {exc.msg}"
        ) from None
    except UnicodeDecodeError as exc:
        raise error(f"{source}: {what} is not UTF-8: {exc}") from None
    if not isinstance(doc, dict):
        raise error(f"{source}: {what} must be a JSON object")
    return doc
