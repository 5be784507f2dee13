"""The walk of `build()`'s manifest path (issue 30): a call trace of one real build.

    .venv/bin/python benchmarks/walk_build.py [--example vision] [--until STAGE] [--largest 10]

Runs `trt_edge.pipeline.run.build(manifest, options)` once on an example manifest (the
CPU backend, a fresh temporary cache and output folder, a fixed source date: every stage
runs, and two runs print the same walk) under `sys.setprofile`, and follows the manifest
path through the calls.

What is followed — the *thread* — is the manifest path and what is read from it:

- the path: the `str`/`Path` given to `build()`, or any `str`/`PurePath` naming the same
  file (as given or absolute: `Path(p)`, `p.resolve()`);
- the source: the file's bytes, and its text (decoded, with or without a leading BOM);
- the document: the `ResolvedManifest` loaded from it (its `source_path` names the file),
  the value every stage after load reads.

A **stop** is a call of a project function (code in a file under `sdk/trt_edge/` or
`device_runner/trt_edge_runner/`; comprehensions and generator resumptions are not calls)
that receives a thread value as an argument (positional, keyword, `*args` or `**kwargs`;
`self` too, so a method of the resolved manifest such as `where()` is a stop). A value that
merely *holds* one (a `ManifestSource`, a stage value such as `Loaded`, the manifest's
`locations`) is not followed: a reader follows it as one value, not as the path.
A **return** is a stop in a file the walk has already left (the walk is the stops in call
order; leaving file A for B and coming back to A is one return). The walk prints the stops,
returns, files and the ordered stops (`file:function`), then the largest functions of the
product code (by lines, `ast`: `def` line to last line, nested functions counted alone too).

`walk(manifest, run)` traces any callable; `walk_build(..., until="export")` stops the build
as a stage starts. `tests/lint/test_build_walk.py` holds the walk up to export (no torch) and
`tests/pipeline/test_build_walk.py` the whole build's (docs/design.md, "The build reads as a
chain").
"""

from __future__ import annotations

import argparse
import ast
import dis
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from types import CodeType, FrameType
from typing import Any

import structlog
from trt_edge.manifest.resolved import ResolvedManifest

REPO = Path(__file__).resolve().parent.parent
PRODUCT_ROOTS = (REPO / "sdk" / "trt_edge", REPO / "device_runner" / "trt_edge_runner")
EXAMPLES = REPO / "examples"
SOURCE_DATE = 1_700_000_000  # fixed, so the walk does not depend on the file's mtime
# The code flags of frames that are resumed rather than called (generators, coroutines).
_RESUMABLE = 0x20 | 0x80 | 0x200


@dataclass(frozen=True)
class Thread:
    """The values followed: the manifest's path (as given and absolute) and its source."""

    paths: frozenset[str]
    raw: bytes
    texts: frozenset[str]

    @classmethod
    def of(cls, manifest: Path | str) -> Thread:
        path = Path(manifest)
        raw = path.read_bytes()
        text = raw.decode("utf-8", errors="replace")
        return cls(
            paths=frozenset({os.fspath(manifest), str(path), str(path.resolve())}),
            raw=raw,
            texts=frozenset({text, text.removeprefix("\ufeff")}),
        )

    def holds(self, value: object) -> bool:
        """Whether `value` is the path or the source (compared by value, cheaply)."""
        if isinstance(value, PurePath):
            return str(value) in self.paths
        if isinstance(value, str):
            return value in self.paths or (len(value) > 32 and value in self.texts)
        if isinstance(value, bytes | bytearray):
            return len(value) == len(self.raw) and value == self.raw
        if isinstance(value, ResolvedManifest):
            return str(value.source_path) in self.paths
        return False


@dataclass
class Walk:
    """The stops in call order, each `file:function` (file relative to the checkout)."""

    stops: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(stop.split(":", 1)[0] for stop in self.stops))

    @property
    def returns(self) -> int:
        """Stops that enter a file the walk has already left."""
        left: set[str] = set()
        current: str | None = None
        count = 0
        for stop in self.stops:
            file = stop.split(":", 1)[0]
            if file != current:
                count += file in left
                if current is not None:
                    left.add(current)
                current = file
        return count

    def summary(self) -> str:
        return f"{len(self.stops)} stops, {self.returns} returns, {len(self.files)} files"


def _arguments(frame: FrameType) -> Iterator[object]:
    """The values a call received (read at the call event, before the body runs)."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:count])
    if code.co_flags & 0x04:  # *args
        names.append(code.co_varnames[count])
        count += 1
    if code.co_flags & 0x08:  # **kwargs
        names.append(code.co_varnames[count])
    local = frame.f_locals
    for name in names:
        value = local.get(name)
        if isinstance(value, tuple):
            yield from value
        elif isinstance(value, dict) and name not in code.co_varnames[: code.co_argcount]:
            yield from value.values()
        else:
            yield value


def _product_file(filename: str, cache: dict[str, str | None]) -> str | None:
    """`filename` relative to the checkout if it is product code, else None (memoised)."""
    if filename not in cache:
        path = Path(filename)
        inside = path.is_absolute() and any(path.is_relative_to(r) for r in PRODUCT_ROOTS)
        cache[filename] = path.relative_to(REPO).as_posix() if inside else None
    return cache[filename]


def _start(code: CodeType, starts: dict[CodeType, int]) -> int:
    """Where a fresh frame of `code` stands at its call event: its first RESUME."""
    if code not in starts:
        offsets = (i.offset for i in dis.get_instructions(code) if i.opname == "RESUME")
        starts[code] = next(offsets, 0)
    return starts[code]


@contextmanager
def tracing(thread: Thread, walk: Walk) -> Iterator[None]:
    """Record in `walk` every project call that receives a thread value."""
    files: dict[str, str | None] = {}
    starts: dict[CodeType, int] = {}

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code.co_name.startswith("<") and code.co_name != "<lambda>":
            return  # comprehensions, module bodies
        file = _product_file(code.co_filename, files)
        if file is None:
            return
        if code.co_flags & _RESUMABLE and frame.f_lasti > _start(code, starts):
            return  # a generator resumed, not called
        if any(thread.holds(v) for v in _arguments(frame)):
            walk.stops.append(f"{file}:{code.co_qualname}")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)


def walk(manifest: Path | str, run: Callable[[], object]) -> Walk:
    """The walk of `manifest`'s thread through `run()` (which should build it)."""
    result = Walk()
    with tracing(Thread.of(manifest), result):
        run()
    return result


class _Enough(Exception):
    """Raised by the build's event sink when the walk has gone as far as it was asked."""


def walk_build(manifest: Path, work: Path, until: str | None = None) -> Walk:
    """The walk of one real build of `manifest` into `work` (fresh cache, fixed date). With
    `until` (a stage name, e.g. "export"), the build is stopped as that stage starts: the
    walk of everything before it (a lint test's budget: no torch)."""
    from trt_edge.pipeline.events import BuildEvent, StageStarted
    from trt_edge.pipeline.run import BuildOptions, build

    def stop_at(event: BuildEvent) -> None:
        if isinstance(event, StageStarted) and event.stage == until:
            raise _Enough

    options = BuildOptions(
        out_dir=work / "out",
        cache_dir=work / "cache",
        source_date_epoch=SOURCE_DATE,
        events=(stop_at,),
    )

    def run() -> None:
        with suppress(_Enough):
            build(manifest, options)

    return walk(manifest, run)


def largest_functions(count: int) -> list[tuple[int, str]]:
    """The `count` longest functions of the product code: (lines, `file:line:qualname`)."""
    found: list[tuple[int, str]] = []
    for root in PRODUCT_ROOTS:
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            rel = path.relative_to(REPO).as_posix()
            found += [(n, f"{rel}:{line}:{name}") for n, line, name in _functions(tree)]
    return sorted(found, key=lambda f: (-f[0], f[1]))[:count]


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[int, int, str]]:
    """(lines, def line, qualified name) of every function in `tree`, nested ones too."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            yield lines, node.lineno, prefix + node.name
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", default="vision", help="a folder of examples/")
    parser.add_argument("--largest", type=int, default=10, help="how many functions to list")
    parser.add_argument("--until", help="stop the build as this stage starts (e.g. export)")
    args = parser.parse_args()
    # The build's own log would bury the walk: only its warnings are shown.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    manifest = EXAMPLES / args.example / "manifest.yaml"
    with tempfile.TemporaryDirectory(prefix="walk-build-") as work:
        result = walk_build(manifest, Path(work), args.until)
    upto = f" up to {args.until}" if args.until else ""
    print(f"walk of build({manifest.relative_to(REPO)}){upto}: {result.summary()}")
    for number, stop in enumerate(result.stops, 1):
        print(f"{number:3d}  {stop}")
    print("files:", ", ".join(result.files))
    print(f"the {args.largest} largest functions of the product code (lines):")
    for lines, where in largest_functions(args.largest):
        print(f"  {lines:4d}  {where}")


if __name__ == "__main__":
    main()
