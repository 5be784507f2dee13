"""Checking image references (`--base`, `--image`, `--tag`) before the engine sees them.

The daemon answers a malformed reference with an HTTP 400 ("invalid reference
format") only after the work that needed it has begun — for `--tag`, after a build
of several minutes. Checking against the reference grammar of the distribution
project (the one the daemon uses) up front turns a typo into an immediate exit 2
that names the option, the value and what a valid reference looks like.

The docker SDK's `parse_repository_tag` only splits a reference; it accepts
anything, so it cannot be used for this.
"""

from __future__ import annotations

import re

from trt_edge.containers.errors import ImageReferenceError

# distribution/reference grammar (reference.go), written out piece by piece.
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_DOMAIN = rf"(?:{_DOMAIN_NAME}|{_IPV6})(?::[0-9]+)?"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"

_REFERENCE = re.compile(rf"(?P<name>{_NAME})(?::{_TAG})?(?:@{_DIGEST})?")
_TAGGED = re.compile(rf"(?P<name>{_NAME})(?::{_TAG})?")
# An image id as `docker images` shows it, full or short (`sha256:` optional).
_IMAGE_ID = re.compile(r"(?:sha256:)?[0-9a-f]{12,64}")
_NAME_MAX = 255

_EXAMPLES = "e.g. `debian:bookworm`, `registry.example.com:5000/team/img:1.0` or an image id"


def _invalid(option: str, value: str, why: str, examples: str) -> ImageReferenceError:
    return ImageReferenceError(
        f"{option} {value!r} is not a valid image reference ({why}); "
        f"names are lowercase letters, digits and . _ - separators, with an optional "
        f"registry host, and a tag of letters, digits, . _ - (at most 128); {examples}"
    )


def _check(pattern: re.Pattern[str], option: str, value: str, examples: str) -> str:
    if not value:
        raise _invalid(option, value, "it is empty", examples)
    match = pattern.fullmatch(value)
    if match is None:
        bad = sorted({c for c in value if not (c.isascii() and (c.isalnum() or c in "._-:/@[]"))})
        why = f"characters {''.join(bad)!r} are not allowed" if bad else "malformed"
        if not bad and any(c.isupper() for c in value.split(":")[0].split("@")[0]):
            why = "the repository name must be lowercase"
        raise _invalid(option, value, why, examples)
    if len(match.group("name")) > _NAME_MAX:
        raise _invalid(option, value, f"the name is longer than {_NAME_MAX} characters", examples)
    return value


def check_image_reference(value: str, option: str = "image") -> str:
    """`value` if it can name a local image (reference or id); else ImageReferenceError (2)."""
    if _IMAGE_ID.fullmatch(value):
        return value
    return _check(_REFERENCE, option, value, _EXAMPLES)


def check_tag(value: str, option: str = "--tag") -> str:
    """`value` if it is a valid `repository[:tag]` to tag an image with (no digest, no id)."""
    return _check(_TAGGED, option, value, "e.g. `myorg/trt-edge-cpu:1.0`")
