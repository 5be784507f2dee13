"""Generate `manifests/schema.json` (JSON Schema) from the pydantic models.

The checked-in file is what editors use through the manifest's
`# yaml-language-server: $schema=...` line; a test regenerates it and fails on
drift, so the models stay the single source of truth.

    python -m trt_edge.manifest.schema            # rewrite both generated files
    python -m trt_edge.manifest.schema --check    # exit 1 if either is out of date

It also writes `sdk/trt_edge/manifest/manifest.core.json`, the models compiled for
the fast validator (see `compiled.py`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from trt_edge_runner.durable import write_atomic

from trt_edge.manifest.compiled import CORE_SCHEMA_FILE, compiled_text
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
    write_atomic(path, text.encode("utf-8"))


def _read(path: Path) -> str:
    return path.read_text("utf-8") if path.is_file() else ""


def core_path() -> Path:
    return Path(__file__).resolve().parent / CORE_SCHEMA_FILE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trt_edge.manifest.schema")
    parser.add_argument("--out", type=Path, default=None, help="default: manifests/schema.json")
    parser.add_argument(
        "--core-out", type=Path, default=None, help="default: the packaged manifest.core.json"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args(argv)
    outputs = [
        (args.out or default_path(), schema_text()),
        (args.core_out or core_path(), compiled_text()),
    ]
    if args.check:
        stale = [
            out
            for out, text in outputs
            if (out.read_text("utf-8") if out.is_file() else "") != text
        ]
        for out in stale:
            print(f"{out} is out of date: run python -m trt_edge.manifest.schema", file=sys.stderr)
        return 1 if stale else 0
    for out, text in outputs:
        write_atomically(out, text)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
