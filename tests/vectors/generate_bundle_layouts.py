"""Writes `bundle_layouts.json`, the conformance vectors for the bundle integrity rule.

Each case is a bundle directory described as data — files with their contents,
directories, symbolic and hard links, fifos, and a `bundle.json` — plus, beside
the bundle, files that lie outside it. Both implementations of the rule
(`trt_edge_runner.bundle_integrity`, C++ `runner/bundle_integrity.cpp`)
materialise each case in a temporary directory and must report exactly the
expected set of (problem kind, path). Every expectation is written by hand from
the rule (its docstring in `bundle_integrity.py`); nothing here calls an
implementation. The JSON file is the contract and is checked in. Regenerate with:

    .venv/bin/python tests/vectors/generate_bundle_layouts.py   # --check: compare only

Node types (materialised in order; a file's folders are created as needed):
`{"type": "file", "text": T}` (UTF-8 bytes) or `{"type": "file", "size": N}` (N
zero bytes, sparse), `{"type": "dir"}`, `{"type": "symlink", "target": T}` (T
verbatim), `{"type": "hardlink", "target": Q}` (Q relative to the bundle directory:
an earlier node, or an `outside` one as `../NAME`), `{"type": "fifo"}`. `tree`
paths are relative to the bundle directory, `outside` paths to the folder that
holds it; `outside` nodes are made first.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from vector_file import vector_document, write_or_check

OUT = Path(__file__).with_name("bundle_layouts.json")

# The caps are part of the contract: both implementations check theirs against these.
CAPS = {
    "max_document_bytes": 4 << 20,
    "max_file_bytes": 8 << 30,
    "max_bundle_bytes": 8 << 30,
    "max_entries": 256,
}

PROGRAM = "program bytes: a stand-in for model.pte"
REPORT = '{"ok": true}\n'
SIGNATURE = '{"algorithm":"ed25519","key_id":"00","signature":"AA=="}\n'

Node = dict[str, Any]
Case = dict[str, Any]


def file(path: str, text: str) -> Node:
    return {"path": path, "type": "file", "text": text}


def sparse(path: str, size: int) -> Node:
    return {"path": path, "type": "file", "size": size}


def folder(path: str) -> Node:
    return {"path": path, "type": "dir"}


def symlink(path: str, target: str) -> Node:
    return {"path": path, "type": "symlink", "target": target}


def hardlink(path: str, target: str) -> Node:
    return {"path": path, "type": "hardlink", "target": target}


def fifo(path: str) -> Node:
    return {"path": path, "type": "fifo"}


def entry(text: str) -> dict[str, Any]:
    data = text.encode("utf-8")
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


GOOD_FILES = {"model.pte": entry(PROGRAM), "reports/validation.json": entry(REPORT)}


def bundle_json(files: dict[str, dict[str, Any]]) -> str:
    """A minimal valid bundle.json (canonical form) listing `files`."""
    doc = {
        "schema_version": 1,
        "model": {"name": "layout", "version": "0.0.0"},
        "backend": "portable",
        "target": {"id": "cpu-x86_64"},
        "io": {"method": "forward", "inputs": [], "outputs": []},
        "profiles": [],
        "runtime": {"policy": "pinned", "phases": {}},
        "files": files,
        "delegates": [],
        "provenance": {},
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n"


def good_tree(*, signed: bool = True) -> list[Node]:
    tree = [
        file("model.pte", PROGRAM),
        file("reports/validation.json", REPORT),
        file("bundle.json", bundle_json(GOOD_FILES)),
    ]
    if signed:
        tree.append(file("bundle.sig", SIGNATURE))
    return tree


def problem(kind: str, path: str) -> dict[str, str]:
    return {"kind": kind, "path": path}


def case(
    name: str, tree: list[Node], expect: list[dict[str, str]], outside: list[Node] | None = None
) -> Case:
    out: Case = {"name": name, "tree": tree}
    if outside:
        out["outside"] = outside
    out["expect"] = sorted(expect, key=lambda p: (p["path"], p["kind"]))
    return out


def replaced(tree: list[Node], path: str, *nodes: Node) -> list[Node]:
    """`tree` with the node at `path` replaced by `nodes` (none: removed)."""
    out: list[Node] = []
    for node in tree:
        out.extend(nodes if node["path"] == path else [node])
    return out


def listing(files: dict[str, dict[str, Any]], *, signed: bool = True) -> list[Node]:
    """The good files with bundle.json listing `files` instead."""
    return replaced(
        good_tree(signed=signed), "bundle.json", file("bundle.json", bundle_json(files))
    )


def cases() -> list[Case]:
    out: list[Case] = []
    add = out.append
    good = good_tree()

    # -- what a bundle may hold -------------------------------------------------
    add(case("a signed bundle keeps the rule", good, []))
    add(case("an unsigned bundle keeps the rule too", good_tree(signed=False), []))
    add(
        case(
            "a listed file that is a hard link is accepted (its bytes are hashed)",
            replaced(good, "model.pte", hardlink("model.pte", "../program.bin")),
            [],
            outside=[file("program.bin", PROGRAM)],
        )
    )

    # -- extra --------------------------------------------------------------------
    add(
        case(
            "an extra file",
            [*good, file("payload.sh", "echo hi\n")],
            [problem("extra", "payload.sh")],
        )
    )
    add(
        case(
            "an extra file in a listed file's folder",
            [*good, file("reports/notes.txt", "x")],
            [problem("extra", "reports/notes.txt")],
        )
    )
    add(case("an extra empty directory", [*good, folder("cache")], [problem("extra", "cache")]))
    add(
        case(
            "an extra nested directory",
            [*good, folder("reports/old")],
            [problem("extra", "reports/old")],
        )
    )
    add(
        case(
            "a second bundle.json below the root is just an extra file",
            [*good, file("reports/bundle.json", "{}")],
            [problem("extra", "reports/bundle.json")],
        )
    )
    add(
        case(
            "an unlisted hard link to a listed file is an extra name",
            [*good, hardlink("copy.pte", "model.pte")],
            [problem("extra", "copy.pte")],
        )
    )
    add(
        case(
            "model.pte present but not listed",
            listing({"reports/validation.json": entry(REPORT)}),
            [problem("extra", "model.pte")],
        )
    )

    # -- linked -----------------------------------------------------------------
    add(
        case(
            "a symbolic link to a file outside the bundle",
            [*good, symlink("passwd", "/etc/passwd")],
            [problem("linked", "passwd")],
        )
    )
    add(
        case(
            "a dangling symbolic link",
            [*good, symlink("later", "does-not-exist")],
            [problem("linked", "later")],
        )
    )
    add(
        case(
            "a listed file that is a symbolic link (to identical bytes) is refused",
            replaced(good, "model.pte", symlink("model.pte", "../program.bin")),
            [problem("linked", "model.pte")],
            outside=[file("program.bin", PROGRAM)],
        )
    )
    add(
        case(
            "a symbolic link to a file inside the bundle",
            [*good, symlink("alias.pte", "model.pte")],
            [problem("linked", "alias.pte")],
        )
    )
    add(
        case(
            "a listed file reached through a symbolically linked directory",
            [
                file("model.pte", PROGRAM),
                symlink("reports", "../elsewhere"),
                file("bundle.json", bundle_json(GOOD_FILES)),
            ],
            [problem("linked", "reports"), problem("outside", "reports/validation.json")],
            outside=[file("elsewhere/validation.json", REPORT)],
        )
    )

    # -- not regular --------------------------------------------------------------
    add(case("an extra fifo", [*good, fifo("pipe")], [problem("not_regular", "pipe")]))
    add(
        case(
            "a listed file that is a fifo (never opened)",
            replaced(good, "model.pte", fifo("model.pte")),
            [problem("not_regular", "model.pte")],
        )
    )
    add(
        case(
            "a listed file that is a directory",
            replaced(good, "reports/validation.json", folder("reports/validation.json")),
            [problem("not_regular", "reports/validation.json")],
        )
    )

    # -- size and sha256 ----------------------------------------------------------
    changed = PROGRAM[:-1] + ("X" if PROGRAM[-1] != "X" else "Y")
    add(
        case(
            "one changed byte",
            replaced(good, "model.pte", file("model.pte", changed)),
            [problem("sha256_mismatch", "model.pte")],
        )
    )
    add(
        case(
            "a truncated file",
            replaced(good, "model.pte", file("model.pte", PROGRAM[:-1])),
            [problem("size_mismatch", "model.pte")],
        )
    )
    add(
        case(
            "a grown file",
            replaced(
                good, "reports/validation.json", file("reports/validation.json", REPORT + " ")
            ),
            [problem("size_mismatch", "reports/validation.json")],
        )
    )

    # -- missing ------------------------------------------------------------------
    add(
        case(
            "a missing listed file",
            replaced(good, "reports/validation.json"),
            [problem("missing", "reports/validation.json")],
        )
    )
    add(
        case(
            "a missing listed program",
            replaced(good, "model.pte"),
            [problem("missing", "model.pte")],
        )
    )
    add(
        case(
            "no program at all, listed or present",
            replaced(listing({"reports/validation.json": entry(REPORT)}), "model.pte"),
            [problem("missing", "model.pte")],
        )
    )

    # -- outside ------------------------------------------------------------------
    for name, bad in [
        ("'..' out of the bundle", "../secret.txt"),
        ("an absolute path", "/etc/passwd"),
        ("a '.' part", "./model.pte"),
        ("an empty part", "reports//validation.json"),
        ("an empty name", ""),
        ("a trailing slash", "reports/"),
    ]:
        add(
            case(
                f"a listed name with {name}",
                listing({**GOOD_FILES, bad: entry("secret\n")}),
                [problem("outside", bad)],
                outside=[file("secret.txt", "secret\n")],
            )
        )

    # -- oversized ----------------------------------------------------------------
    add(
        case(
            "a declared size above the one-file cap",
            listing({**GOOD_FILES, "weights.bin": {"sha256": "0" * 64, "size": (8 << 30) + 1}}),
            [problem("oversized", "weights.bin")],
        )
    )
    half = {"sha256": "0" * 64, "size": 5 << 30}
    add(
        case(
            "declared sizes above the bundle cap together",
            [
                *listing({**GOOD_FILES, "a.bin": half, "b.bin": half}),
                file("a.bin", "a"),
                file("b.bin", "b"),
            ],
            [
                problem("oversized", "bundle.json"),
                problem("size_mismatch", "a.bin"),
                problem("size_mismatch", "b.bin"),
            ],
        )
    )
    add(
        case(
            "a bundle.json above the document cap is never read",
            replaced(good, "bundle.json", sparse("bundle.json", (4 << 20) + 1)),
            [problem("oversized", "bundle.json")],
        )
    )
    add(
        case(
            "a bundle.sig above the document cap",
            replaced(good, "bundle.sig", sparse("bundle.sig", (4 << 20) + 1)),
            [problem("oversized", "bundle.sig")],
        )
    )
    add(
        case(
            "more entries than the tree cap",
            [*good, *(file(f"junk/{i:03d}", "") for i in range(300))],
            [problem("oversized", ".")],
        )
    )

    # -- the documents themselves -------------------------------------------------
    add(
        case(
            "bundle.json as a symbolic link",
            replaced(good, "bundle.json", symlink("bundle.json", "../real.json")),
            [problem("linked", "bundle.json")],
            outside=[file("real.json", bundle_json(GOOD_FILES))],
        )
    )
    add(
        case(
            "bundle.json as a directory",
            replaced(good, "bundle.json", folder("bundle.json")),
            [problem("not_regular", "bundle.json")],
        )
    )
    add(
        case(
            "bundle.sig as a symbolic link",
            replaced(good, "bundle.sig", symlink("bundle.sig", "../other.sig")),
            [problem("linked", "bundle.sig")],
            outside=[file("other.sig", SIGNATURE)],
        )
    )

    # -- all at once --------------------------------------------------------------
    add(
        case(
            "every problem is reported, not the first",
            [
                file("model.pte", changed),
                file("bundle.json", bundle_json(GOOD_FILES)),
                file("payload.sh", "echo hi\n"),
                symlink("passwd", "/etc/passwd"),
                fifo("pipe"),
            ],
            [
                problem("sha256_mismatch", "model.pte"),
                problem("extra", "payload.sh"),
                problem("linked", "passwd"),
                problem("not_regular", "pipe"),
                problem("missing", "reports/validation.json"),
            ],
        )
    )
    return out


def document() -> str:
    description = (
        "Conformance vectors for the trt-edge bundle integrity rule "
        "(trt_edge_runner/bundle_integrity.py). Run: python -m trt_edge_runner.conformance "
        "FILE, and the C++ trt_edge_bundle_conformance FILE."
    )
    return vector_document(cases(), description, {"format": "bundle_layouts", "caps": CAPS})


if __name__ == "__main__":
    write_or_check(OUT, document())
