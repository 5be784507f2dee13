"""A local build's check of `model.requirements`: each installed here, at a version it allows.

Run in the `load` stage, before anything slow: a build with the wrong transformers
would export something other than what the manifest pinned, or fail deep inside the
export. Versions come from `importlib.metadata` (what pip installed), never from
importing the package. Every unmet requirement is reported at once, with the
`pip install` line that fixes them all.
"""

from __future__ import annotations

import importlib.metadata
import shlex

from trt_edge.manifest.requirements import parse_requirement
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import BadInputError


class RequirementsNotMetError(BadInputError):
    """A declared requirement is missing here or installed at a version it excludes."""


def installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_requirements(manifest: ResolvedManifest) -> dict[str, str]:
    """{requirement line: installed version} for the lines that apply here; raises
    `RequirementsNotMetError` naming every line that is not met."""
    met: dict[str, str] = {}
    problems: list[str] = []
    fix: list[str] = []
    for i, line in enumerate(manifest.requirements):
        requirement = parse_requirement(line)  # validated when the manifest loaded
        if not requirement.applies_here():
            continue
        version = installed_version(requirement.name)
        where = manifest.where("model", "requirements", i)
        if version is None:
            problems.append(f"{where}: {line} is required but {requirement.name} is not installed")
        elif not requirement.accepts(version):
            problems.append(
                f"{where}: {line} is required but {requirement.name} {version} is installed"
            )
        else:
            met[line] = version
            continue
        fix.append(shlex.quote(line))
    if problems:
        count = len(problems)
        raise RequirementsNotMetError(
            f"{count} model requirement{'s are' if count > 1 else ' is'} not met in this "
            "environment:\n  " + "\n  ".join(problems),
            hint=f"run: pip install {' '.join(fix)}",
        )
    return met
