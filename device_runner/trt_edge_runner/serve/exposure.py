"""Who may reach the service: loopback by default, an API key for anything else, TLS on request.

A device on a shop floor network must not answer anyone who finds its port: binding an
address other than loopback without an API key (`--api-key` or `TRT_EDGE_API_KEY`) is
refused before anything starts. With a key, every route but the health probes needs
`Authorization: Bearer KEY` (compared in constant time). TLS takes a certificate and key
file (`--tls-cert`, `--tls-key`), both or neither.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from dataclasses import dataclass
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from trt_edge_runner.cli_args import require_file
from trt_edge_runner.errors import UsageError, Where

API_KEY_ENV = "TRT_EDGE_API_KEY"
# Probes (a supervisor, a load balancer) need no key: they learn nothing but up or down.
OPEN_PATHS = frozenset({"/v2/health/live", "/v2/health/ready"})


@dataclass(frozen=True)
class Exposure:
    host: str
    port: int
    api_key: str | None
    tls_cert: Path | None
    tls_key: Path | None

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert else "http"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def checked_exposure(
    host: str, port: int, api_key: str | None, tls_cert: Path | None, tls_key: Path | None
) -> Exposure:
    """The exposure asked for, or a UsageError before anything listens."""
    if api_key is not None and not api_key.strip():
        raise UsageError(
            f"the API key is empty; set a non-empty --api-key or {API_KEY_ENV}",
            where=Where(option="--api-key"),
        )
    if not is_loopback(host) and not api_key:
        raise UsageError(
            f"{host} is reachable from other machines: serving it needs an API key "
            f"(--api-key KEY or {API_KEY_ENV}); clients then send 'Authorization: Bearer KEY'",
            where=Where(option="--host", value=host),
            hint="or keep the default --host 127.0.0.1 and put a reverse proxy in front",
        )
    if (tls_cert is None) != (tls_key is None):
        raise UsageError(
            "TLS needs both --tls-cert and --tls-key",
            where=Where(option="--tls-key" if tls_key is None else "--tls-cert"),
        )
    if tls_cert is not None and tls_key is not None:
        require_file(tls_cert, "certificate file", option="--tls-cert")
        require_file(tls_key, "key file", option="--tls-key")
    return Exposure(host, port, api_key, tls_cert, tls_key)


class BearerKey:
    """ASGI middleware: 401 for a request without the right bearer key."""

    def __init__(self, app: ASGIApp, api_key: str) -> None:
        self.app = app
        self._expected = f"Bearer {api_key}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"authorization", b"")
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {"error": {"message": "missing or wrong API key: send 'Authorization: Bearer KEY'",
                       "type": "authentication_error", "param": None, "code": 401}}
        ).encode()  # fmt: skip
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b"Bearer"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
