"""The one registry client of trt-edge: ORAS's Python SDK (`oras`, oras-project/oras-py)
over the OCI distribution API, with our auth, TLS and plain-http rules.

Why ORAS, and where we go around it: `oras.provider.Registry` does the distribution API's
authentication dance (basic auth, bearer-token challenges, anonymous tokens), blob upload
(monolithic or chunked, skipping blobs the registry has), manifest PUT/GET with the OCI
media types, and tag listing, all on one `requests` session. Its `get_blob` takes no
request headers, and `download_blob` rewrites the output file from byte 0, so it cannot
resume; ranged GETs (`Range: bytes=N-`) therefore go through the same authenticated
`Registry.do_request` that ORAS uses itself (the session, the token, the TLS settings are
ORAS's). `requests` is only what oras already depends on.

Plain http is allowed only to a loopback registry, or with `plain_http` on purpose; TLS
verifies against the system's CAs or `ca_file`. Credentials come from a file (the
`registry-credentials` schema), never from the command line.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge_runner.errors import TrtEdgeError, Where
from trt_edge_runner.follow.access import Access
from trt_edge_runner.follow.artifact import MANIFEST_MEDIA_TYPE
from trt_edge_runner.follow.reference import Reference
from trt_edge_runner.json_documents import parse_json_object, read_file_bytes
from trt_edge_runner.schemas import validate

if TYPE_CHECKING:
    import requests

CHUNK = 1 << 16
TIMEOUT_S = 30.0


class RegistryError(TrtEdgeError):
    """The registry could not be reached or said no; the message names the reference."""


class NoSuchTag(RegistryError):
    """The repository has no such tag (a channel nobody promoted to, a version not published)."""


class RegistryAccessError(RegistryError):
    """A registry setting that cannot be used: plain http to a remote host, a missing CA file,
    a malformed credentials file (exit 2: fix the flag or the file)."""

    exit_code = 2


def read_credentials(path: Path) -> dict[str, str]:
    """The credentials file as {username, password} or {token}, held to its schema."""
    source = str(path)
    data = read_file_bytes(path, "registry credentials", lambda m: RegistryAccessError(m))
    doc = parse_json_object(data, source, "", lambda m: RegistryAccessError(m))
    validate("registry-credentials", doc, source, lambda m, _field: RegistryAccessError(m))
    return {str(k): str(v) for k, v in doc.items()}


class RegistryClient:
    """One repository of one registry, as `reference` names it."""

    def __init__(self, reference: Reference, access: Access) -> None:
        self.reference = reference
        # Loopback may speak plain http (a registry on the device or the build host), unless
        # a CA file says it speaks TLS; anything else needs --plain-http on purpose.
        plain = access.plain_http or (reference.is_loopback() and access.ca_file is None)
        if access.ca_file is not None and not access.ca_file.is_file():
            raise RegistryAccessError(
                "no such CA file", where=Where(access.ca_file, option="--ca-file")
            )
        if access.plain_http and access.ca_file is not None:
            raise RegistryAccessError(
                f"{reference.registry}: plain http with a CA file; drop one of them",
                where=Where(option="--ca-file"),
            )
        verify: bool | str = str(access.ca_file) if access.ca_file else True
        # ORAS and requests load only when a registry is used (an optional extra on devices:
        # `trt-edge-device --help` and every other command run without it).
        import oras.provider
        import requests

        self._failures = (requests.RequestException, ValueError)
        self._tls_failure = requests.exceptions.SSLError
        self.scheme = "http" if plain else "https"
        self._oras = oras.provider.Registry(
            hostname=reference.registry, insecure=plain, tls_verify=verify
        )
        # ORAS passes no timeout to requests: a registry that stops answering would hang a
        # device's follower for good. Every request of this session gets one.
        session = self._oras.session
        session.request = functools.partial(session.request, timeout=TIMEOUT_S)
        self._verify = verify
        self._basic: tuple[str, str] | None = None
        if access.credentials is not None:
            creds = read_credentials(access.credentials)
            if "token" in creds:
                self._oras.auth.set_token_auth(creds["token"])
            else:
                self._basic = (creds["username"], creds["password"])
                self._oras.auth.set_basic_auth(*self._basic)
        self._auth_chosen = False
        self._container = self._oras.get_container(str(reference))

    def _choose_auth(self) -> None:
        """Pick ORAS's auth backend, once, from the API check `GET /v2/`: a registry with basic
        auth (distribution's htpasswd) answers it with a `Basic` challenge, a token registry
        (Harbor, Docker Hub, cloud registries) with `Bearer`, which ORAS's default backend
        answers by trading the credentials (or nothing: an anonymous token) for a token. A
        `Basic` challenge without credentials is refused here, saying what to pass."""
        if self._auth_chosen:
            return
        self._auth_chosen = True
        import oras.auth

        try:
            response = self._oras.session.get(f"{self._root()}/v2/", verify=self._verify)
        except self._failures:
            return  # the request that follows reports the registry as unreachable
        challenge = response.headers.get("WWW-Authenticate", "")
        if response.status_code != 401 or not challenge.lower().startswith("basic"):
            return
        if self._basic is None:
            raise RegistryError(
                f"{self.reference.registry}: the registry wants credentials (HTTP 401, basic "
                "auth) and none were given",
                hint='pass --credentials FILE (JSON: {"username": …, "password": …})',
            )
        backend = oras.auth.get_auth_backend(
            "basic", self._oras.session, self.scheme == "http", tls_verify=self._verify
        )
        backend.set_basic_auth(*self._basic)
        self._oras.auth = backend

    # ---- reading -----------------------------------------------------------------------
    def manifest(self, tag: str) -> tuple[dict[str, Any], str]:
        """The image manifest `tag` names and its digest (of the bytes the registry sent)."""
        doc, digest, _raw = self.manifest_bytes(tag)
        return doc, digest

    def manifest_bytes(self, tag: str) -> tuple[dict[str, Any], str, bytes]:
        """`manifest`, with the exact bytes (a promotion puts the same bytes under another tag,
        so the channel's digest is the version's)."""
        url = f"{self._base()}/manifests/{tag}"
        response = self._request(url, "GET", headers={"Accept": MANIFEST_MEDIA_TYPE})
        if response.status_code == 404:
            raise NoSuchTag(
                f"{self.reference.with_tag(tag)}: no such tag in the registry",
                hint="publish a bundle there (`trt-edge publish`) or check the channel's name",
            )
        self._check(response, f"manifest {tag}")
        digest = "sha256:" + hashlib.sha256(response.content).hexdigest()
        try:
            doc = response.json()
        except ValueError:
            raise RegistryError(f"{self.reference.with_tag(tag)}: manifest is not JSON") from None
        if not isinstance(doc, dict):
            raise RegistryError(f"{self.reference.with_tag(tag)}: manifest is not a JSON object")
        return doc, digest, response.content

    @contextmanager
    def blob(self, digest: str, start: int = 0) -> Iterator[tuple[int, Iterator[bytes]]]:
        """Stream blob `digest` from byte `start`: (the offset the registry resumed at — `start`
        for a 206, 0 when it sent the whole blob — and the chunks)."""
        headers = {"Range": f"bytes={start}-"} if start else {}
        response = self._request(f"{self._base()}/blobs/{digest}", "GET", headers, stream=True)
        try:
            if response.status_code == 416 and start:  # nothing after `start`: have it all
                yield start, iter(())
                return
            self._check(response, f"blob {digest[:19]}…")
            offset = start if response.status_code == 206 else 0
            yield offset, response.iter_content(CHUNK)
        except self._failures as exc:
            raise RegistryError(f"{self.reference}: blob {digest[:19]}…: {exc}") from None
        finally:
            response.close()

    def tags(self) -> list[str]:
        self._choose_auth()
        try:
            return list(self._oras.get_tags(self._container))
        except self._failures as exc:
            raise RegistryError(f"{self.reference}: cannot list tags: {exc}") from None

    # ---- writing (the host's `trt-edge publish`/`promote`) ------------------------------
    def push_blob(self, path: Path, descriptor: dict[str, Any]) -> None:
        """Upload `path` as the blob `descriptor` names, unless the registry has it."""
        self._choose_auth()
        try:
            response = self._oras.upload_blob(str(path), self._container, descriptor)
        except self._failures as exc:
            raise RegistryError(f"{self.reference}: uploading {path}: {exc}") from None
        self._check(response, f"upload of {path.name}")

    def has_blob(self, descriptor: dict[str, Any]) -> bool:
        self._choose_auth()
        try:
            return bool(self._oras.blob_exists(descriptor, self._container))
        except self._failures as exc:
            raise RegistryError(f"{self.reference}: {exc}") from None

    def push_manifest(self, manifest: bytes, tag: str) -> str:
        """PUT `manifest` (its exact bytes) as the manifest of `tag` (a new tag, or one moved: a
        promotion); its digest. Raw bytes rather than ORAS's `upload_manifest`, which
        re-serializes the document: the same manifest must keep one digest under every tag."""
        url = f"{self._base()}/manifests/{tag}"
        headers = {"Content-Type": MANIFEST_MEDIA_TYPE}
        response = self._request(url, "PUT", headers, data=manifest)
        self._check(response, f"manifest {tag}")
        return "sha256:" + hashlib.sha256(manifest).hexdigest()

    # ---- plumbing ----------------------------------------------------------------------
    def _root(self) -> str:
        return f"{self.scheme}://{self.reference.registry}"

    def _base(self) -> str:
        return f"{self._root()}/v2/{self.reference.repository}"

    def _request(
        self,
        url: str,
        method: str,
        headers: dict[str, str],
        *,
        stream: bool = False,
        data: bytes | None = None,
    ) -> requests.Response:
        # `do_request` without ORAS's retry decorator (it sleeps up to 83 s between five
        # tries): the follower retries a failed poll itself, with its own backoff.
        unretried = type(self._oras).do_request.__wrapped__
        self._choose_auth()
        try:
            response: requests.Response = unretried(
                self._oras, url, method, headers=dict(headers), stream=stream, data=data
            )
        except self._tls_failure as exc:
            raise RegistryError(
                f"{self.reference.registry}: TLS verification failed: {exc}",
                hint="pass the registry's CA with --ca-file",
            ) from None
        except self._failures as exc:
            raise RegistryError(
                f"{self.reference.registry}: registry unreachable: {exc}",
                hint="check the address, the network and the credentials (--credentials)",
            ) from None
        return response

    def _check(self, response: requests.Response, what: str) -> None:
        if response.status_code in (200, 201, 202, 206):
            return
        detail = response.text[:200].strip()
        hint = None
        if response.status_code in (401, 403):
            hint = "the registry wants credentials: pass --credentials FILE"
        status = f"HTTP {response.status_code} {response.reason}"
        raise RegistryError(f"{self.reference}: {what}: {status} {detail}".strip(), hint=hint)
