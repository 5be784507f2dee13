"""Map a manifest key path back to `FILE:LINE:COL`, so build errors point into the YAML.

The resolved manifest carries no source marks (later stages never look at YAML),
but a build error such as "the entrypoint function is missing" is only useful
when it names the line to fix. PyYAML's node tree keeps the marks; we walk it.
"""

from __future__ import annotations

from pathlib import Path

import yaml


def manifest_location(path: Path, keys: tuple[str | int, ...]) -> str:
    """`FILE:LINE:COL` of the value at `keys` (or the deepest ancestor found)."""
    try:
        node: yaml.Node | None = yaml.compose(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return f"{path}"
    best = node
    for key in keys:
        nxt: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == key:
                    nxt = v
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            nxt = node.value[key]
        if nxt is None:
            break
        node = best = nxt
    if best is None:
        return f"{path}"
    mark = best.start_mark
    return f"{path}:{mark.line + 1}:{mark.column + 1}"
