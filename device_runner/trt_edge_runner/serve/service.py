"""What the routes share: the models serving new requests, the metrics, how requests end.

`Service.model()` is the one place a route gets its model. Either the service serves a set
of bundles (`models`, `serve.model_set`: each loaded on demand, the least recently used
unloaded when the next does not fit), or it follows the agent's active slot (`current`: a
hot swap replaces it atomically between two requests; 503 while none is loaded). `finish`
records a request's outcome in `trt_edge_requests_total` — every route ends through it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trt_edge_runner.bundle_format import BundleManifest
from trt_edge_runner.serve.api_errors import ENGINE_ERROR, ApiError
from trt_edge_runner.serve.loaded_model import LoadedModel, ServeOptions
from trt_edge_runner.serve.metrics import Metrics
from trt_edge_runner.serve.model_set import ModelSet, bundle_manifest, note_model, request_model


@dataclass(frozen=True)
class Listed:
    """One served model as `/v1/models` and `/v2/models/{name}` describe it."""

    manifest: BundleManifest
    slot: str | None
    loaded: LoadedModel | None  # None: configured, loaded on its first request

    @property
    def name(self) -> str:
        return self.manifest.name


@dataclass
class Service:
    options: ServeOptions
    metrics: Metrics = field(default_factory=Metrics)
    current: LoadedModel | None = None  # the followed (agent's active slot) model
    models: ModelSet | None = None  # or: the bundles given with --bundle
    started: float = field(default_factory=time.time)
    load_error: str | None = None
    swap_error: str | None = None

    async def model(self, name: str | None = None) -> LoadedModel:
        """The model serving new requests named `name` (None: the only one), loaded first
        when it is not; a 404/400 for a name not served or missing, a 503 when it cannot be."""
        if self.models is not None:
            return await self.models.get(name)
        model = self._followed()
        if name is not None and name != model.name:
            raise ApiError(
                404,
                f"{name!r} is not served here; this service serves {model.name!r}",
                field="model",
                kind="model_not_found",
            )
        note_model(model.name)
        return model

    def _followed(self) -> LoadedModel:
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
        return model

    def listed(self) -> list[Listed]:
        """Every model served, loaded or not (a 503 while the followed slot has none)."""
        if self.models is not None:
            return [
                Listed(m.manifest, None, self.models.resident.get(m.name))
                for m in self.models.models
            ]
        model = self._followed()
        return [Listed(model.manifest, model.slot, model)]

    def find(self, name: str) -> Listed:
        """The served model called `name`, loaded or not (404 naming those served)."""
        for listed in self.listed():
            if listed.name == name:
                return listed
        raise ApiError(
            404,
            f"model {name!r} is not served here (this service serves "
            f"{[listed.name for listed in self.listed()]})",
            kind="model_not_found",
        )

    @property
    def ready(self) -> bool:
        """`/v2/health/ready`: the first model passed its smoke run and no loaded engine is
        restarting (a model not loaded yet loads on demand: the service is ready for it)."""
        if self.models is not None:
            return self.models.ready
        return self.current is not None and self.current.ready

    async def load(self, bundle: Path, slot: str | None) -> LoadedModel:
        """Load the followed slot's bundle (its metrics labelled with its model name)."""
        name = bundle_manifest(bundle).name
        return await LoadedModel.load(bundle, slot, self.options, self.metrics.model(name))

    def serve(self, model: LoadedModel) -> None:
        """Switch new requests to `model` (requests already running keep theirs)."""
        old = self.current
        if old is not None:
            self.metrics.gone(old.name, old.version, old.slot or "")
        self.current = model
        self.load_error = None
        self.metrics.loaded(model.name, model.version, model.slot or "")

    def unload(self, why: str) -> None:
        """Stop handing out a model (503 with `why` until `serve` is called again)."""
        old = self.current
        if old is not None:
            self.metrics.gone(old.name, old.version, old.slot or "")
        self.current = None
        self.load_error = why

    def release(self, names: Sequence[str]) -> None:
        """A request's response ended: the models it held may be unloaded again."""
        if self.models is not None:
            self.models.release(names)

    async def close(self) -> None:
        if self.models is not None:
            await self.models.close()
        if self.current is not None:
            await self.current.close()

    def finish(self, endpoint: str, outcome: str) -> None:
        self.metrics.request(request_model(), endpoint, outcome)
