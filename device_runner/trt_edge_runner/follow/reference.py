"""`REGISTRY/REPO:TAG`, the way `trt-edge publish`, `promote` and `follow` name an artifact.

The registry is the first path component (a host, optionally `:PORT`), the repository the
rest up to the tag, the tag what follows the last `:` of the last component (a version such
as `1.2.0`, or a channel such as `stable`). A reference without a tag is refused: a device
must follow a named channel, never an implicit `latest`.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from trt_edge_runner.errors import TrtEdgeError, Where

# The OCI distribution spec's grammar for repository path components and tags.
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_HOST = re.compile(r"[A-Za-z0-9.-]+(?::[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?")


class ReferenceError(TrtEdgeError):
    """A registry reference that cannot be used (exit 2: fix the argument)."""

    exit_code = 2


@dataclass(frozen=True)
class Reference:
    registry: str  # host[:port]
    repository: str
    tag: str

    def __str__(self) -> str:
        return f"{self.registry}/{self.repository}:{self.tag}"

    def with_tag(self, tag: str) -> Reference:
        return Reference(self.registry, self.repository, check_tag(tag, "tag"))

    @property
    def host(self) -> str:
        """The registry's host name without port or IPv6 brackets."""
        host = self.registry
        if host.startswith("["):
            return host[1 : host.index("]")]
        return host.rsplit(":", 1)[0] if ":" in host else host

    def is_loopback(self) -> bool:
        """True for localhost and loopback addresses: plain http is allowed there only."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def check_tag(tag: str, what: str) -> str:
    if not _TAG.fullmatch(tag):
        raise ReferenceError(
            f"not a valid {what}",
            where=Where(value=tag),
            hint="a tag is letters, digits, '_', '.' and '-', at most 128, not starting with "
            "'.' or '-'",
        )
    return tag


def parse_reference(text: str, what: str = "REGISTRY/REPO:TAG") -> Reference:
    """`text` as a Reference, or ReferenceError naming what is wrong with it."""

    def bad(reason: str) -> ReferenceError:
        return ReferenceError(
            f"not a {what}: {reason}",
            where=Where(value=text),
            hint="write it as HOST[:PORT]/REPOSITORY:TAG, e.g. registry:5000/fleet/tiny:stable",
        )

    registry, slash, rest = text.partition("/")
    if not slash or not rest:
        raise bad("no registry host before the repository")
    if not _HOST.fullmatch(registry):
        raise bad(f"{registry!r} is not a host[:port]")
    repository, colon, tag = rest.rpartition(":")
    if not colon or "/" in tag:
        raise bad("no :TAG at the end (a channel such as stable, or a version)")
    if not all(_COMPONENT.fullmatch(part) for part in repository.split("/")):
        raise bad(f"repository {repository!r}: lower-case letters, digits and . _ - between /")
    return Reference(registry, repository, check_tag(tag, "tag"))
