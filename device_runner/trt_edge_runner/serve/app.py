"""The ASGI application: routes of both protocols, `/metrics`, errors, start-up and shut-down.

Loading runs in the background so `/v2/health/live` answers at once and
`/v2/health/ready` turns 200 only when the model passed its smoke run. Any exception a
route did not turn into an `ApiError` becomes a 500 naming its type and message, logged
with its traceback here and never sent to the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from trt_edge_runner.serve import kserve_routes, openai_routes
from trt_edge_runner.serve.api_errors import ApiError
from trt_edge_runner.serve.exposure import BearerKey
from trt_edge_runner.serve.metrics import CONTENT_TYPE_LATEST
from trt_edge_runner.serve.model_set import ModelLeases
from trt_edge_runner.serve.service import Service

LOG = logging.getLogger("trt_edge_runner.serve")

Startup = Callable[[Service], Coroutine[Any, Any, None]]


async def metrics(request: Request) -> Response:
    service: Service = request.app.state.service
    return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)


def _error(request: Request, error: ApiError) -> Response:
    if request.url.path.startswith("/v2"):
        return kserve_routes.kserve_error(error)
    return JSONResponse(openai_routes.openai_error_body(error), error.status, headers=error.headers)


async def _api_error(request: Request, exc: Exception) -> Response:
    """An ApiError a route let through (e.g. no model loaded yet), counted and rendered."""
    assert isinstance(exc, ApiError)
    service: Service = request.app.state.service
    if request.url.path.startswith("/v1/"):
        service.finish(request.url.path, exc.outcome)
    return _error(request, exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(request, ApiError(exc.status_code, str(exc.detail), kind="invalid_request_error"))


async def _unexpected(request: Request, exc: Exception) -> Response:
    LOG.exception("unexpected error serving %s %s", request.method, request.url.path)
    error = ApiError(500, f"internal error ({type(exc).__name__}: {exc})", kind="internal_error")
    return _error(request, error)


def build_app(service: Service, startup: Startup, api_key: str | None = None) -> Starlette:
    """The service's application; `startup(service)` loads the first model in the background."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(startup(service))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            await service.close()

    middleware = [Middleware(BearerKey, api_key=api_key)] if api_key else []
    # Innermost: a request holds the models it looked up until its response is sent.
    middleware.append(Middleware(ModelLeases, release=service.release))
    app = Starlette(
        routes=[*openai_routes.ROUTES, *kserve_routes.ROUTES, Route("/metrics", metrics)],
        middleware=middleware,
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
        lifespan=lifespan,
    )
    app.state.service = service
    return app
