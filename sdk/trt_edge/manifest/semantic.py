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
from typing import Any, TypeGuard

from trt_edge.manifest.diagnostics import Diagnostic, Severity, Stage
from trt_edge.manifest.huggingface import (
    BATCH,
    FILLED,
    FUSED,
    SEQ,
    FolderFacts,
    FolderProblem,
    describe_inputs,
    implied_inputs,
    read_folder,
)
from trt_edge.manifest.locations import JsonPath, LocationIndex, format_path
from trt_edge.manifest.quantization import GROUP_MULTIPLE, refusals
from trt_edge.manifest.requirements import RequirementLineError, parse_requirement
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
MODEL_SOURCES = ("entrypoint", "exported", "huggingface")


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class SemanticChecker:
    """Runs every cross-field check over one parsed document, collecting diagnostics.

    A plain class, not a dataclass: generating dataclass methods costs start-up time.
    """

    def __init__(
        self,
        data: dict[str, Any],
        locations: LocationIndex,
        manifest_dir: Path,
        catalog: TargetCatalog,
    ) -> None:
        self.data = data
        self.locations = locations
        self.manifest_dir = manifest_dir
        self.catalog = catalog
        self.diagnostics: list[Diagnostic] = []
        # False when some input's shape could not be read: "unknown symbol" would then
        # be a guess, and the broken shape is already reported.
        self.inputs_complete = True
        # The model.huggingface folder's facts, once check_model has read them.
        self.folder: FolderFacts | None = None

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
            Diagnostic("", pos.line, pos.col, severity, format_path(path), message, stage)
        )

    def section(self, key: str) -> Any:
        return self.data.get(key)

    # ---- the checks --------------------------------------------------------
    def run(self) -> list[Diagnostic]:
        self.check_model()
        self.check_requirements()
        symbols = self.check_inputs()
        profile_names = self.check_profiles(symbols)
        self.check_cache_reach()
        self.check_runtime(profile_names)
        self.check_build()
        self.check_quantize()
        self.check_fused_attention()
        self.check_slots()
        return self.diagnostics

    def slots(self) -> int:
        """`runtime.slots` when it is a valid count (the schema step reports one that is not)."""
        runtime = self.section("runtime")
        value = runtime.get("slots", 1) if isinstance(runtime, dict) else 1
        return value if _is_int(value) and value >= 1 else 1

    def huggingface(self) -> dict[str, Any] | None:
        """The `model.huggingface` mapping, when the model is given that way."""
        model = self.section("model")
        source = model.get("huggingface") if isinstance(model, dict) else None
        return source if isinstance(source, dict) else None

    def check_model(self) -> None:
        model = self.section("model")
        if not isinstance(model, dict):
            return
        given = [key for key in MODEL_SOURCES if model.get(key) is not None]
        if not given:
            self.report(
                ("model",),
                "give the model as `entrypoint: file.py:function` (or `package.module:function`)"
                ", as `exported: model.pt2` or as `huggingface: {path: ./folder, max_cache_len: "
                "512}`",
                at_key=True,
            )
        elif len(given) == 2:
            self.report(
                ("model", given[1]),
                f"give either `{given[0]}` or `{given[1]}`, not both: remove one",
                at_key=True,
            )
        elif len(given) > 2:
            self.report(
                ("model", given[1]),
                "give one of `entrypoint`, `exported` or `huggingface`, not several: keep one",
                at_key=True,
            )
        entrypoint, exported = model.get("entrypoint"), model.get("exported")
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
        self.check_huggingface()

    def check_huggingface(self) -> None:
        """The folder must be one the recipe can build: read with json only, never imported."""
        self.folder = None
        source = self.huggingface()
        if source is None:
            return
        path = source.get("path")
        if not isinstance(path, str) or not path:
            return  # the schema step reports it
        try:
            self.folder = read_folder(self.manifest_dir / path)
        except FolderProblem as exc:
            self.report(("model", "huggingface", "path"), exc.message)
            return
        if not self.folder.has_tokenizer:
            self.report(
                ("model", "huggingface", "path"),
                f"{self.folder.folder} has no tokenizer (tokenizer.json or tokenizer.model): "
                "the bundle will carry none and `trt-edge generate` will take --prompt-ids only; "
                "save the tokenizer into the folder with tokenizer.save_pretrained(folder)",
                severity="warning",
            )
        limit = self.folder.max_position_embeddings
        cache_len = source.get("max_cache_len")
        if limit is not None and _is_int(cache_len) and cache_len > limit:
            self.report(
                ("model", "huggingface", "max_cache_len"),
                f"max_cache_len {cache_len} is above the model's max_position_embeddings "
                f"{limit} ({self.folder.folder / 'config.json'}): positions past it were never "
                f"trained; use at most {limit}",
            )

    def check_cache_reach(self) -> None:
        """One call writes `seq` cache slots from `cache_position[0]`: the largest seq any
        profile accepts must fit into the cache from position 0."""
        source = self.huggingface()
        profiles = self.section("profiles")
        cache_len = source.get("max_cache_len") if source is not None else None
        if not _is_int(cache_len) or cache_len < 1 or not isinstance(profiles, list):
            return  # a max_cache_len below 1 is the schema step's to report
        reach: tuple[int, int, str] | None = None  # (max seq, profile index, name)
        takes_one_token = False
        for i, profile in enumerate(profiles):
            dims = profile.get("dims") if isinstance(profile, dict) else None
            value = dims.get(SEQ) if isinstance(dims, dict) else None
            top = value if _is_int(value) else value.get("max") if isinstance(value, dict) else None
            low = value if _is_int(value) else value.get("min") if isinstance(value, dict) else None
            if _is_int(top) and (reach is None or top > reach[0]):
                reach = (top, i, str(profile.get("name")))
            takes_one_token |= low == 1
        if reach is not None and not takes_one_token:
            self.report(
                ("profiles",),
                "no profile accepts seq 1, but decoding feeds one token per call: add one, "
                "e.g. - {name: decode, dims: {seq: 1}}",
                at_key=True,
            )
        if reach is not None and cache_len < reach[0]:
            top, index, name = reach
            self.report(
                ("model", "huggingface", "max_cache_len"),
                f"max_cache_len {cache_len} is below the largest profile's reach: profile "
                f"{name!r} (#{index}) accepts seq up to {top}, and one call writes seq positions "
                f"into the cache; raise max_cache_len to at least {top} or lower that max",
            )

    def check_requirements(self) -> None:
        model = self.section("model")
        lines = model.get("requirements") if isinstance(model, dict) else None
        if not isinstance(lines, list) or not lines:
            return

        seen: dict[str, int] = {}
        for i, line in enumerate(lines):
            if not isinstance(line, str):
                continue
            path: JsonPath = ("model", "requirements", i)
            try:
                requirement = parse_requirement(line)
            except RequirementLineError as exc:
                self.report(path, exc.message)
                continue
            if requirement.key in seen:
                self.report(
                    path,
                    f"{requirement.name!r} is already required by model.requirements"
                    f"[{seen[requirement.key]}]: give each package once",
                )
            else:
                seen[requirement.key] = i

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
        if self.huggingface() is not None:
            if inputs is not None:
                self.check_implied_inputs(inputs)
            if self.slots() > 1:
                return {BATCH: ("runtime", "slots"), SEQ: ("model", "huggingface")}
            return {SEQ: ("model", "huggingface")}
        if inputs is None:
            # Optional in the schema only because a huggingface model implies its inputs.
            if "inputs" in self.data:
                self.report(("inputs",), "expected a list, got nothing (null)", stage="schema")
            elif not self._misspelled("inputs"):
                self.report(("inputs",), "missing required key 'inputs'", stage="schema")
            self.inputs_complete = False
            return symbols
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

    def check_implied_inputs(self, inputs: Any) -> None:
        """A huggingface model's inputs are the recipe's; written out, they must be exactly it."""
        folder = self.folder
        source = self.huggingface() or {}
        cache_len = source.get("max_cache_len")
        if not isinstance(inputs, list) or folder is None or not _is_int(cache_len):
            return  # the schema step or the folder check reports what is wrong
        implied = implied_inputs(
            folder.vocab_size, cache_len, str(source.get("attention", FILLED)), self.slots()
        )
        expected = describe_inputs(implied)
        hint = f"a huggingface model's inputs are exactly: {expected}; or leave `inputs` out"
        if len(inputs) != len(implied):
            self.report(("inputs",), f"{len(inputs)} input(s) given; {hint}", at_key=True)
            return
        for i, (spec, want) in enumerate(zip(inputs, implied, strict=True)):
            if not isinstance(spec, dict):
                continue
            wanted = {
                "name": want.name,
                "dtype": want.dtype,
                "shape": list(want.shape),
                "values": list(want.values) if want.values else None,
            }
            for key, value in wanted.items():
                got = spec.get(key)
                if key == "values" and got is None:
                    continue  # values may be left out: they are implied
                if got != value:
                    shown = repr(value)
                    if key == "values" and want.values is not None:
                        shown = f"[{want.values[0]}, {want.values[1]})"
                    self.report(("inputs", i, key), f"{key} must be {shown} here; {hint}")
                    break

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
        self.check_generation(runtime.get("generation"))
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

    def check_generation(self, contract: Any) -> None:
        """`runtime.generation: tiny_llm` against the declared inputs: token ids `[1, seq]`,
        the start position `[1]` (both integers with `values`), then static caches."""
        if contract != "tiny_llm":
            return  # absent, or a value the schema step reports
        path: JsonPath = ("runtime", "generation")
        if self.huggingface() is not None:
            self.report(
                path,
                "a Hugging Face model declares its own generation contract (bundle.json llm); "
                "remove runtime.generation",
            )
            return
        inputs = self.section("inputs")
        if not isinstance(inputs, list) or not self.inputs_complete:
            return
        specs = [s for s in inputs if isinstance(s, dict)]
        if len(specs) < 3:
            self.report(
                path,
                f"tiny_llm needs the inputs token ids [1, seq], start position [1], then at "
                f"least one cache; the manifest declares {len(specs)} input(s)",
            )
            return
        roles = (("token ids", specs[0], 2), ("start position", specs[1], 1))
        for role, spec, rank in roles:
            shape = spec.get("shape")
            if (
                not isinstance(spec.get("dtype"), str)
                or spec.get("dtype") not in INTEGER_DTYPES
                or not isinstance(shape, list)
                or len(shape) != rank
                or shape[0] != 1
                or spec.get("values") is None
            ):
                wanted = "[1, seq]" if rank == 2 else "[1]"
                self.report(
                    path,
                    f"tiny_llm: input {spec.get('name')!r} must be the {role}: an integer dtype, "
                    f"shape {wanted} and values (the {'vocabulary' if rank == 2 else 'context'})",
                )
        for spec in specs[2:]:
            shape = spec.get("shape")
            if isinstance(shape, list) and any(isinstance(d, str) for d in shape):
                self.report(
                    path,
                    f"tiny_llm: cache input {spec.get('name')!r} has a symbolic shape; caches "
                    "are static (passed in and returned whole each call)",
                )

    def _misspelled(self, key: str) -> bool:
        """Whether the document has an unknown top-level key that looks like `key`."""
        others = [k for k in self.data if isinstance(k, str) and k != key]
        return bool(difflib.get_close_matches(key, others, n=1, cutoff=0.6))

    def _has_symbols(self) -> bool:
        if self.huggingface() is not None:
            return True
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

    def check_quantize(self) -> None:
        """A scheme the manifest's backend cannot run, at its field (auto: checked as the CPU
        backend it falls back to; TensorRT is checked again when the build picks it)."""

        build = self.section("build")
        quantize = build.get("quantize") if isinstance(build, dict) else None
        if not isinstance(quantize, dict):
            return
        backend = build.get("backend", "auto")
        linear, embedding = quantize.get("linear"), quantize.get("embedding")
        checked = "xnnpack" if backend == "auto" else str(backend)
        for name, why in refusals(checked, linear, embedding):
            self.report(("build", "quantize", name), why, stage="compatibility")
        group = quantize.get("group_size")
        if _is_int(group) and group % GROUP_MULTIPLE != 0:
            self.report(
                ("build", "quantize", "group_size"),
                f"group_size {group} is not a multiple of {GROUP_MULTIPLE} (XNNPACK's grouped "
                "kernels); use 32, 64, 128 or 256",
            )

    def check_fused_attention(self) -> None:
        """`attention: fused` needs an ExecuTorch CPU backend (its operator is not a TensorRT
        layer; backend auto is checked again when the build picks TensorRT) and a model whose
        attention the operator computes: causal over every earlier position, no softcap."""
        source = self.huggingface()
        if source is None or source.get("attention") != FUSED:
            return
        path: JsonPath = ("model", "huggingface", "attention")
        build = self.section("build")
        backend = build.get("backend", "auto") if isinstance(build, dict) else "auto"
        if backend == "tensorrt":
            self.report(
                path,
                "attention fused runs on ExecuTorch's CPU backends (xnnpack, portable), not "
                "TensorRT: use attention: filled with backend tensorrt",
                stage="compatibility",
            )
        if self.folder is not None and self.folder.fused_obstacle is not None:
            self.report(
                path,
                f"attention fused cannot build {self.folder.folder}: "
                f"{self.folder.fused_obstacle}; use attention: filled",
                stage="compatibility",
            )

    def check_slots(self) -> None:
        """`runtime.slots` > 1: a Hugging Face causal LM (the recipe writes the slot caches) on
        an ExecuTorch CPU backend, attention that reads each row's own cache (not fused), and
        profiles whose `batch` a runner can always fill: from 1 (one conversation) to at most
        the slots (a call's rows are distinct conversations)."""
        slots = self.slots()
        if slots == 1:
            return
        path: JsonPath = ("runtime", "slots")
        source = self.huggingface()
        if source is None:
            self.report(
                path,
                f"slots {slots} needs a model.huggingface causal LM (each slot is a KV cache the "
                "recipe builds into the program): remove runtime.slots",
            )
            return
        attention = source.get("attention", FILLED)
        if attention in (FUSED, FILLED):
            # fused: its operator reads one conversation's cache. filled: three symbolic dims
            # (batch, seq, window) leave views outside XNNPACK and its partitioner then finds
            # a dependency cycle (measured on the minis).
            self.report(
                ("model", "huggingface", "attention")
                if "attention" in source
                else ("model", "huggingface"),
                f"attention {attention} serves one conversation per program, but runtime.slots "
                f"is {slots}: set attention: all to serve several conversations at once",
                stage="compatibility",
            )
        build = self.section("build")
        if isinstance(build, dict) and build.get("backend") == "tensorrt":
            self.report(
                path,
                f"slots {slots} are built for ExecuTorch's CPU backends (xnnpack, portable) "
                "only, not yet for TensorRT: use backend xnnpack or slots 1",
                stage="compatibility",
            )
        profiles = self.section("profiles")
        for i, profile in enumerate(profiles if isinstance(profiles, list) else []):
            dims = profile.get("dims") if isinstance(profile, dict) else None
            value = dims.get(BATCH) if isinstance(dims, dict) else None
            lo, hi = _extents(value)
            where: JsonPath = ("profiles", i, "dims", BATCH)
            if hi is not None and hi > slots:
                self.report(
                    where,
                    f"batch max {hi} exceeds runtime.slots {slots}: a call's rows are distinct "
                    f"conversations; lower it to at most {slots} or raise runtime.slots",
                )
            if lo is not None and lo != 1:
                self.report(
                    where,
                    f"batch min {lo}: a runner must be able to advance one conversation alone; "
                    "give batch from 1",
                )


def _extents(value: Any) -> tuple[int | None, int | None]:
    """(min, max) of a profile dim written as an extent or a range; None where unreadable."""
    if _is_int(value):
        return value, value
    if isinstance(value, dict):
        lo, hi = value.get("min"), value.get("max")
        return (lo if _is_int(lo) else None), (hi if _is_int(hi) else None)
    return None, None


def check_semantics(
    data: Any,
    locations: LocationIndex,
    manifest_dir: Path,
    catalog: TargetCatalog,
) -> list[Diagnostic]:
    if not isinstance(data, dict):
        return []
    return SemanticChecker(data, locations, manifest_dir, catalog).run()
