"""Test harness: run `trt-edge-device ARGS` in this process, reporting each step of the agent's
operation (install, rollback) as it completes, and optionally stopping (SIGSTOP) after one.

    python pause_driver.py [--pause STEP] ARGS...

Every completed step is printed to stderr as `step NAME +SECONDS` (seconds since the
driver started, monotonic), preceded by `step started +0.000`; with `--pause STEP` the
driver prints `paused after step STEP` and stops itself right after that step, so the
crash-safety test can SIGKILL it exactly there. The hooks are the agent's own
`STEP_OBSERVERS`, which the shipped CLI never fills: nothing here depends on how a
step does its work (the smoke run in-process or as a child `trt-edge-run`).
"""

from __future__ import annotations

import os
import signal
import sys
import time


def main(argv: list[str]) -> int:
    started = time.monotonic()
    print("step started +0.000", file=sys.stderr, flush=True)
    pause = None
    if argv[:1] == ["--pause"]:
        pause, argv = argv[1], argv[2:]

    from trt_edge_runner import device_cli
    from trt_edge_runner.agent.install import STEP_OBSERVERS

    def report(step: str) -> None:
        print(f"step {step} +{time.monotonic() - started:.3f}", file=sys.stderr, flush=True)
        if step == pause:
            print(f"paused after step {step}", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGSTOP)

    STEP_OBSERVERS.append(report)
    return device_cli.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
