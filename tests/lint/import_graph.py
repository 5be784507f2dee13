"""The import statements of the product code (`sdk/trt_edge`, `device_runner/trt_edge_runner`),
read with `ast` (nothing is imported): for the lint tests of `test_imports.py`.

An import is *function-local* when it sits inside a function body, and *type-only* under
`if TYPE_CHECKING:` (it never runs). `from a.b import c` names the module `a.b.c` when that is
one of ours, else `a.b`: the module the statement loads.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.helpers.paths import REPO

PACKAGES = {
    "trt_edge": REPO / "sdk" / "trt_edge",
    "trt_edge_runner": REPO / "device_runner" / "trt_edge_runner",
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the module imported (ours: a key of `modules()`; else its dotted name)
    path: Path
    line: int
    local: bool  # inside a function body
    type_only: bool  # under `if TYPE_CHECKING:`

    @property
    def ours(self) -> bool:
        return self.target.split(".")[0] in PACKAGES

    @property
    def top(self) -> str:
        return self.target.split(".")[0]

    def __str__(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}: {self.target}"


@cache
def modules() -> dict[str, Path]:
    """Every product module by dotted name."""
    found: dict[str, Path] = {}
    for package, root in PACKAGES.items():
        for path in root.rglob("*.py"):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        parts = module.split(".")
        if not is_package:
            parts.pop()
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, base] if base else parts)
    for alias in node.names:
        full = f"{base}.{alias.name}"
        yield full if full in modules() else base


def _ours(name: str) -> str:
    """`name` or the nearest of its parents that is one of our modules (else `name`)."""
    probe = name
    while probe and probe not in modules():
        probe = probe.rpartition(".")[0]
    return probe or name


@cache
def imports() -> tuple[Import, ...]:
    found: list[Import] = []
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found.extend(_walk(module, path, tree.body, local=False, type_only=False))
    return tuple(found)


def _walk(
    module: str, path: Path, body: list[ast.stmt], *, local: bool, type_only: bool
) -> Iterator[Import]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(module, path.name == "__init__.py", node):
                yield Import(module, _ours(target), path, node.lineno, local, type_only)
            continue
        inner_local = local or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        inner_type = type_only or (
            isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        )
        for child in _children(node):
            yield from _walk(module, path, child, local=inner_local, type_only=inner_type)


def _children(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists nested in `node` (bodies, branches, handlers, cases)."""
    for field in ("body", "orelse", "finalbody"):
        children = getattr(node, field, None)
        if isinstance(children, list) and all(isinstance(c, ast.stmt) for c in children):
            yield children
    for handler in getattr(node, "handlers", ()):
        if isinstance(handler, ast.ExceptHandler):
            yield handler.body
    for case in getattr(node, "cases", ()):
        if isinstance(case, ast.match_case):
            yield case.body


def package_of(module: str) -> str:
    """`trt_edge.pipeline` for `trt_edge.pipeline.lower.tensorrt`: the unit of layering."""
    return ".".join(module.split(".")[:2])


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def top_level_closure(module: str) -> set[str]:
    """What importing `module` imports, ours and third-party top-level names: its own
    top-level imports, theirs, and the packages above each (Python runs their `__init__`)."""
    edges: dict[str, set[str]] = {}
    for imp in imports():
        if not imp.local and not imp.type_only:
            edges.setdefault(imp.source, set()).add(imp.target if imp.ours else imp.top)
    seen = {module}
    todo = [module]
    while todo:
        current = todo.pop()
        parts = current.split(".")
        parents = {".".join(parts[:i]) for i in range(1, len(parts))} & set(modules())
        for nxt in edges.get(current, set()) | parents:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen
