"""Writing a vectors file the same way for every generator beside this file.

One case per line (diffs of a contract stay reviewable line by line), case names
unique, and `--check` to compare the checked-in file with what the generator
writes (the tests run every generator so; exit 1 when the file is stale).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def vector_document(
    cases: Sequence[dict[str, Any]], description: str, header: dict[str, Any] | None = None
) -> str:
    """The file's text: `format` and other `header` keys first, then one case per line."""
    names = [c["name"] for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise SystemExit(f"duplicate case names: {sorted(duplicates)}")
    head = {**(header or {}), "description": description}
    fields = ",\n ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items())
    lines = ",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in cases)
    return f'{{{fields},\n "cases": [\n{lines}\n]}}\n'


def write_or_check(out: Path, text: str, argv: Sequence[str] | None = None) -> None:
    """Write `text` to `out`, or with `--check` exit 1 unless `out` already holds it."""
    args = sys.argv[1:] if argv is None else argv
    count = len(json.loads(text).get("cases", json.loads(text).get("dtypes", [])))
    if "--check" in args:
        if not out.is_file() or out.read_text(encoding="utf-8") != text:
            raise SystemExit(f"{out} is stale: run python {Path(sys.argv[0]).as_posix()}")
        print(f"{out}: up to date ({count} entries)")
        return
    out.write_text(text, encoding="utf-8")
    print(f"wrote {count} entries to {out}")
