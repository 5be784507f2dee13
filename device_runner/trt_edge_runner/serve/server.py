"""Run the service: pick the bundles, build the app, serve it with uvicorn until stopped.

`--bundle DIR` (repeatable) serves those directories, the first loaded at start and the
others on demand (`serve.model_set`); without it the agent's active slot under `--root` is
served and followed (hot swap). A first load that fails ends the service with the reason
(a supervisor such as systemd restarts it; the agent's health check sees it fail); once
a model serves, nothing a request does ends it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.errors import TrtEdgeError
from trt_edge_runner.memory_budget import mib
from trt_edge_runner.serve.app import build_app
from trt_edge_runner.serve.engine_client import EngineError
from trt_edge_runner.serve.exposure import Exposure
from trt_edge_runner.serve.hot_swap import SlotWatcher, active_slot
from trt_edge_runner.serve.loaded_model import ServeOptions
from trt_edge_runner.serve.model_set import Configured, MemoryBudget, ModelSet
from trt_edge_runner.serve.service import Service

LOG = logging.getLogger("trt_edge_runner.serve")


class ServeFailed(TrtEdgeError):
    """The service could not load its first model (the message says why)."""


@dataclass(frozen=True)
class Source:
    """What to serve: bundles (`models`, within `budget`), or when there are none the active
    slot of the agent at `root`."""

    models: tuple[Configured, ...]
    budget: MemoryBudget | None
    root: Path


def serve(source: Source, options: ServeOptions, exposure: Exposure) -> None:
    """Serve until SIGINT/SIGTERM; ServeFailed when the first model does not load."""
    import uvicorn

    service = Service(options)
    if source.models:  # known (listed, looked up) before the first one is loaded
        assert source.budget is not None
        service.models = ModelSet(list(source.models), source.budget, options, service.metrics)
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
    if service.models is not None:
        LOG.info(
            "serving %s within a memory budget of %s (%s)", service.models.names,
            mib(service.models.budget.total_bytes), service.models.budget.source,
        )  # fmt: skip
        await service.models.start()
        return
    target = active_slot(source.root)
    if target is None:
        service.load_error = f"nothing is installed under {source.root}"
        LOG.warning("%s; waiting for trt-edge-device install", service.load_error)
    else:
        service.serve(await service.load(target.bundle, target.slot))
    await SlotWatcher(service, source.root, target).run()


def configure_logging() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
