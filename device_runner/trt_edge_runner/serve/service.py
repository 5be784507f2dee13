"""What the routes share: the model serving new requests, the metrics, how requests end.

`Service.model()` is the one place a route gets its model: the current one (a hot swap
replaces it atomically between two requests) or a 503 while none is loaded. `finish`
records a request's outcome in `trt_edge_requests_total` — every route ends through it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from trt_edge_runner.serve.api_errors import ENGINE_ERROR, ApiError
from trt_edge_runner.serve.loaded_model import LoadedModel, ServeOptions
from trt_edge_runner.serve.metrics import Metrics


@dataclass
class Service:
    options: ServeOptions
    metrics: Metrics = field(default_factory=Metrics)
    current: LoadedModel | None = None
    started: float = field(default_factory=time.time)
    load_error: str | None = None
    swap_error: str | None = None

    def model(self, name: str | None = None) -> LoadedModel:
        """The model serving new requests (named `name`, when given), or a 503/404."""
        model = self.current
        if model is None:
            why = f": {self.load_error}" if self.load_error else " yet"
            raise ApiError(
                503,
                f"no model is loaded{why}",
                outcome=ENGINE_ERROR,
                kind="engine_unavailable",
                headers={"Retry-After": "1"},
            )
        if name is not None and name != model.name:
            raise ApiError(
                404,
                f"{name!r} is not served here; this service serves {model.name!r}",
                field="model",
                kind="model_not_found",
            )
        return model

    def serve(self, model: LoadedModel) -> None:
        """Switch new requests to `model` (requests already running keep theirs)."""
        self.current = model
        self.load_error = None
        self.metrics.serving(model.name, model.version, model.slot or "")

    def unload(self, why: str) -> None:
        """Stop handing out a model (503 with `why` until `serve` is called again)."""
        self.current = None
        self.load_error = why

    def finish(self, endpoint: str, outcome: str) -> None:
        self.metrics.request(endpoint, outcome)
