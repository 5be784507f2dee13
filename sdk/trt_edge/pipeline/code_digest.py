"""A stage's code digest, derived from the modules the stage imports.

A cached stage output is only valid while the code that produced it is unchanged. A
hand-kept list of "the files this stage depends on" goes stale the day a module is split
(issue 20: `emulation.py` was not in the validate stage's list, so editing it reused old
validation reports). Here the list is computed: starting from a stage's entry modules,
every `import` statement — including the function-local ones this codebase uses for heavy
libraries — is followed with `ast` (no module is executed) as long as it stays inside our
own packages (`trt_edge`, `trt_edge_runner`). Third-party code enters cache keys through
package versions, not through this digest.

Over-approximation is deliberate: an import under `if TYPE_CHECKING:` or in a function a
stage never calls still counts. A spurious cache miss costs a rebuild; a missing module
costs a wrong cached result.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

OUR_PACKAGES = ("trt_edge", "trt_edge_runner")

# Entry modules of each cached stage; what they import is found, not listed.
EXPORT_ENTRIES = (
    "trt_edge.pipeline.load_model",
    "trt_edge.pipeline.plan",
    "trt_edge.pipeline.export",
    "trt_edge.pipeline.recipes",
    "trt_edge.pipeline.quantize",
)
VALIDATE_ENTRIES = (
    "trt_edge.pipeline.plan",
    "trt_edge.pipeline.validate",
    "trt_edge.pipeline.delegates",
    "trt_edge.pipeline.recipes",
)
# Packages whose modules are picked at run time (a backend by name): all of them count.
RUN_TIME_CHOSEN = ("trt_edge.pipeline.lower",)


@cache
def _package_roots(packages: tuple[str, ...]) -> dict[str, Path]:
    """Where each of our top-level packages lives (found without importing submodules)."""
    roots: dict[str, Path] = {}
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None:
            roots[name] = Path(spec.origin).parent
    return roots


def module_path(module: str, roots: Mapping[str, Path]) -> Path | None:
    """The source file of `module` if it is one of ours, else None."""
    top, _, rest = module.partition(".")
    root = roots.get(top)
    if root is None:
        return None
    base = root.joinpath(*rest.split(".")) if rest else root
    candidates = [base.with_suffix(".py")] if rest else []
    candidates.append(base / "__init__.py")
    return next((c for c in candidates if c.is_file()), None)


def _imported_names(module: str, path: Path) -> frozenset[str]:
    """Every module name an import statement in `path` may load (parents included)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return _names_in_source(package, path.read_bytes())


@cache
def _names_in_source(package: str, source: bytes) -> frozenset[str]:
    """The parse, memoised by content: a closure is computed more than once per build."""
    tree = ast.parse(source)
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            names.add(base)
            # `from pkg import name`: name may be a submodule.
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    expanded: set[str] = set()
    for name in names:
        parts = name.split(".")
        expanded.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return frozenset(expanded)


def module_closure(
    entries: Iterable[str], roots: Mapping[str, Path] | None = None
) -> dict[str, Path]:
    """The entry modules and everything of ours they import, transitively (name → file)."""
    roots = _package_roots(OUR_PACKAGES) if roots is None else roots
    found: dict[str, Path] = {}
    pending: list[str] = []
    for entry in entries:
        parts = entry.split(".")
        pending.extend(".".join(parts[: i + 1]) for i in range(len(parts)))
    while pending:
        name = pending.pop()
        if name in found:
            continue
        path = module_path(name, roots)
        if path is None:
            continue
        found[name] = path
        pending.extend(n for n in _imported_names(name, path) if n not in found)
    return found


def closure_digest(entries: Iterable[str], roots: Mapping[str, Path] | None = None) -> str:
    """Hash of the names and contents of the entries' module closure."""
    closure = module_closure(entries, roots)
    digest = hashlib.sha256()
    for name in sorted(closure):
        digest.update(name.encode() + b"\0")
        digest.update(closure[name].read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def package_modules(package: str, roots: Mapping[str, Path] | None = None) -> list[str]:
    """Every module of one of our packages: for entry points chosen at run time (backends)."""
    roots = _package_roots(OUR_PACKAGES) if roots is None else roots
    init = module_path(package, roots)
    if init is None or init.name != "__init__.py":
        return [package]
    folder = init.parent
    return [package] + [
        f"{package}." + ".".join(p.relative_to(folder).with_suffix("").parts)
        for p in sorted(folder.rglob("*.py"))
        if p.name != "__init__.py"
    ]


def stage_code_digest(entries: Iterable[str], roots: Mapping[str, Path] | None = None) -> str:
    """A stage's code digest: the closure of its entries and of every run-time-chosen module.

    Editing any module the stage imports invalidates its cached outputs; editing one it does
    not import (the CLI, the bundle writer) keeps them."""
    chosen = [m for package in RUN_TIME_CHOSEN for m in package_modules(package, roots)]
    return closure_digest((*entries, *chosen), roots)
