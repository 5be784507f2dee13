"""`python -m trt_edge_runner.schemas --check | --write`: the checked-in schema files against
their source (`source.py`). `--check` exits 1 naming each file that differs (CI, a test);
`--write` regenerates them (after editing the source)."""

from __future__ import annotations

import argparse
import json
import sys

from trt_edge_runner.durable import write_atomic
from trt_edge_runner.schemas import SCHEMA_DIR, schema_file
from trt_edge_runner.schemas.source import SCHEMAS


def rendered(name: str) -> bytes:
    """The exact bytes of a schema file: indented, sorted keys, one final newline."""
    return (json.dumps(SCHEMAS[name], indent=2, sort_keys=True) + "\n").encode("utf-8")


def drifted() -> list[str]:
    """Files that differ from the source, missing ones, and generated files no longer made."""
    out = [n for n in sorted(SCHEMAS) if not schema_file(n).is_file()]
    out += [
        n
        for n in sorted(SCHEMAS)
        if schema_file(n).is_file() and schema_file(n).read_bytes() != rendered(n)
    ]
    stale = {p.name.removesuffix(".schema.json") for p in SCHEMA_DIR.glob("*.schema.json")}
    return out + sorted(stale - set(SCHEMAS))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trt_edge_runner.schemas", description=__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument(
        "--check", action="store_true", help="fail if a file differs from source.py"
    )
    action.add_argument("--write", action="store_true", help="regenerate the files from source.py")
    args = parser.parse_args(argv)
    if args.write:
        for name in sorted(SCHEMAS):
            write_atomic(schema_file(name), rendered(name))
        for stale in sorted(set(drifted()) - set(SCHEMAS)):
            schema_file(stale).unlink()
        print(f"wrote {len(SCHEMAS)} schema(s) to {SCHEMA_DIR}")
        return 0
    bad = drifted()
    for name in bad:
        print(
            f"{schema_file(name)}: differs from trt_edge_runner/schemas/source.py; run "
            "`python -m trt_edge_runner.schemas --write` and commit the result",
            file=sys.stderr,
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
