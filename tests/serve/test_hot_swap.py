"""Hot swap: the service follows the agent's active slot. `trt-edge-device install` of another
bundle while 4 clients stream makes the service load it beside the old one, smoke-run it and
switch: no request fails, and each answer is wholly the old model's or the new one's (its
text equals that model's greedy text). `rollback` swaps back; one engine remains; a slot
that does not load leaves the old model serving."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest
from trt_edge_runner.agent.store import DeviceStore

from tests.agent.device import Device
from tests.helpers.bundles import pack, resign
from tests.helpers.waits import wait_for_exits, wait_for_line, wait_until
from tests.serve.conftest import Served, metric, start_service

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

PROMPT = "The cache is"
TOKENS = 8


def signed_tar(bundle: Path, work: Path, key: Path) -> Path:
    copy = work / bundle.name
    shutil.copytree(bundle, copy)
    resign(copy, key)
    return pack(copy, work / f"{bundle.name}.tar")


@dataclass(frozen=True)
class Answer:
    model: str
    text: str
    finish: str | None


@pytest.fixture(scope="module")
def device(
    tmp_path_factory: pytest.TempPathFactory, trt_edge_run: Path
) -> Iterator[tuple[Device, Path, Path]]:
    from trt_edge.signing import generate_keypair

    work = tmp_path_factory.mktemp("hot-swap")
    pair = generate_keypair(work / "keys")
    trusted = work / "trusted"
    trusted.mkdir()
    (trusted / "publisher.pub").write_bytes(pair.public_path.read_bytes())
    facts = work / "facts.json"
    facts.write_text(json.dumps({"arch": "x86_64"}))
    yield (
        Device(work / "root", trusted, facts, work / "device.json", trt_edge_run),
        work,
        pair.private_path,
    )


@pytest.fixture(scope="module")
def tars(
    device: tuple[Device, Path, Path], mini_bundle: Callable[[str], Path]
) -> tuple[Path, Path]:
    _, work, key = device
    return signed_tar(mini_bundle("gemma3"), work, key), signed_tar(mini_bundle("qwen3"), work, key)


def greedy(client: openai.OpenAI) -> Answer:
    done = client.completions.create(
        model="", prompt=PROMPT, max_tokens=TOKENS, temperature=0, extra_body={"ignore_eos": True}
    )  # "": whichever model the service serves
    return Answer(done.model, done.choices[0].text, done.choices[0].finish_reason)


def streamed(client: openai.OpenAI) -> Answer:
    chunks = client.completions.create(
        prompt=PROMPT, max_tokens=TOKENS, temperature=0, stream=True, model="",
        extra_body={"ignore_eos": True},
    )  # fmt: skip
    models: set[str] = set()
    text, finish = "", None
    for chunk in chunks:
        models.add(chunk.model)
        if chunk.choices:
            text += chunk.choices[0].text
            finish = chunk.choices[0].finish_reason or finish
    assert len(models) == 1, models  # one response, one model
    return Answer(models.pop(), text, finish)


def serving(url: str) -> str:
    """The served model's name; "" while none is (an in-place swap answers 503 meanwhile)."""
    response = httpx.get(f"{url}/v1/models", timeout=30)
    if response.status_code == 503:
        return ""
    return str(response.json()["data"][0]["id"])


def wait_for_model(served: Served, name: str) -> None:
    wait_until(
        lambda: serving(served.url),
        f"the service switching to {name}",
        until=lambda served_name: served_name == name,
        context=served.log_text,
    )


def test_install_and_rollback_swap_without_dropping_a_request(
    device: tuple[Device, Path, Path], tars: tuple[Path, Path], trt_edge_run: Path
) -> None:
    agent, work, _ = device
    old_tar, new_tar = tars
    agent.run("install", str(old_tar), check=True)
    served = start_service(trt_edge_run, [], work / "service.log", env=agent.env())
    try:
        served.wait_ready()
        client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="-", max_retries=0)
        before = greedy(client)
        answers: list[Answer] = []
        failures: list[BaseException] = []
        stop = threading.Event()
        threads_count = 4
        lock = threading.Lock()
        new_answers = threading.Semaphore(0)  # one release per answer of the new model

        def stream_until_stopped() -> None:
            while not stop.is_set():
                try:
                    answer = streamed(client)
                except BaseException as exc:
                    failures.append(exc)
                    continue
                with lock:
                    answers.append(answer)
                if answer.model == "mini-qwen3":
                    new_answers.release()

        threads = [threading.Thread(target=stream_until_stopped) for _ in range(threads_count)]
        for thread in threads:
            thread.start()
        try:
            agent.run("install", str(new_tar), check=True)
            wait_for_model(served, "mini-qwen3")
            for _ in range(threads_count):  # a few requests on the new model too
                assert new_answers.acquire(timeout=120), "no answers from the new model"
        finally:
            stop.set()
            for thread in threads:
                thread.join(120)
        after = greedy(client)
        assert not failures, failures
        assert before.model == "mini-gemma3" and after.model == "mini-qwen3"
        expected = {before.model: before.text, after.model: after.text}
        for answer in answers:
            assert answer.text == expected[answer.model], answer
            assert answer.finish == "length"
        assert {a.model for a in answers} == {"mini-gemma3", "mini-qwen3"}
        text = httpx.get(f"{served.url}/metrics").text
        assert (
            metric(text, "trt_edge_bundle_info", name="mini-qwen3", version="0.1.0", slot="B") == 1
        )
        assert (
            metric(text, "trt_edge_bundle_info", name="mini-gemma3", version="0.1.0", slot="A") == 0
        )

        replaced = served.engines()  # the rollback loads gemma3 beside these, then drains them
        agent.run("rollback", check=True)
        wait_for_model(served, "mini-gemma3")
        assert greedy(client) == before
        wait_for_exits(replaced, "the drained engine")
        assert len(served.engines()) == 1

        # A slot that does not load (its program damaged after install) keeps the old
        # model serving: the state is switched with the agent's own store, as install does.
        store = DeviceStore(agent.root)
        model = store.slot_dir("B") / "model.pte"
        data = bytearray(model.read_bytes())
        data[len(data) // 2] ^= 0xFF
        model.write_bytes(bytes(data))
        state = store.load()
        store.save(dataclasses.replace(state, active="B", previous="A"))
        wait_for_line(served.log, "slot B did not load")
        assert serving(served.url) == "mini-gemma3"
        assert greedy(client) == before
    finally:
        served.stop()


def service_without_room(
    device: tuple[Device, Path, Path], old_tar: Path, trt_edge_run: Path, name: str
) -> tuple[Device, Served]:
    """A fresh agent root with `old_tar` installed, served by a service that reads a meminfo
    with (almost) nothing available and keeps no headroom: every swap must be in place."""
    first, work, _ = device
    agent = dataclasses.replace(first, root=work / f"root-{name}")
    meminfo = work / f"meminfo-{name}"
    meminfo.write_text("MemTotal:        8000000 kB\nMemAvailable:       1024 kB\n")
    agent.run("install", str(old_tar), check=True)
    served = start_service(
        trt_edge_run,
        ["--meminfo", meminfo, "--memory-headroom-mib", "0"],
        work / f"service-{name}.log",
        env=agent.env(),
    )
    return agent, served


def test_a_swap_that_does_not_fit_beside_is_done_in_place(
    device: tuple[Device, Path, Path], tars: tuple[Path, Path], trt_edge_run: Path
) -> None:
    """With (measured) no memory to spare, the service never runs two engines: it stops the
    old model, then loads the new one; a slot that then fails to load brings the old back."""
    agent, served = service_without_room(device, tars[0], trt_edge_run, "tight")
    new_tar = tars[1]
    most_engines = 0
    stop = threading.Event()

    def count_engines() -> None:
        nonlocal most_engines
        while not stop.is_set():
            with contextlib.suppress(OSError):  # a child exited while /proc was read
                most_engines = max(most_engines, len(served.engines()))
            # Not a wait: a sample of /proc every 10 ms until stopped (an invariant watched).
            stop.wait(0.01)

    counter = threading.Thread(target=count_engines)
    try:
        served.wait_ready()
        client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="-", max_retries=0)
        before = greedy(client)
        counter.start()
        agent.run("install", str(new_tar), check=True)
        wait_for_model(served, "mini-qwen3")
        after = greedy(client)
        assert after.model == "mini-qwen3" and after.finish == "length"
        log = served.log_text()
        assert "slot B: swapping in place" in log and "not enough to load it beside" in log, log

        # B damaged and made active: it does not load, so A is loaded again.
        store = DeviceStore(agent.root)
        agent.run("rollback", check=True)
        wait_for_model(served, "mini-gemma3")
        model = store.slot_dir("B") / "model.pte"
        data = bytearray(model.read_bytes())
        data[len(data) // 2] ^= 0xFF
        model.write_bytes(bytes(data))
        store.save(dataclasses.replace(store.load(), active="B", previous="A"))
        wait_for_line(served.log, "from slot A again")
        assert "slot B did not load" in served.log_text(), served.log_text()
        served.wait_ready()
        assert greedy(client) == before
        stop.set()
        counter.join(10)
        assert most_engines == 1, most_engines
    finally:
        stop.set()
        served.stop()


def _replace_atomically(path: Path, data: bytes) -> None:
    """New bytes under a new inode: an engine that maps the old file keeps reading it."""
    fresh = path.with_name(path.name + ".new")
    fresh.write_bytes(data)
    fresh.replace(path)


def test_a_slot_made_active_again_loads_after_an_in_place_swap_lost_both(
    device: tuple[Device, Path, Path], tars: tuple[Path, Path], trt_edge_run: Path
) -> None:
    """An in-place swap whose new slot fails and whose old slot then fails to load again
    leaves nothing served; making the old slot active again (a rollback) must load it,
    although it is the slot the watcher last served."""
    agent, served = service_without_room(device, tars[0], trt_edge_run, "lost")
    new_tar = tars[1]
    try:
        served.wait_ready()
        client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="-", max_retries=0)
        before = greedy(client)
        agent.run("install", str(new_tar), check=True)
        wait_for_model(served, "mini-qwen3")
        agent.run("rollback", check=True)
        wait_for_model(served, "mini-gemma3")

        # Both slots damaged, B made active: B does not load, and neither does A again.
        store = DeviceStore(agent.root)
        model_a = store.slot_dir("A") / "model.pte"
        model_b = store.slot_dir("B") / "model.pte"
        intact_a = model_a.read_bytes()
        for model in (model_a, model_b):
            data = bytearray(model.read_bytes())
            data[len(data) // 2] ^= 0xFF
            _replace_atomically(model, bytes(data))
        store.save(dataclasses.replace(store.load(), active="B", previous="A"))
        wait_for_line(served.log, "and A neither")
        assert httpx.get(f"{served.url}/v2/health/ready", timeout=30).status_code != 200

        # A repaired and made active again: the service loads it.
        _replace_atomically(model_a, intact_a)
        store.save(dataclasses.replace(store.load(), active="A", previous="B"))
        served.wait_ready(timeout_s=60)
        assert greedy(client) == before
    finally:
        served.stop()
