"""Generate `manifests/schema.json` (JSON Schema) from the pydantic models.

The checked-in file is what editors use through the manifest's
`# yaml-language-server: $schema=...` line; a test regenerates it and fails on
drift, so the models stay the single source of truth.

    python -m trt_edge.manifest.schema            # rewrite manifests/schema.json
    python -m trt_edge.manifest.schema --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from trt_edge.manifest.models import Manifest

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def schema_document() -> dict[str, Any]:
    doc = Manifest.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": DRAFT, **doc}


def schema_text() -> str:
    return json.dumps(schema_document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def default_path() -> Path:
    """`manifests/schema.json` at the repository root (three levels above this package)."""
    return Path(__file__).resolve().parents[3] / "manifests" / "schema.json"


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trt_edge.manifest.schema")
    parser.add_argument("--out", type=Path, default=None, help="default: manifests/schema.json")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is stale")
    args = parser.parse_args(argv)
    out: Path = args.out or default_path()
    text = schema_text()
    if args.check:
        current = out.read_text("utf-8") if out.is_file() else ""
        if current != text:
            print(f"{out} is out of date: run python -m trt_edge.manifest.schema", file=sys.stderr)
            return 1
        return 0
    write_atomically(out, text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
