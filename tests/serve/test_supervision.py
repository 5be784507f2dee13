"""The engine dies, the service does not: a SIGKILLed engine fails the request in flight with
an error naming the signal, is restarted (counted in /metrics), and the next request is
served; a request past its deadline is a 504 and the engine keeps serving; a bounded load
leaves nothing but deliberate 503s and no leaked processes or descriptors."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.waits import wait_until
from tests.serve.conftest import Served, bundle_doc, metric, unread_input

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

TIMEOUT_S = 3


@pytest.fixture(scope="module")
def served(serve_bundle: Callable[..., Served], bundle: Path) -> Served:
    return serve_bundle(bundle, "--request-timeout", str(TIMEOUT_S), "--max-queue", "2")


def body(bundle: Path, **extra: Any) -> dict[str, Any]:
    name = bundle_doc(bundle)["model"]["name"]
    return {"model": name, "prompt": "The cache", "max_tokens": 4, "temperature": 0, **extra}


def test_a_killed_engine_fails_the_request_in_flight_and_is_restarted(
    served: Served, bundle: Path
) -> None:
    engine = served.engine()
    os.kill(engine, signal.SIGSTOP)  # the request below is surely in flight when it dies
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            httpx.post, f"{served.url}/v1/completions", json=body(bundle, stream=True), timeout=60
        )
        # In flight: the service has written it to the stopped engine's input.
        wait_until(lambda: unread_input(engine), "the request written to the stopped engine")
        os.kill(engine, signal.SIGKILL)
        response = pending.result()
    assert response.status_code == 502, response.text
    message = response.json()["error"]["message"]
    assert "SIGKILL" in message and str(engine) in message
    served.wait_ready(60)
    assert served.engine() != engine
    again = httpx.post(f"{served.url}/v1/completions", json=body(bundle), timeout=60)
    assert again.status_code == 200, again.text
    text = httpx.get(f"{served.url}/metrics").text
    model = bundle_doc(bundle)["model"]["name"]
    assert metric(text, "trt_edge_runner_restarts_total", model=model) == 1
    assert (
        metric(text, "trt_edge_requests_total", model=model, endpoint="/v1/completions",
               outcome="engine_error")
        == 1
    )  # fmt: skip


def test_a_request_past_its_deadline_is_a_504_and_the_engine_serves_on(
    served: Served, bundle: Path
) -> None:
    engine = served.engine()
    os.kill(engine, signal.SIGSTOP)
    try:
        started = time.monotonic()
        response = httpx.post(f"{served.url}/v1/completions", json=body(bundle), timeout=60)
        waited = time.monotonic() - started
    finally:
        os.kill(engine, signal.SIGCONT)
    assert response.status_code == 504, response.text
    assert "deadline" in response.json()["error"]["message"]
    assert waited >= TIMEOUT_S
    again = httpx.post(f"{served.url}/v1/completions", json=body(bundle), timeout=60)
    assert again.status_code == 200, again.text
    assert served.engine() == engine


def test_a_bounded_load_gets_answers_or_deliberate_503s_and_leaks_nothing(
    served: Served, bundle: Path
) -> None:
    fds_before = served.open_fds()
    statuses: list[int] = []
    retry_after: list[str | None] = []

    def client(n: int) -> None:
        with httpx.Client(timeout=60) as http:
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                response = http.post(
                    f"{served.url}/v1/completions",
                    json=body(bundle, max_tokens=8, stream=n % 2 == 0, seed=n),
                )
                statuses.append(response.status_code)
                if response.status_code == 503:
                    retry_after.append(response.headers.get("retry-after"))

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(client, range(8)))
    assert set(statuses) <= {200, 503}, statuses
    assert statuses.count(200) > 0
    assert all(value is not None and value.isdigit() for value in retry_after)
    # The clients are done; the service closes their sockets (a leak never would).
    wait_until(
        served.open_fds,
        "the service's fds back down",
        until=lambda fds: fds <= fds_before + 2,  # sockets in TIME_WAIT are not fds
    )
    assert len(served.engines()) == 1
    text = httpx.get(f"{served.url}/metrics").text
    assert metric(text, "trt_edge_queue_depth", model=bundle_doc(bundle)["model"]["name"]) == 0
