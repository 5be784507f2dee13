"""A test client of `trt-edge-run --serve` (docs/engine-protocol.md): the real binary over
pipes, one JSON object per line each way.

Events are read by a thread into a queue, so a test waits for an event with a timeout
instead of blocking forever on a pipe when the engine misbehaves.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

EVENT_TIMEOUT_S = 120.0


class Engine:
    """One engine process; `request` sends a request and returns its events to the terminal one."""

    def __init__(self, binary: Path, bundle: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            [str(binary), "--bundle", str(bundle), "--serve", *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        self.aside: list[dict[str, Any]] = []  # other requests' events seen while waiting
        self._threads = [
            threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read(self, stream: IO[str] | None) -> None:
        assert stream is not None
        for line in stream:
            self._events.put(json.loads(line))
        self._events.put(None)

    def _drain(self, stream: IO[str] | None) -> None:
        assert stream is not None
        self.stderr.extend(stream)

    def event(self) -> dict[str, Any]:
        """The next event; fails the test on EOF or after EVENT_TIMEOUT_S."""
        event = self._events.get(timeout=EVENT_TIMEOUT_S)
        assert event is not None, f"the engine closed stdout: {''.join(self.stderr)}"
        return event

    def send_line(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def send(self, *requests: dict[str, Any]) -> None:
        """Writes every request in one write, so the engine reads them together."""
        self.send_line("\n".join(json.dumps(r) for r in requests))

    def until_terminal(self, request_id: str) -> list[dict[str, Any]]:
        """Events up to and including `request_id`'s done or error (others' are kept aside)."""
        events = []
        while True:
            event = self.event()
            if event.get("id") != request_id:
                self.aside.append(event)
                continue
            events.append(event)
            if event["event"] in ("done", "error"):
                return events

    def request(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self.send(request)
        return self.until_terminal(request["id"])

    def close(self, timeout: float = 60.0) -> int:
        """Closes stdin (EOF) and returns the exit code."""
        assert self.process.stdin is not None
        if not self.process.stdin.closed:
            self.process.stdin.close()
        return self.process.wait(timeout=timeout)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.close()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def terminal(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The terminal event of a request's events."""
    assert events and events[-1]["event"] in ("done", "error"), events
    return events[-1]


@dataclass(frozen=True)
class PrefixReuseTurns:
    """What `prefix_reuse_turns` saw: the two warm turns' reused prompt tokens and tokens, and
    the same prompts' tokens from cold runs (`reuse_prefix: false`)."""

    follow: list[int]
    reused: tuple[int, int]
    warm: tuple[list[int], list[int]]
    cold: tuple[list[int], list[int]]


def prefix_reuse_turns(engine: Engine, ids: list[int], extra: list[int], branch_tail: list[int],
                       keep: int = 40, new_tokens: int = 20) -> PrefixReuseTurns:  # fmt: skip
    """The engine's prefix reuse across turns: turn 1 generates after `ids`; turn 2 follows
    it up (`ids`, turn 1's tokens, `extra`), reusing what turn 1 left; turn 3 branches after
    `keep` tokens of turn 2's prompt (`branch_tail` after them), reusing `keep` while slots past
    them still hold turn 2's. Then both prompts again from scratch. Greedy, eos ignored."""

    def generate(rid: str, prompt: list[int], **fields: Any) -> dict[str, Any]:
        request: dict[str, Any] = {"id": rid, "op": "generate", "prompt_ids": prompt}
        request.update(max_new_tokens=new_tokens, ignore_eos=True, **fields)
        done = terminal(engine.request(request))
        assert done["event"] == "done", done
        return done

    turn1 = generate("t1", ids)
    follow = [*ids, *turn1["tokens"], *extra]
    turn2 = generate("t2", follow)
    branch = [*follow[:keep], *branch_tail]
    turn3 = generate("t3", branch)
    cold2 = generate("c2", follow, reuse_prefix=False)
    cold3 = generate("c3", branch, reuse_prefix=False)
    return PrefixReuseTurns(
        follow=follow,
        reused=(turn2["usage"]["reused_prompt_tokens"], turn3["usage"]["reused_prompt_tokens"]),
        warm=(turn2["tokens"], turn3["tokens"]),
        cold=(cold2["tokens"], cold3["tokens"]),
    )


def cli_tokens(binary: Path, bundle: Path, prompt: list[int], new: int) -> list[int]:
    """The tokens one-shot `trt-edge-run --generate` makes for `prompt`: what a served
    request is compared with."""
    argv = [str(binary), "--bundle", str(bundle), "--generate", "--json", "--max-new-tokens"]
    argv += [str(new), "--prompt-ids", ",".join(map(str, prompt))]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr
    tokens: list[int] = json.loads(done.stdout)["tokens"]
    return tokens
