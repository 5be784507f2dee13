"""Find, hash and load the model a manifest names.

The `load` stage hashes the source (for the cache keys); the model itself is imported
only when `export` or `validate` needs it.

Three sources of a plain model: `file.py:fn` (a file next to the manifest),
`package.module:fn` (importable), or a saved torch.export program (`.pt2`). A Hugging
Face folder (`model.huggingface`) is hashed and loaded by its recipe
(`trt_edge.llm.recipe.CausalLmRecipe`, `trt_edge.llm.loading`). Hashing and loading are
separate on purpose: the cache key needs the source hash, and a fully cached
rebuild must not pay for importing torch or running the user's code.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import TensorSpec

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import ModelSourceError

# Files that can change what the entrypoint builds: code and weights. Hashing
# every file would pull in build outputs written next to the manifest.
SOURCE_SUFFIXES = frozenset({".py", ".pt", ".pth", ".bin", ".safetensors", ".npz", ".npy"})


@dataclass(frozen=True)
class SourceDigest:
    """What the model source hashed to, and which files went into the hash."""

    sha256: str
    files: tuple[str, ...]  # relative to the hashed root, sorted


@dataclass(frozen=True)
class LoadedModel:
    """The eager model (`module`, called for parity) and, for `.pt2`, the saved program."""

    module: Any  # torch.nn.Module, or the callable `ExportedProgram.module()`
    exported: Any | None  # torch.export.ExportedProgram when loaded from .pt2


def _split_entrypoint(entrypoint: str) -> tuple[str, str]:
    target, sep, fn = entrypoint.rpartition(":")
    if not sep or not target or not fn:
        raise ValueError(entrypoint)
    return target, fn


def _is_file_entry(target: str) -> bool:
    return target.endswith(".py") or "/" in target


def _where(manifest: ResolvedManifest) -> str:
    """`FILE:LINE:COL` of the model's source in the manifest (entrypoint or exported)."""
    key = "entrypoint" if manifest.entrypoint is not None else "exported"
    return manifest.locations.where("model", key)


def _hash_tree(root: Path, only: Path | None = None) -> SourceDigest:
    """sha256 over (relative path, bytes) of every source-like file under `root`."""
    digest = hashlib.sha256()
    names: list[str] = []
    if only is not None:
        paths = [only]
        root = only.parent
    else:
        paths = sorted(
            p
            for p in root.rglob("*")
            if p.is_file()
            and p.suffix in SOURCE_SUFFIXES
            and not any(
                part.startswith(".") or part == "__pycache__" for part in p.parts[len(root.parts) :]
            )
        )
    for path in paths:
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        names.append(rel)
    return SourceDigest(sha256=digest.hexdigest(), files=tuple(names))


def source_digest(manifest: ResolvedManifest) -> SourceDigest:
    """Hash the plain model's source without importing it (cheap; decides cache hits)."""
    if manifest.exported is not None:
        if not manifest.exported.is_file():
            raise ModelSourceError(
                f"{_where(manifest)}: model.exported: {manifest.exported} does not exist",
                hint="export the program with torch.export.save(), or fix the path",
            )
        return _hash_tree(manifest.exported.parent, only=manifest.exported)
    assert manifest.entrypoint is not None  # the manifest guarantees exactly one
    try:
        target, _fn = _split_entrypoint(manifest.entrypoint)
    except ValueError:
        raise ModelSourceError(
            f"{_where(manifest)}: model.entrypoint: {manifest.entrypoint!r} is not "
            "'file.py:function' or 'package.module:function'"
        ) from None
    if _is_file_entry(target):
        file = (manifest.source_path.parent / target).resolve()
        if not file.is_file():
            raise ModelSourceError(
                f"{_where(manifest)}: model.entrypoint: file {file} does not exist",
                hint="paths are relative to the manifest's directory",
            )
        # The entry file may import siblings: hash its whole directory's sources.
        return _hash_tree(file.parent)
    module_name = target
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError) as exc:
        spec = None
        reason = f": {exc}"
    else:
        reason = ""
    if spec is None or spec.origin is None:
        raise ModelSourceError(
            f"{_where(manifest)}: model.entrypoint: module {module_name!r} cannot be found{reason}",
            hint="install the package into this environment or use 'file.py:function'",
        )
    origin = Path(spec.origin)
    if spec.submodule_search_locations:  # a package: hash the package directory
        return _hash_tree(origin.parent)
    return _hash_tree(origin.parent, only=origin)


def _user_frame(exc: BaseException) -> str:
    """The innermost frame of the failure, for 'raised at model.py:12' in messages."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno})"


def _load_file_module(file: Path, where: str) -> Any:
    name = "_trt_edge_model_" + hashlib.sha256(str(file).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ModelSourceError(f"{where}: model.entrypoint: cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(file.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ModelSourceError(
            f"{where}: model.entrypoint: importing {file} raised "
            f"{type(exc).__name__}: {exc}{_user_frame(exc)}"
        ) from exc
    finally:
        sys.path.remove(str(file.parent))
    return module


def load_model(manifest: ResolvedManifest) -> LoadedModel:
    """Import the entrypoint, call it, and check its forward() against `inputs` (or load
    the saved program)."""
    where = _where(manifest)
    if manifest.exported is not None:
        return _load_exported(manifest, where)
    assert manifest.entrypoint is not None
    target, fn_name = _split_entrypoint(manifest.entrypoint)
    if _is_file_entry(target):
        module = _load_file_module((manifest.source_path.parent / target).resolve(), where)
    else:
        try:
            module = importlib.import_module(target)
        except Exception as exc:
            raise ModelSourceError(
                f"{where}: model.entrypoint: importing {target!r} raised "
                f"{type(exc).__name__}: {exc}{_user_frame(exc)}"
            ) from exc
    fn = getattr(module, fn_name, None)
    if fn is None or not callable(fn):
        available = sorted(
            n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
        )
        raise ModelSourceError(
            f"{where}: model.entrypoint: {target} has no function {fn_name!r}",
            hint=f"callables defined there: {', '.join(available) or 'none'}",
        )
    try:
        model = fn()
    except Exception as exc:
        raise ModelSourceError(
            f"{where}: model.entrypoint: {manifest.entrypoint}() raised "
            f"{type(exc).__name__}: {exc}{_user_frame(exc)}"
        ) from exc
    import torch

    if not isinstance(model, torch.nn.Module):
        raise ModelSourceError(
            f"{where}: model.entrypoint: {manifest.entrypoint}() returned "
            f"{type(model).__name__}, not a torch.nn.Module",
            hint="return the model instance (in eval mode) from the entrypoint function",
        )
    _check_forward(model, manifest.inputs, where)
    return LoadedModel(module=model.eval(), exported=None)


def _check_forward(model: Any, inputs: tuple[TensorSpec, ...], where: str) -> None:
    """forward()'s positional parameters must take the manifest's inputs, in order."""
    names = [spec.name for spec in inputs]
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        return  # a builtin/compiled forward: torch.export will check the call
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    required = [p for p in positional if p.default is inspect.Parameter.empty]
    forward_names = [p.name for p in positional]
    if not len(required) <= len(names) <= len(positional):
        raise ModelSourceError(
            f"{where}: model.entrypoint: forward({', '.join(forward_names)}) takes "
            f"{len(required)}..{len(positional)} arguments but the manifest declares "
            f"{len(names)} inputs ({', '.join(names)})",
            hint="list one entry under `inputs:` per forward() argument, in argument order",
        )
    if forward_names[: len(names)] != names and sorted(forward_names[: len(names)]) == sorted(
        names
    ):
        raise ModelSourceError(
            f"{where}: inputs: the manifest orders inputs as ({', '.join(names)}) but "
            f"forward() takes ({', '.join(forward_names[: len(names)])})",
            hint="inputs are passed positionally: list them in forward()'s argument order",
        )


def _load_exported(manifest: ResolvedManifest, where: str) -> LoadedModel:
    import torch

    assert manifest.exported is not None
    try:
        program = torch.export.load(str(manifest.exported))
    except Exception as exc:
        raise ModelSourceError(
            f"{where}: model.exported: {manifest.exported} is not a loadable torch.export "
            f"program: {type(exc).__name__}: {exc}",
            hint="save it with torch.export.save(program, 'model.pt2')",
        ) from exc
    user_inputs = list(program.graph_signature.user_inputs)
    if len(user_inputs) != len(manifest.inputs):
        raise ModelSourceError(
            f"{where}: model.exported: the program takes {len(user_inputs)} inputs but the "
            f"manifest declares {len(manifest.inputs)} "
            f"({', '.join(s.name for s in manifest.inputs)})"
        )
    return LoadedModel(module=program.module(), exported=program)
