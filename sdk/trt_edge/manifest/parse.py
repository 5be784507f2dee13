"""Step 1, parse: YAML text → plain data plus a `LocationIndex`.

PyYAML's composer gives a node tree whose nodes carry marks (line, column); we
walk that tree ourselves instead of calling `yaml.safe_load`, so that every key
and value keeps its position, duplicate keys are caught (PyYAML silently keeps
the last one) and alias bombs or recursive aliases cannot hang the loader.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from trt_edge.manifest.diagnostics import Diagnostic
from trt_edge.manifest.locations import JsonPath, LocationIndex, Position, format_path
from trt_edge.manifest.source import ManifestSource

# A fully expanded document larger than this is refused (guards against alias bombs).
MAX_NODES = 100_000

_SCHEMA_COMMENT = re.compile(r"^#\s*yaml-language-server:\s*\$schema=(\S+)\s*$")

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Parsed:
    """The parse step's output: `data` is None when the text is not usable YAML."""

    def __init__(
        self, data: Any, locations: LocationIndex, diagnostics: list[Diagnostic] | None = None
    ) -> None:
        self.data = data
        self.locations = locations
        self.diagnostics = diagnostics if diagnostics is not None else []


class _TooLarge(Exception):
    pass


class _Walker:
    """Turns composed nodes into Python values, recording positions and duplicate keys."""

    def __init__(self, loader: yaml.SafeLoader) -> None:
        self.loader = loader
        self.locations = LocationIndex()
        self.diagnostics: list[Diagnostic] = []
        self.count = 0
        self.stack: set[int] = set()

    def error(self, pos: Position, path: JsonPath, message: str) -> None:
        self.diagnostics.append(
            Diagnostic("", pos.line, pos.col, "error", format_path(path), message, "parse")
        )

    @staticmethod
    def pos(node: yaml.Node) -> Position:
        return Position(node.start_mark.line + 1, node.start_mark.column + 1)

    def scalar(self, node: yaml.ScalarNode, path: JsonPath) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            self.error(self.pos(node), path, f"cannot read this value: {problem}")
            return None

    def walk(self, node: yaml.Node, path: JsonPath) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise _TooLarge
        self.locations.values[path] = self.pos(node)
        if id(node) in self.stack:
            self.error(self.pos(node), path, "recursive alias; write the value out instead")
            return None
        if isinstance(node, yaml.ScalarNode):
            self.locations.raw[path] = node.value
            return self.scalar(node, path)
        self.stack.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.walk(item, (*path, i)) for i, item in enumerate(node.value)]
            if isinstance(node, yaml.MappingNode):
                return self.mapping(node, path)
        finally:
            self.stack.discard(id(node))
        self.error(self.pos(node), path, f"unsupported YAML node {node.tag}")
        return None

    def mapping(self, node: yaml.MappingNode, path: JsonPath) -> dict[Any, Any]:
        try:
            self.loader.flatten_mapping(node)  # resolves `<<` merge keys
        except yaml.YAMLError as exc:
            self.error(self.pos(node), path, f"cannot merge keys: {getattr(exc, 'problem', exc)}")
            return {}
        out: dict[Any, Any] = {}
        first_seen: dict[Any, Position] = {}
        for key_node, value_node in node.value:
            key_pos = self.pos(key_node)
            if not isinstance(key_node, yaml.ScalarNode):
                self.error(key_pos, path, "keys must be plain names, not lists or mappings")
                continue
            key = self.scalar(key_node, path)
            if key is None and key_node.value in ("", "~", "null"):
                self.error(key_pos, path, "empty key")
                continue
            try:
                hash(key)
            except TypeError:
                self.error(key_pos, path, "keys must be plain names")
                continue
            child: JsonPath = (*path, key)
            if key in first_seen:
                first = first_seen[key]
                self.error(
                    key_pos,
                    child,
                    f"duplicate key {key!r} (first at line {first.line}); "
                    "YAML keeps only one of them: remove or rename one",
                )
                continue
            first_seen[key] = key_pos
            self.locations.keys[child] = key_pos
            out[key] = self.walk(value_node, child)
        return out


def _yaml_error(exc: yaml.YAMLError, text: str) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    lines = text.splitlines()
    if 1 <= line <= len(lines) and lines[line - 1][col - 1 : col] == "\t":
        message = "not valid YAML: a tab character; YAML indentation must use spaces, not tabs"
        return Diagnostic("", line, col, "error", "", message, "parse")
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        message = f"{problem} ({context})" if context else str(problem)
    else:
        message = str(exc).splitlines()[0]
    return Diagnostic("", line, col, "error", "", f"not valid YAML: {message}", "parse")


def schema_comment_diagnostics(source: ManifestSource) -> list[Diagnostic]:
    """Warn when the `# yaml-language-server: $schema=...` line points at no file.

    The line is what makes editors complete and check the manifest; a wrong relative
    path silently turns that off, so it is worth a warning.
    """
    out: list[Diagnostic] = []
    manifest_dir = source.directory
    for lineno, line in enumerate((source.text or "").splitlines()[:20], start=1):
        match = _SCHEMA_COMMENT.match(line.strip())
        if not match:
            continue
        ref = match.group(1)
        if "://" in ref:
            continue
        try:
            target = (manifest_dir / ref).resolve()
            found = target.is_file()
        except (OSError, ValueError):  # a NUL byte or an over-long name: no such file
            target, found = manifest_dir / ref, False
        if not found:
            col = line.index(ref) + 1
            out.append(
                Diagnostic(
                    "",
                    lineno,
                    col,
                    "warning",
                    "$schema",
                    f"schema file {ref!r} not found (resolved to {target}); editors will not "
                    "check this manifest: point it at manifests/schema.json relative to this file",
                    "parse",
                )
            )
    return out


def parse_source(source: ManifestSource) -> Parsed:
    """Parse the manifest's YAML into data + positions; YAML errors become diagnostics, never
    exceptions."""
    text = source.text or ""
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            return Parsed(None, LocationIndex(), [_yaml_error(exc, text)])
        if node is None:
            message = "the manifest is empty; start from examples/tiny_llm/manifest.yaml"
            diag = Diagnostic("", 1, 1, "error", "", message, "parse")
            return Parsed(None, LocationIndex(), [diag])
        walker = _Walker(loader)
        try:
            data = walker.walk(node, ())
        except _TooLarge:
            message = (
                f"the document expands to more than {MAX_NODES} values (alias expansion?); "
                "write a smaller manifest"
            )
            diag = Diagnostic("", 1, 1, "error", "", message, "parse")
            return Parsed(None, LocationIndex(), [diag])
        return Parsed(data, walker.locations, walker.diagnostics)
    finally:
        loader.dispose()
