"""Test harness: run `trt-edge-device ARGS` in this process, stopping (SIGSTOP) after STEP.

    python pause_driver.py STEP ARGS...

Registers a step observer on the real install transaction, so the crash-safety
test can SIGKILL the agent exactly after each named step; the shipped agent has
no such behaviour.
"""

from __future__ import annotations

import os
import signal
import sys


def main(argv: list[str]) -> int:
    from trt_edge_runner import device_cli
    from trt_edge_runner.agent.install import STEP_OBSERVERS

    stop_after, args = argv[0], argv[1:]

    def stop_at(step: str) -> None:
        if step == stop_after:
            print(f"paused after step {step}", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGSTOP)

    STEP_OBSERVERS.append(stop_at)
    return device_cli.main(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
