"""The namespaced devices the pull-fleet tests run are what a device behind NAT is: it reaches
the operator's services, and nothing reaches it — not even SSH to a port it listens on."""

from __future__ import annotations

import http.server
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from tests.helpers.netns import OutboundOnlyHost, outbound_only_hosts, require_namespaces

pytestmark = pytest.mark.xdist_group("netns")

# A listener on port 22 inside the device's namespace, answering one line to whoever connects.
LISTENER = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 22)); s.listen(4); print("listening", flush=True)
s.settimeout(60)
while True:
    try:
        c, _ = s.accept()
    except TimeoutError:
        sys.exit(0)
    c.sendall(b"SSH-2.0-device\\r\\n"); c.close()
"""

# Opens a connection from inside the namespace and prints what came back.
CONNECT = """
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
print(c.recv(64).decode().strip())
"""


@pytest.fixture(scope="module")
def device() -> Iterator[OutboundOnlyHost]:
    require_namespaces()
    with outbound_only_hosts(1, first_index=201) as hosts:
        yield hosts[0]


def test_the_device_reaches_a_service_on_the_operators_side(device: OutboundOnlyHost) -> None:
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello from the operator")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer((device.gateway, 0), Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        code = (
            "import urllib.request, sys; "
            "print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())"
        )
        url = f"http://{device.gateway}:{port}/"
        done = device.run([sys.executable, "-c", code, url], timeout=30)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "hello from the operator"
    finally:
        server.shutdown()
        server.server_close()


def test_nothing_reaches_the_device_not_even_ssh(device: OutboundOnlyHost) -> None:
    listener = device.popen([sys.executable, "-c", LISTENER], stdout=subprocess.PIPE)
    try:
        assert listener.stdout is not None
        assert listener.stdout.readline().decode().strip() == "listening"
        # The port is open: from inside the device it answers ...
        inside = device.run([sys.executable, "-c", CONNECT, "127.0.0.1", "22"], timeout=30)
        assert inside.returncode == 0 and inside.stdout.strip() == "SSH-2.0-device", inside
        # ... and from the operator's side nothing gets through: a connection is dropped
        # unanswered (no refusal either), and the SSH client gives up.
        with pytest.raises(TimeoutError):
            socket.create_connection((device.address, 22), timeout=3)
        ssh = subprocess.run(
            [
                "ssh",
                "-o",
                "ConnectTimeout=3",
                "-o",
                "BatchMode=yes",
                "-o",
                "StrictHostKeyChecking=no",
                f"root@{device.address}",
                "true",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert ssh.returncode == 255, ssh
        assert "timed out" in ssh.stderr, ssh.stderr
    finally:
        listener.kill()
        listener.wait()
