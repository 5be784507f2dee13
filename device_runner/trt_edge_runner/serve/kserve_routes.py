"""The Open Inference Protocol (KServe v2 REST) for every bundle, as Triton's clients speak it.

`/v2/health/live` answers while the process runs; `/v2/health/ready` only once a model is
loaded and its smoke run passed (and not while its engine restarts). `/v2/models/{name}`
describes the bundle's inputs and outputs (a symbolic dim is -1, as Triton shows it) and
its phases and profiles. `/v2/models/{name}/infer` runs one execution under the phase,
pinned profile or `auto` named in the request's `parameters` (`{"phase": "decode"}`,
`{"profile": 1}`, `{"auto": true}`), with tensors as JSON lists or in Triton's binary
extension (`Inference-Header-Content-Length`), which `tritonclient` uses by default.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from trt_edge_runner import __version__
from trt_edge_runner.serve.api_errors import OK, ApiError, bad_field
from trt_edge_runner.serve.engine_events import InferDone
from trt_edge_runner.serve.loaded_model import LoadedModel
from trt_edge_runner.serve.service import Listed, Service
from trt_edge_runner.serve.tensor_bytes import (
    DTYPE_BY_KSERVE,
    KSERVE_BY_DTYPE,
    TensorDataError,
    byte_size,
    pack,
    unpack,
)

HEADER_LENGTH = "Inference-Header-Content-Length"
INFER = "/v2/models/infer"


def kserve_error(error: ApiError) -> Response:
    return JSONResponse({"error": error.text()}, error.status, headers=error.headers)


async def server_metadata(request: Request) -> Response:
    return JSONResponse(
        {"name": "trt-edge", "version": __version__, "extensions": ["binary_tensor_data"]}
    )


async def live(request: Request) -> Response:
    return JSONResponse({"live": True})


async def ready(request: Request) -> Response:
    service: Service = request.app.state.service
    is_ready = service.ready
    return JSONResponse({"ready": is_ready}, 200 if is_ready else 503)


def _listed(request: Request) -> Listed:
    """The served model the path names, loaded or not (404 for a name or version not served)."""
    service: Service = request.app.state.service
    listed = service.find(request.path_params["name"])
    version = request.path_params.get("version")
    if version is not None and version != listed.manifest.version:
        raise ApiError(
            404,
            f"{listed.name} version {version!r} is not served here "
            f"(serving {listed.manifest.version})",
        )
    return listed


async def _model(request: Request) -> LoadedModel:
    """The model the path names, loaded first when it is not."""
    service: Service = request.app.state.service
    _listed(request)
    return await service.model(request.path_params["name"])


def _tensor_meta(spec: Any) -> dict[str, Any]:
    return {
        "name": spec.name,
        "datatype": KSERVE_BY_DTYPE[spec.dtype],
        "shape": [d if isinstance(d, int) else -1 for d in spec.shape],
    }


async def model_metadata(request: Request) -> Response:
    try:
        listed = _listed(request)
    except ApiError as error:
        return kserve_error(error)
    manifest = listed.manifest
    return JSONResponse(
        {
            "name": listed.name,
            "versions": [manifest.version],
            "platform": f"trt-edge/{manifest.backend}",
            "inputs": [_tensor_meta(s) for s in manifest.inputs],
            "outputs": [_tensor_meta(s) for s in manifest.outputs],
            "parameters": {
                "phases": dict(manifest.runtime.phases),
                "profiles": [p.name for p in manifest.profiles],
                "slot": listed.slot,
                "loaded": listed.loaded is not None,
            },
        }
    )


async def model_ready(request: Request) -> Response:
    """Ready: loaded and its engine serving (a model not loaded yet loads on its first infer)."""
    try:
        listed = _listed(request)
    except ApiError as error:
        return kserve_error(error)
    is_ready = listed.loaded is not None and listed.loaded.ready
    return JSONResponse({"name": listed.name, "ready": is_ready}, 200 if is_ready else 503)


def _split_body(request: Request, raw: bytes) -> tuple[dict[str, Any], bytes]:
    """(the JSON header, the binary tail) of an infer body."""
    length = request.headers.get(HEADER_LENGTH)
    if length is None:
        head, tail = raw, b""
    else:
        if not length.isdigit() or int(length) > len(raw):
            raise bad_field(HEADER_LENGTH, f"{length!r} is not a length within the body")
        head, tail = raw[: int(length)], raw[int(length) :]
    try:
        doc = json.loads(head)
    except ValueError as exc:
        raise bad_field("body", f"not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise bad_field("body", "expected a JSON object")
    return doc, tail


def _execution_request(parameters: Any, model: LoadedModel) -> dict[str, Any]:
    """The phase / pinned profile / auto a request names, in the engine's terms."""
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise bad_field("parameters", "expected an object")
    named = [k for k in ("phase", "profile", "auto") if k in parameters]
    if len(named) > 1:
        raise bad_field(
            "parameters", f"name one of phase, profile or auto, not {' and '.join(named)}"
        )
    phases = model.manifest.runtime.phases
    if not named:
        if len(phases) == 1:
            return {"phase": next(iter(phases))}
        raise bad_field(
            "parameters.phase",
            f"required: this bundle has phases {', '.join(sorted(phases)) or '(none)'}; "
            'or pin a profile ({"profile": 0}) or ask for {"auto": true}',
        )
    key = named[0]
    value = parameters[key]
    if key == "phase":
        if not isinstance(value, str) or value not in phases:
            raise bad_field(
                "parameters.phase", f"{value!r}: expected one of {', '.join(sorted(phases))}"
            )
        return {"phase": value}
    if key == "profile":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad_field("parameters.profile", f"expected a profile index, got {value!r}")
        return {"profile": value}
    if value is not True:
        raise bad_field("parameters.auto", "expected true")
    return {"auto": True}


def _inputs(doc: dict[str, Any], tail: bytes, model: LoadedModel) -> list[dict[str, Any]]:
    raw = doc.get("inputs")
    if not isinstance(raw, list) or not raw:
        raise bad_field("inputs", "required: a non-empty list of tensors")
    specs = {s.name: s for s in model.manifest.inputs}
    offset = 0
    out: list[dict[str, Any]] = []
    for i, tensor in enumerate(raw):
        place = f"inputs[{i}]"
        if not isinstance(tensor, dict):
            raise bad_field(place, "expected an object with name, shape, datatype, data")
        name = tensor.get("name")
        spec = specs.get(name) if isinstance(name, str) else None
        if spec is None:
            raise bad_field(f"{place}.name", f"{name!r}: expected one of {', '.join(specs)}")
        place = f"inputs[{name}]"
        datatype = tensor.get("datatype")
        if DTYPE_BY_KSERVE.get(datatype) != spec.dtype:  # type: ignore[arg-type]
            want = KSERVE_BY_DTYPE[spec.dtype]
            raise bad_field(f"{place}.datatype", f"{datatype!r}: this input is {want}")
        shape = tensor.get("shape")
        if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
        ):
            raise bad_field(f"{place}.shape", f"{shape!r}: expected a list of sizes >= 0")
        size = byte_size(spec.dtype, shape)
        params = tensor.get("parameters") or {}
        binary = params.get("binary_data_size") if isinstance(params, dict) else None
        if binary is not None:
            if binary != size or offset + size > len(tail):
                raise bad_field(
                    f"{place}.parameters.binary_data_size",
                    f"{binary!r}: shape {shape} of {spec.dtype} needs {size} bytes",
                )
            data = tail[offset : offset + size]
            offset += size
        else:
            values = tensor.get("data")
            if not isinstance(values, list):
                raise bad_field(f"{place}.data", "required: the tensor's values as a list")
            try:
                data = pack(spec.dtype, shape, values)
            except TensorDataError as exc:
                raise bad_field(f"{place}.data", str(exc)) from None
        out.append(
            {"name": spec.name, "dtype": spec.dtype, "shape": shape,
             "b64": base64.b64encode(data).decode()}
        )  # fmt: skip
    missing = set(specs) - {t["name"] for t in out}
    if missing:
        raise bad_field("inputs", f"missing {', '.join(sorted(missing))}")
    return out


def _wanted_outputs(doc: dict[str, Any], model: LoadedModel) -> tuple[list[str], dict[str, bool]]:
    """The outputs asked for (all when none named) and which of them go as binary."""
    default_binary = bool((doc.get("parameters") or {}).get("binary_data_output", False))
    raw = doc.get("outputs")
    names = [s.name for s in model.manifest.outputs]
    if raw is None:
        return names, dict.fromkeys(names, default_binary)
    if not isinstance(raw, list):
        raise bad_field("outputs", "expected a list of {name}")
    wanted: list[str] = []
    binary: dict[str, bool] = {}
    for i, item in enumerate(raw):
        name = item.get("name") if isinstance(item, dict) else None
        if name not in names:
            raise bad_field(f"outputs[{i}].name", f"{name!r}: expected one of {', '.join(names)}")
        wanted.append(name)
        params = item.get("parameters") or {}
        binary[name] = bool(params.get("binary_data", default_binary))
    return wanted, binary


def _response(
    model: LoadedModel, doc: dict[str, Any], done: InferDone, binary: dict[str, bool]
) -> Response:
    outputs: list[dict[str, Any]] = []
    tail: list[bytes] = []
    for out in done.outputs:
        data = base64.b64decode(out.b64)
        entry: dict[str, Any] = {
            "name": out.name,
            "datatype": KSERVE_BY_DTYPE[out.dtype],
            "shape": list(out.shape),
        }
        if binary.get(out.name):
            entry["parameters"] = {"binary_data_size": len(data)}
            tail.append(data)
        else:
            entry["data"] = unpack(out.dtype, data)
        outputs.append(entry)
    head = {
        "model_name": model.name,
        "model_version": model.version,
        "outputs": outputs,
        "parameters": {
            "profile": done.profile,
            "profile_name": done.profile_name,
            "outcome": done.outcome,
            "latency_ms": done.latency_ms,
        },
    }
    if isinstance(doc.get("id"), str):
        head["id"] = doc["id"]
    body = json.dumps(head, separators=(",", ":")).encode()
    if not tail:
        return Response(body, media_type="application/json")
    return Response(
        body + b"".join(tail),
        media_type="application/octet-stream",
        headers={HEADER_LENGTH: str(len(body))},
    )


async def infer(request: Request) -> Response:
    service: Service = request.app.state.service
    started = time.monotonic()
    try:
        raw = await request.body()  # before choosing the model: a swap may happen meanwhile
        model = await _model(request)
        doc, tail = _split_body(request, raw)
        execution = _execution_request(doc.get("parameters"), model)
        inputs = _inputs(doc, tail, model)
        wanted, binary = _wanted_outputs(doc, model)
        deadline = min(model.scheduler.deadline(), started + model.scheduler.timeout_s)
        done = await model.infer(
            {"request": execution, "inputs": inputs, "outputs": wanted}, deadline
        )
        response = _response(model, doc, done, binary)
    except ApiError as error:
        service.finish(INFER, error.outcome)
        return kserve_error(error)
    service.finish(INFER, OK)
    return response


ROUTES = [
    Route("/v2", server_metadata, methods=["GET"]),
    Route("/v2/health/live", live, methods=["GET"]),
    Route("/v2/health/ready", ready, methods=["GET"]),
    Route("/v2/models/{name}", model_metadata, methods=["GET"]),
    Route("/v2/models/{name}/versions/{version}", model_metadata, methods=["GET"]),
    Route("/v2/models/{name}/ready", model_ready, methods=["GET"]),
    Route("/v2/models/{name}/versions/{version}/ready", model_ready, methods=["GET"]),
    Route("/v2/models/{name}/infer", infer, methods=["POST"]),
    Route("/v2/models/{name}/versions/{version}/infer", infer, methods=["POST"]),
]
