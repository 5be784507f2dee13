"""Step 3, semantic checks: rules that span fields (symbols, ranges, phases, files, targets).

These run on the parsed data even when the schema step found errors elsewhere,
so a user sees every problem in one pass. Every check therefore guards its own
types and silently skips values of the wrong type: the schema step has already
reported those, and one mistake must produce one message.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from trt_edge.manifest.diagnostics import Diagnostic, Severity, Stage
from trt_edge.manifest.locations import JsonPath, LocationIndex, format_path
from trt_edge.manifest.vocabulary import INTEGER_DTYPES, SYMBOL_PATTERN
from trt_edge.targets.catalog import TargetCatalog, did_you_mean

_SYMBOL = re.compile(SYMBOL_PATTERN)
_ENTRYPOINT = re.compile(r"^(?P<source>[^:]+):(?P<function>[A-Za-z_][A-Za-z0-9_]*)$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")

# [low, high) limits per integer dtype, so `values` cannot promise what the dtype cannot hold.
_DTYPE_LIMITS = {
    "int8": (-(2**7), 2**7),
    "uint8": (0, 2**8),
    "int16": (-(2**15), 2**15),
    "int32": (-(2**31), 2**31),
    "int64": (-(2**63), 2**63),
}


_RANGE_KEYS = ("min", "opt", "max")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class SemanticChecker:
    """Runs every cross-field check over one parsed document, collecting diagnostics.

    A plain class, not a dataclass: generating dataclass methods costs start-up time.
    """

    def __init__(
        self,
        data: dict[str, Any],
        locations: LocationIndex,
        file: str,
        manifest_dir: Path,
        catalog: TargetCatalog,
    ) -> None:
        self.data = data
        self.locations = locations
        self.file = file
        self.manifest_dir = manifest_dir
        self.catalog = catalog
        self.diagnostics: list[Diagnostic] = []
        # False when some input's shape could not be read: "unknown symbol" would then
        # be a guess, and the broken shape is already reported.
        self.inputs_complete = True

    # ---- reporting -------------------------------------------------------
    def report(
        self,
        path: JsonPath,
        message: str,
        *,
        severity: Severity = "error",
        at_key: bool = False,
        stage: Stage = "semantic",
    ) -> None:
        pos = self.locations.key(path) if at_key else self.locations.value(path)
        self.diagnostics.append(
            Diagnostic(self.file, pos.line, pos.col, severity, format_path(path), message, stage)
        )

    def section(self, key: str) -> Any:
        return self.data.get(key)

    # ---- the checks --------------------------------------------------------
    def run(self) -> list[Diagnostic]:
        self.check_model()
        symbols = self.check_inputs()
        profile_names = self.check_profiles(symbols)
        self.check_runtime(profile_names)
        self.check_build()
        return self.diagnostics

    def check_model(self) -> None:
        model = self.section("model")
        if not isinstance(model, dict):
            return
        entrypoint, exported = model.get("entrypoint"), model.get("exported")
        if entrypoint is None and exported is None:
            self.report(
                ("model",),
                "give the model as `entrypoint: file.py:function` (or `package.module:function`)"
                " or as `exported: model.pt2`",
                at_key=True,
            )
        elif entrypoint is not None and exported is not None:
            self.report(
                ("model", "exported"),
                "give either `entrypoint` or `exported`, not both: remove one",
                at_key=True,
            )
        if isinstance(entrypoint, str):
            self.check_entrypoint(entrypoint)
        if isinstance(exported, str):
            target = self.manifest_dir / exported
            if not target.is_file():
                self.report(
                    ("model", "exported"),
                    f"file {exported!r} not found (looked for {target}); paths are relative "
                    "to the manifest",
                )

    def check_entrypoint(self, entrypoint: str) -> None:
        path = ("model", "entrypoint")
        match = _ENTRYPOINT.match(entrypoint.strip())
        if match is None:
            self.report(
                path,
                f"{entrypoint!r} is not 'file.py:function' or 'package.module:function' "
                "(e.g. model.py:build_model)",
            )
            return
        source = match.group("source")
        if source.endswith(".py") or "/" in source:
            target = self.manifest_dir / source
            if not target.is_file():
                self.report(
                    path,
                    f"file {source!r} not found (looked for {target}); the entrypoint file is "
                    "relative to the manifest",
                )
        elif not _MODULE.match(source):
            self.report(path, f"{source!r} is neither a .py file nor a dotted module name")

    def check_inputs(self) -> dict[str, JsonPath]:
        """Checks each input; returns the symbols used in shapes with where each first appears."""
        symbols: dict[str, JsonPath] = {}
        inputs = self.section("inputs")
        self.inputs_complete = isinstance(inputs, list) and all(
            isinstance(spec, dict) and isinstance(spec.get("shape"), list) for spec in inputs
        )
        if not isinstance(inputs, list):
            return symbols
        seen: dict[str, int] = {}
        for i, spec in enumerate(inputs):
            if not isinstance(spec, dict):
                continue
            name = spec.get("name")
            if isinstance(name, str):
                self.check_unique("inputs", i, name, seen, "input name")
                if not _SYMBOL.match(name):
                    self.report(
                        ("inputs", i, "name"),
                        f"input name {name!r} must be a Python identifier (forward() argument)",
                    )
            shape = spec.get("shape")
            if isinstance(shape, list):
                for j, dim in enumerate(shape):
                    dpath: JsonPath = ("inputs", i, "shape", j)
                    if _is_int(dim) and dim < 1:
                        self.report(dpath, f"static extent {dim} must be >= 1")
                    elif isinstance(dim, str):
                        if not _SYMBOL.match(dim):
                            self.report(
                                dpath,
                                f"symbol {dim!r} must be a name like seq or batch "
                                "(letters, digits, '_')",
                            )
                        else:
                            symbols.setdefault(dim, dpath)
            self.check_values(i, spec)
        return symbols

    def check_unique(
        self, section: str, i: int, name: str, seen: dict[str, int], what: str, why: str = ""
    ) -> None:
        """Report `section[i].name` when an earlier entry already took `name`; else note it."""
        if name in seen:
            self.report(
                (section, i, "name"),
                f"{what} {name!r} is already used by {section}[{seen[name]}]; "
                f"names must be unique{why}",
            )
        else:
            seen[name] = i

    def check_values(self, i: int, spec: dict[str, Any]) -> None:
        values = spec.get("values")
        dtype = spec.get("dtype")
        if not isinstance(values, list) or len(values) != 2:
            return
        path: JsonPath = ("inputs", i, "values")
        if isinstance(dtype, str) and dtype not in INTEGER_DTYPES:
            self.report(
                path,
                f"`values` is only for integer inputs; {spec.get('name')!r} is {dtype}: "
                "remove `values` or use an integer dtype",
            )
            return
        low, high = values
        if not (_is_int(low) and _is_int(high)):
            return
        if low >= high:
            self.report(
                path,
                f"values [{low}, {high}) is empty: need low < high (high is exclusive)",
            )
        elif isinstance(dtype, str) and dtype in _DTYPE_LIMITS:
            lo_limit, hi_limit = _DTYPE_LIMITS[dtype]
            if low < lo_limit or high > hi_limit:
                self.report(
                    path,
                    f"values [{low}, {high}) does not fit {dtype} ([{lo_limit}, {hi_limit}))",
                )

    def check_profiles(self, symbols: dict[str, JsonPath]) -> list[str | None]:
        """Checks dims against the symbols; returns profile names by index (None if unnamed)."""
        profiles = self.section("profiles")
        names: list[str | None] = []
        if profiles is None and self._misspelled("profiles"):
            return names  # the schema step reported the misspelt key; don't pile on
        if profiles is None or (isinstance(profiles, list) and not profiles):
            if symbols:
                listed = ", ".join(symbols)
                first = next(iter(symbols))
                where: JsonPath = (
                    ("profiles",) if profiles is not None else symbols[next(iter(symbols))]
                )
                self.report(
                    where,
                    f"inputs use symbol(s) {listed} but no profile gives their ranges: add "
                    "`profiles:` with at least one entry, e.g. "
                    f"- {{name: default, dims: {{{first}: {{min: 1, opt: 8, max: 64}}}}}}",
                    at_key=profiles is not None,
                )
            return names
        if not isinstance(profiles, list):
            return names
        seen: dict[str, int] = {}
        for i, profile in enumerate(profiles):
            if not isinstance(profile, dict):
                names.append(None)
                continue
            name = profile.get("name")
            names.append(name if isinstance(name, str) else None)
            if isinstance(name, str):
                self.check_unique(
                    "profiles", i, name, seen, "profile name", " (phases refer to them)"
                )
                if name == "auto":
                    self.report(
                        ("profiles", i, "name"),
                        "'auto' is reserved for the runtime policy: rename this profile",
                    )
            dims = profile.get("dims", {})
            if not isinstance(dims, dict):
                continue
            label = f"profile {name!r}" if isinstance(name, str) else f"profiles[{i}]"
            for symbol in dims:
                if self.inputs_complete and isinstance(symbol, str) and symbol not in symbols:
                    hint = did_you_mean(symbol, list(symbols))
                    known = ", ".join(symbols) or "none (every input shape is static)"
                    self.report(
                        ("profiles", i, "dims", symbol),
                        f"unknown symbol {symbol!r}{hint}; symbols used by the inputs: {known}",
                        at_key=True,
                    )
            for symbol, used_at in symbols.items():
                if symbol not in dims:
                    in_dims = "dims" in profile
                    where_key: JsonPath = ("profiles", i, "dims") if in_dims else ("profiles", i)
                    self.report(
                        where_key,
                        f"{label} does not give symbol {symbol!r} (used at "
                        f"{format_path(used_at)}): every profile must give every symbol",
                        at_key=in_dims,
                    )
            for symbol, value in dims.items():
                self.check_range(("profiles", i, "dims", symbol), value)
        return names

    def check_range(self, path: JsonPath, value: Any) -> None:
        if _is_int(value):
            if value < 1:
                self.report(path, f"extent {value} must be >= 1")
            return
        if not isinstance(value, dict):
            return
        lo, opt, hi = (v if _is_int(v) else None for v in (value.get(k) for k in _RANGE_KEYS))
        if lo is not None and lo < 1:
            self.report((*path, "min"), f"min {lo} must be >= 1")
        if lo is not None and hi is not None and lo > hi:
            self.report((*path, "max"), f"max {hi} is below min {lo}: need min <= opt <= max")
            return
        if lo is not None and opt is not None and opt < lo:
            self.report((*path, "opt"), f"opt {opt} is below min {lo}: need min <= opt <= max")
        if hi is not None and opt is not None and opt > hi:
            self.report((*path, "opt"), f"opt {opt} is above max {hi}: need min <= opt <= max")

    def check_runtime(self, profile_names: list[str | None]) -> None:
        runtime = self.section("runtime")
        if not isinstance(runtime, dict):
            return
        policy = runtime.get("policy")
        phases = runtime.get("phases")
        if policy not in ("pinned", "auto"):
            return
        count = len(profile_names) if profile_names else (0 if self._has_symbols() else 1)
        if policy == "pinned" and (phases is None or phases == {}):
            self.report(
                ("runtime", "phases") if phases is not None else ("runtime", "policy"),
                "policy pinned needs a phase map, e.g. phases: {prefill: prefill, decode: decode};"
                " or use policy auto",
                at_key=phases is not None,
            )
            return
        if not isinstance(phases, dict):
            return
        used: set[int] = set()
        all_resolved = True
        for phase, ref in phases.items():
            path: JsonPath = ("runtime", "phases", phase)
            if not isinstance(phase, str) or not phase:
                all_resolved = False
                if phase == "":
                    self.report(path, "phase names must not be empty", at_key=True)
                continue  # a non-text key is the schema step's to report
            index = self.resolve_ref(path, ref, policy, profile_names, count)
            if index is not None:
                used.add(index)
            elif ref != "auto":
                all_resolved = False
        if policy == "pinned" and profile_names and all_resolved:
            for i, name in enumerate(profile_names):
                if i not in used:
                    label = f"{name!r} (#{i})" if name else f"#{i}"
                    self.report(
                        ("profiles", i),
                        f"profile {label} is not used by any phase: under policy pinned it ships "
                        "but is never selected",
                        severity="warning",
                    )

    def _misspelled(self, key: str) -> bool:
        """Whether the document has an unknown top-level key that looks like `key`."""
        others = [k for k in self.data if isinstance(k, str) and k != key]
        return bool(difflib.get_close_matches(key, others, n=1, cutoff=0.6))

    def _has_symbols(self) -> bool:
        inputs = self.section("inputs")
        if not isinstance(inputs, list):
            return False
        return any(
            isinstance(spec, dict)
            and isinstance(spec.get("shape"), list)
            and any(isinstance(d, str) for d in spec["shape"])
            for spec in inputs
        )

    def resolve_ref(
        self,
        path: JsonPath,
        ref: Any,
        policy: str,
        profile_names: list[str | None],
        count: int,
    ) -> int | None:
        if ref == "auto":
            if policy == "pinned":
                self.report(
                    path,
                    "'auto' is only allowed under policy auto: name a profile here, or set "
                    "runtime.policy: auto",
                )
            return None
        if _is_int(ref):
            if ref < 0:
                self.report(
                    path,
                    f"negative profile index {ref} is not allowed: use 0..{max(count - 1, 0)} "
                    "or a profile name",
                )
                return None
            if ref >= count:
                self.report(
                    path,
                    f"profile index {ref} is out of range: there are {count} profile(s) "
                    f"(0..{max(count - 1, 0)})",
                )
                return None
            return int(ref)
        if isinstance(ref, str):
            if not isinstance(self.section("profiles"), list) or (
                not profile_names and self._has_symbols()
            ):
                return None  # the profiles problem is reported already; names can't resolve
            known = list(dict.fromkeys(n for n in profile_names if n))
            if ref in known:
                return (
                    known.index(ref) if profile_names.count(ref) == 1 else profile_names.index(ref)
                )
            hint = did_you_mean(ref, known)
            listed = ", ".join(known) if known else "none"
            extra = " or 'auto'" if policy == "auto" else ""
            self.report(
                path,
                f"unknown profile {ref!r}{hint}; use a profile name ({listed}), an index{extra}",
            )
        return None

    def check_build(self) -> None:
        build = self.section("build")
        if not isinstance(build, dict):
            return
        targets = build.get("targets")
        backend = build.get("backend", "auto")
        if not isinstance(targets, list):
            return
        if not targets:
            self.report(
                ("build", "targets"),
                "at least one target is needed, e.g. [cpu-x86_64] or [jetson-orin-nano-jp6]",
                stage="compatibility",
            )
        seen: set[str] = set()
        for i, target_id in enumerate(targets):
            if not isinstance(target_id, str):
                continue
            path: JsonPath = ("build", "targets", i)
            if target_id in seen:
                self.report(path, f"target {target_id!r} is listed twice", severity="warning")
                continue
            seen.add(target_id)
            if target_id not in self.catalog:
                hint = did_you_mean(target_id, list(self.catalog.ids()))
                self.report(
                    path,
                    f"unknown target {target_id!r}{hint}; known targets: "
                    f"{', '.join(self.catalog.ids())}",
                    stage="compatibility",
                )
                continue
            target = self.catalog.get(target_id)
            if backend == "tensorrt" and not target.requires_tensorrt:
                self.report(
                    path,
                    f"backend tensorrt needs a GPU target with TensorRT; {target_id} has none: "
                    "use backend auto (or xnnpack/portable), or a jetson-*/x86-* target",
                    stage="compatibility",
                )
            elif backend in ("xnnpack", "portable") and target.requires_tensorrt:
                self.report(
                    path,
                    f"backend {backend} runs on the CPU only; the GPU of {target_id} stays unused"
                    " (use backend auto or tensorrt to build TensorRT delegates)",
                    severity="warning",
                    stage="compatibility",
                )


def check_semantics(
    data: Any,
    locations: LocationIndex,
    file: str,
    manifest_dir: Path,
    catalog: TargetCatalog,
) -> list[Diagnostic]:
    if not isinstance(data, dict):
        return []
    return SemanticChecker(data, locations, file, manifest_dir, catalog).run()
