"""Run the service: pick the bundle, build the app, serve it with uvicorn until stopped.

`--bundle DIR` serves that directory; without it the agent's active slot under `--root` is
served and followed (hot swap). A first load that fails ends the service with the reason
(a supervisor such as systemd restarts it; the agent's health check sees it fail); once
a model serves, nothing a request does ends it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.serve.app import build_app
from trt_edge_runner.serve.engine_client import EngineError
from trt_edge_runner.serve.exposure import Exposure
from trt_edge_runner.serve.hot_swap import SlotWatcher, active_slot
from trt_edge_runner.serve.loaded_model import LoadedModel, ServeOptions
from trt_edge_runner.serve.service import Service

LOG = logging.getLogger("trt_edge_runner.serve")


class ServeFailed(TrtEdgeError):
    """The service could not load its first model (the message says why)."""


@dataclass(frozen=True)
class Source:
    """What to serve: a bundle directory, or the active slot of the agent at `root`."""

    bundle: Path | None
    root: Path


def serve(source: Source, options: ServeOptions, exposure: Exposure) -> None:
    """Serve until SIGINT/SIGTERM; ServeFailed when the first model does not load."""
    import uvicorn

    service = Service(options)
    failure: list[str] = []
    server: uvicorn.Server

    async def startup(service: Service) -> None:
        try:
            await _load_first(service, source)
        except (EngineError, TrtEdgeError, OSError) as exc:
            failure.append(str(exc))
            server.should_exit = True

    app = build_app(service, startup, exposure.api_key)
    config = uvicorn.Config(
        app,
        host=exposure.host,
        port=exposure.port,
        ssl_certfile=str(exposure.tls_cert) if exposure.tls_cert else None,
        ssl_keyfile=str(exposure.tls_key) if exposure.tls_key else None,
        log_level="info",
        timeout_graceful_shutdown=10,
        # Keep-alive lets benchmark and SDK clients reuse connections.
        timeout_keep_alive=30,
    )
    server = uvicorn.Server(config)
    server.run()
    if failure:
        raise ServeFailed(
            failure[0], hint="fix or reinstall the bundle, then start the service again"
        )


async def _load_first(service: Service, source: Source) -> None:
    if source.bundle is not None:
        service.serve(await LoadedModel.load(source.bundle, None, service.options, service.metrics))
        return
    target = active_slot(source.root)
    if target is None:
        service.load_error = f"nothing is installed under {source.root}"
        LOG.warning("%s; waiting for trt-edge-device install", service.load_error)
    else:
        model = await LoadedModel.load(target.bundle, target.slot, service.options, service.metrics)
        service.serve(model)
    await SlotWatcher(service, source.root, target).run()


def configure_logging() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
