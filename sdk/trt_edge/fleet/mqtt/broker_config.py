"""`trt-edge fleet broker-config`: a mosquitto set-up where each device reaches only its own topics.

Writes into one folder:

    mosquitto.conf         one TLS listener, no anonymous clients, the files below
    passwd                 every client's password, hashed by `mosquitto_passwd -U`
    acl                    the operator reads every state, presence and ack and writes every
                           command; a device (`pattern ... %u`: its user name is its device
                           name) writes only its own state, presence and ack and reads only
                           its own command
    credentials/NAME.password   each client's password in clear (0600), to provision it
    ca.crt, ca.key, server.crt, server.key   a private CA and the broker's certificate
                           (`tls.py`), unless the fleet brings its own (--ca-cert,
                           --server-cert, --server-key)

Re-running with more devices keeps what exists — passwords, the CA, the server
certificate — so devices already provisioned keep working; only the files that depend on
the list (passwd, acl, mosquitto.conf) are rewritten, each atomically. The broker itself
(Debian's `mosquitto` 2.0) is started with `mosquitto -c FOLDER/mosquitto.conf`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from trt_edge_runner.durable import make_writable_dir, write_atomic
from trt_edge_runner.errors import Where
from trt_edge_runner.link import topics

from trt_edge.fleet.mqtt.errors import BrokerConfigError
from trt_edge.fleet.mqtt.tls import TlsFiles, make_ca_and_server

OPERATOR = "operator"
# What a device publishes (its own only) and the operator reads (every device's).
DEVICE_WRITES = (topics.STATE, topics.ONLINE, topics.ACK)


@dataclass(frozen=True)
class BrokerPlan:
    """What to write: the fleet, its devices, the listener, where the files go."""

    folder: Path
    fleet: str
    devices: tuple[str, ...]
    port: int = 8883
    bind: str = "0.0.0.0"
    hosts: tuple[str, ...] = ("localhost", "127.0.0.1")
    operator: str = OPERATOR
    run_as: str | None = None
    tls: TlsFiles | None = None  # the fleet's own; None: make a private CA


@dataclass(frozen=True)
class BrokerFiles:
    config: Path
    password_file: Path
    acl_file: Path
    credentials: dict[str, Path]
    tls: TlsFiles


def check_plan(plan: BrokerPlan) -> None:
    """Refuse names that cannot be topic levels, duplicates, and a device named like the
    operator (the ACL's pattern would hand it the operator's rights)."""
    for option, name in (("--fleet", plan.fleet), *(("--device", d) for d in plan.devices)):
        problem = topics.bad_name(name)
        if problem is not None:
            raise BrokerConfigError(problem, where=Where(option=option, value=name))
    if not plan.devices:
        raise BrokerConfigError("no devices", hint="name each device with --device NAME")
    if len(set(plan.devices)) != len(plan.devices):
        raise BrokerConfigError("a device is named twice", where=Where(option="--device"))
    if plan.operator in plan.devices:
        raise BrokerConfigError(
            f"a device may not be named {plan.operator!r}: that is the operator's account",
            where=Where(option="--device", value=plan.operator),
        )


def acl_text(fleet: str, operator: str) -> str:
    """The ACL: the operator's rights by name, every device's by the `%u` pattern."""
    lines = [f"user {operator}"]
    lines += [f"topic read {topics.topic(fleet, '+', kind)}" for kind in DEVICE_WRITES]
    lines += [f"topic write {topics.topic(fleet, '+', topics.COMMAND)}", ""]
    lines += ["# every other user is a device: its user name is its device name"]
    lines += [f"pattern write {topics.topic(fleet, '%u', kind)}" for kind in DEVICE_WRITES]
    lines += [f"pattern read {topics.topic(fleet, '%u', topics.COMMAND)}", ""]
    return "\n".join(lines)


def config_text(plan: BrokerPlan, tls: TlsFiles, password_file: Path, acl_file: Path) -> str:
    lines = [
        "# written by trt-edge fleet broker-config",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {password_file}",
        f"acl_file {acl_file}",
        "persistence false",
        # Commands and acks are small and answer each other: Nagle's algorithm against the
        # peer's delayed ACK would hold each for tens of milliseconds (bench_mqtt.py).
        "set_tcp_nodelay true",
        f"listener {plan.port} {plan.bind}",
        f"cafile {tls.ca_cert}",
        f"certfile {tls.server_cert}",
        f"keyfile {tls.server_key}",
        "tls_version tlsv1.2",
    ]
    if plan.run_as is not None:
        lines.insert(1, f"user {plan.run_as}")
    return "\n".join(lines) + "\n"


def _password(credentials: Path, name: str) -> str:
    """`name`'s password: the one already provisioned, else a new one (written 0600)."""
    path = credentials / f"{name}.password"
    if path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines()
        if lines and lines[0]:
            return lines[0]
    password = secrets.token_urlsafe(24)
    write_atomic(path, (password + "\n").encode("utf-8"), mode=0o600)
    return password


def _hashed_password_file(target: Path, passwords: dict[str, str]) -> None:
    """`target` holding every password hashed (PBKDF2-SHA512) by mosquitto's own tool."""
    tool = shutil.which("mosquitto_passwd")
    if tool is None:
        raise BrokerConfigError(
            "mosquitto_passwd is not on PATH: it hashes the broker's password file",
            hint="install the broker first (Debian: apt-get install mosquitto)",
        )
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.tmp-", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.writelines(f"{user}:{password}\n" for user, password in passwords.items())
        done = subprocess.run([tool, "-U", name], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise BrokerConfigError(
                f"mosquitto_passwd -U failed: {(done.stderr or done.stdout).strip()}",
                where=Where(target),
            )
        write_atomic(target, Path(name).read_bytes(), mode=0o600)
    finally:
        Path(name).unlink(missing_ok=True)


def write_broker_config(plan: BrokerPlan) -> BrokerFiles:
    """Write (or bring up to date) the broker's folder; BrokerConfigError naming what."""
    check_plan(plan)
    folder = plan.folder.resolve()
    why = make_writable_dir(folder / "credentials")
    if why is not None:
        raise BrokerConfigError(f"cannot write there ({why})", where=Where(folder, option="--out"))
    credentials = folder / "credentials"
    os.chmod(credentials, 0o700)
    tls = plan.tls or make_ca_and_server(folder, list(plan.hosts))
    passwords = {name: _password(credentials, name) for name in (plan.operator, *plan.devices)}
    files = BrokerFiles(
        config=folder / "mosquitto.conf",
        password_file=folder / "passwd",
        acl_file=folder / "acl",
        credentials={name: credentials / f"{name}.password" for name in passwords},
        tls=tls,
    )
    _hashed_password_file(files.password_file, passwords)
    write_atomic(files.acl_file, acl_text(plan.fleet, plan.operator).encode("utf-8"))
    write_atomic(
        files.config,
        config_text(plan, tls, files.password_file, files.acl_file).encode("utf-8"),
    )
    return files
