"""`make demo` step 7: the same bundle through the device service, one chat request.

Starts `trt-edge-device serve` on a free loopback port, waits until `/v2/health/ready` says the
model is loaded and its smoke run passed, sends one chat completion with the official `openai`
client (what applications speak), prints the answer and stops the service. Why a script and not
curl: a fresh machine may lack curl, and the openai client is the one the tests pin.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time

import httpx
import openai


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(base: str, service: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if service.poll() is not None:
            raise SystemExit(f"demo: the service exited with {service.returncode} before ready")
        try:
            if httpx.get(f"{base}/v2/health/ready", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"demo: the service was not ready within {seconds:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("bundle")
    parser.add_argument("--runner", required=True)
    parser.add_argument("--device-cli", default="trt-edge-device")
    parser.add_argument("--prompt", default="What does a KV cache hold?")
    args = parser.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [args.device_cli, "serve", "--bundle", args.bundle, "--runner", args.runner]
    service = subprocess.Popen([*cmd, "--port", str(port)])
    try:
        wait_ready(base, service, 120)
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused-on-loopback")
        model = client.models.list().data[0].id
        reply = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": args.prompt}],
            max_tokens=16,
            temperature=0,
        )
        choice = reply.choices[0]
        usage = reply.usage
        print(f"model {model}: {choice.message.content!r}")
        if usage is not None:
            print(
                f"finish {choice.finish_reason}, {usage.prompt_tokens} prompt tokens, "
                f"{usage.completion_tokens} completion tokens"
            )
        return 0
    finally:
        service.terminate()
        service.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
