"""An image's Dockerfile as the engine builds it: the shared fragments written in.

Every image shares most of its recipe (the hashed wheelhouse install, CA
certificates, the project's packages, sshd on device images, the identity labels).
Those parts live once, in `images/_fragments/NAME.Dockerfile`; an image's own
`Dockerfile` keeps what differs and names a fragment with a line

    # trt-edge-fragment: NAME

which `expand` replaces with the fragment's text (fragments may name fragments).
`{{image}}`, `{{role}}`, `{{title}}` and `{{description}}` are then replaced with the
image's values from `image.json`. The daemons here use the legacy builder, which has
no `INCLUDE`, so the expansion happens on the host and the expanded text is what the
build context carries (`trt-edge images dockerfile NAME` prints it).

A fragment line `# context: FILE` names a file of `images/_fragments/` the fragment
copies from the build context; `Expanded.context_files` lists them for the context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from trt_edge.containers.catalog import ImageSpec
from trt_edge.containers.errors import DockerfileError

FRAGMENTS_DIR = "_fragments"
FRAGMENT_SUFFIX = ".Dockerfile"
_FRAGMENT_LINE = re.compile(r"^#\s*trt-edge-fragment:\s*(\S+)\s*$")
_CONTEXT_LINE = re.compile(r"^#\s*context:\s*(\S+)\s*$")
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
_MAX_DEPTH = 8  # fragments naming fragments: deeper than this is a cycle


@dataclass(frozen=True)
class Expanded:
    """The Dockerfile the engine builds, and what it was made from."""

    text: str
    fragments: tuple[str, ...]  # every fragment written in, in order of first use
    context_files: tuple[Path, ...]  # files of _fragments/ the context must carry


def fragments_dir(spec: ImageSpec) -> Path:
    """`images/_fragments/`, beside the image folders."""
    return spec.folder.parent / FRAGMENTS_DIR


def fragment_names(folder: Path) -> tuple[str, ...]:
    if not folder.is_dir():
        return ()
    return tuple(
        sorted(p.name[: -len(FRAGMENT_SUFFIX)] for p in folder.glob("*" + FRAGMENT_SUFFIX))
    )


def _values(spec: ImageSpec) -> dict[str, str]:
    """Placeholder values; quoted for a LABEL's double-quoted string."""
    raw = {
        "image": spec.name,
        "role": spec.role,
        "title": spec.title,
        "description": spec.description,
    }
    return {key: value.replace("\\", "\\\\").replace('"', '\\"') for key, value in raw.items()}


class _Expander:
    def __init__(self, spec: ImageSpec) -> None:
        self.folder = fragments_dir(spec)
        self.used: list[str] = []
        self.files: list[Path] = []

    def fragment(self, name: str, where: str, depth: int) -> str:
        path = self.folder / f"{name}{FRAGMENT_SUFFIX}"
        if not path.is_file():
            known = ", ".join(fragment_names(self.folder)) or "(none)"
            raise DockerfileError(
                f"{where}: unknown Dockerfile fragment {name!r}: no {path}; known fragments: "
                f"{known}"
            )
        if depth >= _MAX_DEPTH:
            raise DockerfileError(
                f"{where}: fragment {name!r} nests more than {_MAX_DEPTH} deep: "
                "do the fragments name each other in a cycle?"
            )
        if name not in self.used:
            self.used.append(name)
        body = self.text(path, depth + 1)
        return f"# >>> fragment {name} (images/{FRAGMENTS_DIR}/{path.name})\n{body}# <<< {name}\n"

    def text(self, path: Path, depth: int) -> str:
        out: list[str] = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            where = f"{path}:{number}"
            named = _FRAGMENT_LINE.match(line)
            if named is not None:
                out.append(self.fragment(named.group(1), where, depth))
                continue
            needed = _CONTEXT_LINE.match(line)
            if needed is not None:
                file = self.folder / needed.group(1)
                if not file.is_file():
                    raise DockerfileError(f"{where}: context file {file} does not exist")
                if file not in self.files:
                    self.files.append(file)
            out.append(line + "\n")
        return "".join(out)


def expand(spec: ImageSpec) -> Expanded:
    """The expanded Dockerfile of `spec`; a `DockerfileError` naming file:line otherwise."""
    expander = _Expander(spec)
    text = expander.text(spec.dockerfile, 0)
    values = _values(spec)

    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise DockerfileError(
                f"{spec.dockerfile} (expanded): unknown placeholder {{{{{key}}}}}; "
                f"known: {', '.join(sorted(values))}"
            )
        return values[key]

    header = (
        f"# Expanded from images/{spec.name}/Dockerfile and images/{FRAGMENTS_DIR}/ by "
        "trt-edge (trt_edge.containers.dockerfile); edit those, not this.\n"
    )
    return Expanded(
        text=header + _PLACEHOLDER.sub(substitute, text),
        fragments=tuple(expander.used),
        context_files=tuple(expander.files),
    )
