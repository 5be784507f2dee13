"""JSON Schemas of the documents that cross a boundary, and the check every reader runs.

`source.py` declares them (one Python source); `*.schema.json` beside this file are generated
from it and checked in (`python -m trt_edge_runner.schemas --check` fails on drift), so the C++
reader, other tools and people read the same contract. `validate(name, doc, source)` checks a
parsed document and raises `DocumentError` naming the field at fault (`steps[0].ms: must be
number`), never a KeyError or a TypeError deeper in.

The validator is ours (`validator.py`, standard library only: its docstring says why) and
is held to the reference implementation, `jsonschema`, by a test. What a schema cannot say (an
input name that must be one of `io.inputs`, a file listed in `files`) stays in the reader that
builds the typed object (`bundle_format.py`).

Each document has one typed decode function that every reader calls: it runs `decode` (JSON,
then the schema) and builds the typed value (`decode_state`, `decode_device_config`,
`decode_runner_tarball`, …; docs/contracts.md lists them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.json_documents import parse_json_object, read_file_bytes
from trt_edge_runner.schemas.source import SCHEMAS
from trt_edge_runner.schemas.validator import first_error

SCHEMA_DIR = Path(__file__).parent


class DocumentError(TrtEdgeError, ValueError):
    """A document does not match its schema; `field` is the JSON path at fault ("" for the
    document itself), `schema` the schema's name."""

    def __init__(self, message: str, *, field: str, schema: str) -> None:
        super().__init__(message)
        self.field = field
        self.schema = schema


def schema_file(name: str) -> Path:
    return SCHEMA_DIR / f"{name}.schema.json"


def check(name: str, doc: Any) -> tuple[str, str] | None:
    """None when `doc` matches schema `name`, else (field, what is wrong with it)."""
    return first_error(SCHEMAS[name], doc)


def validate(
    name: str,
    doc: Any,
    source: str,
    error: Callable[[str, str], Exception] | None = None,
) -> dict[str, Any]:
    """`doc` if it matches schema `name`; else `error(message, field)` (a `DocumentError` by
    default) with the message `source: field: what` — e.g. `bundle.json: io.inputs[0].name:
    missing`."""
    problem = check(name, doc)
    if problem is None:
        return doc  # type: ignore[no-any-return]
    field, what = problem
    message = f"{source}: {field}: {what}" if field else f"{source}: {what}"
    if error is not None:
        raise error(message, field)
    raise DocumentError(message, field=field, schema=name)


ErrorFactory = Callable[[str, str], Exception]


def _document_error(name: str) -> ErrorFactory:
    return lambda message, field: DocumentError(message, field=field, schema=name)


def decode(
    name: str,
    data: bytes | str,
    source: str,
    what: str = "",
    error: ErrorFactory | None = None,
) -> dict[str, Any]:
    """`data` parsed as a JSON object and held to schema `name`, else `error(message, field)`
    (a `DocumentError` by default) naming `source` and the field: the first step of every
    typed decode function, so no reader meets a KeyError or a TypeError later."""
    fail = error or _document_error(name)
    doc = parse_json_object(data, source, what, lambda message: fail(message, ""))
    return validate(name, doc, source, fail)


def read_document(
    name: str, path: Path, what: str, error: ErrorFactory | None = None
) -> dict[str, Any]:
    """The file `path` decoded as schema `name` (`decode`); an unreadable file is the same
    error, naming the file, `what` it is and the system's reason."""
    fail = error or _document_error(name)
    data = read_file_bytes(path, what, lambda message: fail(message, ""))
    return decode(name, data, str(path), what, fail)
