"""Run a rollout: read the bundle, plan the waves, run `ansible-playbook` once per wave, stop
when the failure threshold is crossed, and turn the devices' JSON reports into the report.

The work directory keeps everything Ansible saw (playbook, vars, hosts per wave,
logs, per-device reports), so a rollout can be audited after the fact.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from trt_edge_runner.agent.errors import AgentError
from trt_edge_runner.agent.health import decode_health
from trt_edge_runner.agent.reports import CommandFailure, decode_status
from trt_edge_runner.agent.tarball import open_bundle_tar
from trt_edge_runner.bundle_format import BUNDLE_JSON, BundleManifest
from trt_edge_runner.durable import atomic_file, make_writable_dir, write_atomic
from trt_edge_runner.errors import EXIT_FAILED
from trt_edge_runner.schemas import DocumentError
from trt_edge_runner.signature import SignatureError, parse_canonical_manifest

from trt_edge.fleet.errors import RolloutError
from trt_edge.fleet.halt import Tally, halt_after_wave
from trt_edge.fleet.inventory import Device, ansible_tool, load_inventory
from trt_edge.fleet.metrics_gate import MetricsThresholds, MetricsVerdict, judge
from trt_edge.fleet.plan import MetricsGate, RolloutPlan
from trt_edge.fleet.playbook import metrics_playbook_yaml, playbook_yaml, rollback_playbook_yaml
from trt_edge.fleet.report import (
    DeviceReport,
    DeviceResult,
    MetricsReport,
    RollbackReport,
    RolloutReport,
    decode_device_report,
    decode_metrics_report,
    decode_rollback_report,
)
from trt_edge.fleet.schedule import Schedule, plan_waves
from trt_edge.signing.pack import pack_bundle


@dataclass(frozen=True)
class BundleFacts:
    tar: Path
    manifest: BundleManifest


def read_bundle(path: Path, workdir: Path) -> BundleFacts:
    """The bundle `.tar` to ship (a directory is packed first) and its manifest."""
    if path.is_dir():  # packed with the checks of `trt-edge pack` (signed, intact)
        path = pack_bundle(path, workdir / f"{path.name}.tar").tar
    if not path.exists():
        raise RolloutError(f"{path}: bundle not found (the plan's `bundle:`)")
    try:
        with open_bundle_tar(path) as bundle_tar:
            document = bundle_tar.read_document(BUNDLE_JSON)
        manifest = parse_canonical_manifest(document, f"{path}:{BUNDLE_JSON}")
    except (AgentError, SignatureError) as exc:
        raise RolloutError(str(exc)) from None
    return BundleFacts(path, manifest)


def _delta_seconds(delta: str) -> float | None:
    """Ansible's command `delta` ("0:00:01.234567") in seconds; None when the command did
    not run (`""`) or the text is not one."""
    parts = delta.split(":")
    if len(parts) != 3:
        return None
    try:
        hours, minutes, seconds = (float(part) for part in parts)
    except ValueError:
        return None
    return hours * 3600 + minutes * 60 + seconds


def _last_line(text: str) -> str:
    """A device command's error line: the last unindented one (a `  hint:` line follows it)."""
    lines = [line for line in text.splitlines() if line.strip()]
    unindented = [line for line in lines if not line[0].isspace()]
    return (unindented or lines)[-1].strip() if lines else ""


def _document_line(stdout: str) -> str:
    """The `--json` document a device command printed: its last stdout line (the device
    commands print one line; anything before it is not theirs)."""
    lines = stdout.strip().splitlines()
    return lines[-1] if lines else ""


Report = TypeVar("Report")


def read_report(path: Path, decode: Callable[[bytes, str], Report]) -> Report | RolloutError | None:
    """The device's report at `path` through its decode function: None when the device wrote
    none (it is unreachable), the RolloutError when what it wrote is not a report (the device
    failed; the error names the file and the field)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return decode(data, str(path))
    except RolloutError as exc:
        return exc


def _status_version(stdout: str, source: str) -> tuple[str | None, str]:
    """The version a device's `status --json` output (a report's `before`/`after`) says it
    runs, and "" or why it cannot be read (`FILE: FIELD: what`): the device's outcome does
    not depend on it, the report's row says it."""
    line = _document_line(stdout)
    if not line:
        return None, ""
    try:
        return decode_status(line, source).version, ""
    except DocumentError as exc:
        return None, f"unreadable status: {exc}"


def _health_reason(report: DeviceReport, source: str) -> str:
    """Why the health gate failed: the report's reason (or the command's error, when it
    could not judge), else its error line, else why its output cannot be read."""
    line = _document_line(report.health_stdout)
    problem = ""
    if line:
        try:
            health = decode_health(line, f"{source}: health_stdout")
        except DocumentError as exc:
            problem = str(exc)
        else:
            reason = health.error if isinstance(health, CommandFailure) else health.reason
            if reason:
                return reason
    return _last_line(report.health_stderr) or problem


def device_result(
    host: str,
    wave: int,
    report: DeviceReport | RolloutError | None,
    *,
    log: Path,
    source: str,
) -> DeviceResult:
    """One device's outcome from the report it wrote to `source` (`read_report`): its
    absence is unreachable, one that does not decode is failed naming the file and field."""
    if report is None:
        return DeviceResult(
            host, "unreachable", wave, reason=f"no report from the device; see {log}"
        )
    if isinstance(report, RolloutError):
        return DeviceResult(host, "failed", wave, reason=f"report refused: {report}")
    old_version, old_problem = _status_version(report.before, f"{source}: before")
    new_version, new_problem = _status_version(report.after, f"{source}: after")
    result = DeviceResult(
        host=host,
        result="updated",
        wave=wave,
        old_version=old_version,
        new_version=new_version,
        install_seconds=_delta_seconds(report.install_delta),
        health_seconds=_delta_seconds(report.health_delta),
        reason="; ".join(p for p in (old_problem, new_problem) if p),
    )
    if report.t0 is not None and report.t1 is not None:
        result.seconds = round(report.t1 - report.t0, 3)
    if not report.failed:
        return result
    result.result = "failed"
    if report.stage == "health":
        if report.rollback_rc == 0:
            result.result = "rolled_back"
        rollback_error = _last_line(report.rollback_stderr)
        suffix = "" if report.rollback_rc == 0 else f"; rollback failed: {rollback_error}"
        result.reason = f"health gate failed: {_health_reason(report, source)}{suffix}"
    elif report.stage == "trust":
        reason = _last_line(report.trust_stderr) or report.failed_msg
        result.reason = f"trust documents refused, nothing installed: {reason}"
    elif report.stage == "install":
        reason = _last_line(report.install_stderr) or report.failed_msg
        result.reason = f"install refused, previous model kept: {reason}"
    else:
        result.reason = f"{report.failed_task or report.stage}: {report.failed_msg}"
    return result


def _ansible_env(plan: RolloutPlan, workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "ANSIBLE_FORKS": str(plan.forks),
            "ANSIBLE_RETRY_FILES_ENABLED": "False",
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_PYTHON_INTERPRETER": env.get("ANSIBLE_PYTHON_INTERPRETER", "auto_silent"),
            "ANSIBLE_LOCAL_TEMP": str(workdir / "ansible-tmp"),
        }
    )
    return env


def prepare_workdir(workdir: Path | None) -> Path:
    """The work directory, created and proven writable before anything is planned or run.

    `--workdir` naming a file, or a directory this user cannot write, is bad input
    (exit 2) found before any device is touched.
    """
    if workdir is None:
        return Path(tempfile.mkdtemp(prefix="trt-edge-rollout-"))
    why = make_writable_dir(workdir)
    if why is not None:
        raise RolloutError(
            f"--workdir {workdir}: cannot use it as the rollout's work directory "
            f"({why}); pass a writable directory (it is created if missing)"
        )
    return workdir


def _write_text(path: Path, text: str) -> None:
    """Files the report points to are replaced whole (temp + rename), never left torn."""
    write_atomic(path, text.encode("utf-8"))


def _run_logged(command: list[str], env: dict[str, str], log: Path) -> None:
    """Run `command` with its output in a temp file beside `log`, renamed into place at the end."""
    with atomic_file(log, mode=0o600) as out:
        subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)


def run_rollout(
    plan: RolloutPlan,
    inventory: Path,
    *,
    dry_run: bool = False,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> RolloutReport:
    """Run `plan` on `inventory` wave by wave (with `dry_run`: write and check, run nothing).

    Each wave is one `ansible-playbook` run, then the live-traffic gate if the plan has
    one; the halt rule (`halt.halt_after_wave`) decides after each wave whether the
    rest is not attempted. The report records every device, run or not.
    """
    say = progress or (lambda _m: None)
    workdir = prepare_workdir(workdir)
    bundle = read_bundle(plan.bundle, workdir)
    manifest = bundle.manifest
    devices = load_inventory(inventory)
    schedule: Schedule = plan_waves(devices, manifest.target, plan.groups, plan.waves)
    report = RolloutReport(
        bundle=str(bundle.tar),
        name=manifest.name,
        version=manifest.version,
        target=manifest.target,
        dry_run=dry_run,
        waves=[[d.name for d in wave] for wave in schedule.waves],
    )
    for skipped in schedule.skipped:
        report.devices.append(DeviceResult(skipped.device.name, "skipped", reason=skipped.reason))
    playbook = workdir / "rollout.yml"
    _write_text(playbook, playbook_yaml())
    extra = _playbook_vars(plan, bundle.tar)
    say(
        f"{manifest.name} {manifest.version} for {manifest.target.get('id', '?')}: "
        f"{schedule.eligible} eligible, {len(schedule.skipped)} skipped, "
        f"waves {[len(w) for w in schedule.waves]}"
    )
    env = _ansible_env(plan, workdir)
    (workdir / "ansible-tmp").mkdir(exist_ok=True)
    tally = Tally()
    for number, in_wave in enumerate(schedule.waves, start=1):
        wave = _write_wave(number, in_wave, extra, inventory, playbook, workdir)
        if dry_run or report.halted:
            reason = "dry run" if dry_run else f"not attempted: {report.halt_reason}"
            outcome = "planned" if dry_run else "not_attempted"
            report.devices += [
                DeviceResult(d.name, outcome, number, reason=reason) for d in in_wave
            ]
            if dry_run and number == 1:
                _syntax_check(wave.command, env, workdir)
            continue
        run = _Run(wave.command, wave.vars_file, env, workdir, say)
        results = _run_wave(wave, run)
        report.waves_run = number
        report.devices.extend(results)
        gate_failed: list[DeviceResult] = []
        if plan.health.metrics is not None:
            gate_failed = _live_traffic_gate(results, number, plan.health.metrics, manifest, run)
        tally = tally.after(results)
        halt = halt_after_wave(plan.failure_threshold, plan.on_halt, tally, number, results)
        if halt is not None:
            report.halted, report.halt_reason = True, halt.reason
            say(f"HALT: {halt.reason}")
        halted_wave = list(halt.roll_back) if halt is not None else []
        if gate_failed or halted_wave:
            _roll_back(gate_failed, halted_wave, number, run)
    return report


def _playbook_vars(plan: RolloutPlan, tar: Path) -> dict[str, Any]:
    """The variables every wave's playbook gets (each wave adds its number and report folder)."""
    return {
        "trt_edge_bundle_src": str(tar.resolve()),
        "trt_edge_bundle_name": tar.name,
        "trt_edge_remote_dir": plan.remote_dir,
        "trt_edge_cli": plan.device_cli,
        "trt_edge_max_regression": plan.health.max_latency_regression,
        "trt_edge_runs": plan.health.runs,
        "trt_edge_allow_downgrade": plan.allow_downgrade,
        "trt_edge_trust_files": [
            {"src": str(p), "dest": f"{plan.remote_dir}/{p.name}"} for p in plan.trust
        ],
    }


@dataclass(frozen=True)
class _Wave:
    """One wave's files in the work directory and the `ansible-playbook` command that runs it."""

    number: int
    devices: tuple[Device, ...]
    command: list[str]
    vars_file: Path
    report_dir: Path


def _write_wave(
    number: int,
    devices: tuple[Device, ...],
    extra: dict[str, Any],
    inventory: Path,
    playbook: Path,
    workdir: Path,
) -> _Wave:
    """Write wave `number`'s hosts and vars files (a dry run keeps them too, for audit)."""
    hosts_file = workdir / f"wave-{number}.hosts"
    _write_text(hosts_file, "".join(f"{d.name}\n" for d in devices))
    vars_file = workdir / f"wave-{number}.vars.json"
    report_dir = workdir / f"wave-{number}-reports"
    report_dir.mkdir(exist_ok=True)
    _write_text(
        vars_file,
        json.dumps({**extra, "trt_edge_wave": number, "trt_edge_report_dir": str(report_dir)}),
    )
    command = [
        ansible_tool("ansible-playbook"),
        "-i",
        str(inventory),
        str(playbook),
        "--limit",
        f"@{hosts_file}",
        "-e",
        f"@{vars_file}",
    ]
    return _Wave(number, devices, command, vars_file, report_dir)


def _run_wave(wave: _Wave, run: _Run) -> list[DeviceResult]:
    """Run the wave's playbook (its log beside it) and read each device's report."""
    names = ", ".join(d.name for d in wave.devices[:5])
    run.say(f"wave {wave.number}: {len(wave.devices)} device(s): {names}…")
    log = run.workdir / f"wave-{wave.number}.log"
    _run_logged(wave.command, run.env, log)
    results = []
    for device in wave.devices:
        path = wave.report_dir / f"{device.name}.json"
        report = read_report(path, decode_device_report)
        results.append(device_result(device.name, wave.number, report, log=log, source=str(path)))
    return results


@dataclass(frozen=True)
class _Run:
    """How a wave's extra playbooks run: the wave's command (tool and inventory), its vars
    file, the environment, the work directory and the progress callback."""

    wave_command: list[str]
    vars_file: Path
    env: dict[str, str]
    workdir: Path
    say: Callable[[str], None]

    def playbook(
        self, name: str, yaml_text: str, hosts: list[str], extra: dict[str, Any]
    ) -> tuple[Path, Path]:
        """Run `yaml_text` (written as `NAME.yml`) on `hosts` with the wave's vars plus
        `extra` and a fresh report directory; (report directory, log)."""
        playbook = self.workdir / f"{name.split('-', 2)[-1]}.yml"
        _write_text(playbook, yaml_text)
        hosts_file = self.workdir / f"{name}.hosts"
        _write_text(hosts_file, "".join(f"{host}\n" for host in hosts))
        report_dir = self.workdir / f"{name}-reports"
        report_dir.mkdir(exist_ok=True)
        wave_vars = json.loads(self.vars_file.read_text(encoding="utf-8"))
        vars_file = self.workdir / f"{name}.vars.json"
        doc = {**wave_vars, **extra, "trt_edge_report_dir": str(report_dir)}
        _write_text(vars_file, json.dumps(doc))
        command = [self.wave_command[0], "-i", self.wave_command[2], str(playbook)]
        command += ["--limit", f"@{hosts_file}", "-e", f"@{vars_file}"]
        log = self.workdir / f"{name}.log"
        _run_logged(command, self.env, log)
        return report_dir, log


def _roll_back(
    gate_failed: list[DeviceResult], halted: list[DeviceResult], number: int, run: _Run
) -> None:
    """One run of the rollback playbook for wave `number`: the devices that failed the
    live-traffic gate and, after a halt with `on_halt: rollback_wave`, the wave's updated
    ones (one `ansible-playbook` run, not one per reason). A device that went back is
    `rolled_back` on the version it runs now; its reason says why it went back, or why
    the rollback failed."""
    if gate_failed:
        run.say(f"wave {number}: rolling back {len(gate_failed)} device(s) that failed the gate")
    if halted:
        run.say(f"rolling wave {number} back on {len(halted)} updated device(s)")
    devices = [(d, False) for d in gate_failed] + [(d, True) for d in halted]
    report_dir, log = run.playbook(
        f"wave-{number}-rollback", rollback_playbook_yaml(), [d.host for d, _ in devices], {}
    )
    for device, after_halt in devices:
        path = report_dir / f"{device.host}.json"
        report = read_report(path, decode_rollback_report)
        done = isinstance(report, RollbackReport) and report.rollback_rc == 0
        problem = ""
        if isinstance(report, RollbackReport) and done:
            device.result = "rolled_back"
            device.new_version, problem = _status_version(report.after, f"{path}: after")
        if after_halt:
            device.reason = (
                f"wave {number} rolled back after the halt"
                if done
                else f"wave {number} rollback after the halt failed: {_rollback_error(report, log)}"
            )
        elif not done:
            device.reason += f"; rollback failed: {_rollback_error(report, log)}"
        if problem:
            device.reason = f"{device.reason}; {problem}" if device.reason else problem


def _rollback_error(report: RollbackReport | RolloutError | None, log: Path) -> str:
    """Why a device's rollback run failed, for its reason (unused when it did not)."""
    if report is None:
        return f"no report, see {log}"
    if isinstance(report, RolloutError):
        return f"report refused: {report}"
    return _last_line(report.rollback_stderr) or (
        f"exit code {report.rollback_rc}, no error output; see {log}"
    )


def _live_traffic_gate(
    results: list[DeviceResult],
    number: int,
    gate: MetricsGate,
    manifest: BundleManifest,
    run: _Run,
) -> list[DeviceResult]:
    """`health.metrics` on the wave's updated devices: scrape each service's `/metrics`
    twice over the window (Ansible, on the device) and judge the deltas on this host. A
    device that crossed a threshold is failed (counted against the failure threshold like
    a failed smoke-run gate); they are returned for the wave's rollback run."""
    updated = [d for d in results if d.result == "updated"]
    if not updated:
        return []
    run.say(
        f"wave {number}: live-traffic gate on {len(updated)} device(s), window {gate.window_s:g} s"
    )
    extra = {
        "trt_edge_metrics_port": gate.port,
        "trt_edge_metrics_path": gate.path,
        "trt_edge_metrics_window": gate.window_s,
    }
    report_dir, log = run.playbook(
        f"wave-{number}-metrics", metrics_playbook_yaml(), [d.host for d in updated], extra
    )
    thresholds = gate.thresholds()
    expected = {"name": manifest.name, "version": manifest.version}
    failing = []
    for device in updated:
        report = read_report(report_dir / f"{device.host}.json", decode_metrics_report)
        verdict = metrics_verdict(device.host, report, thresholds, expected, log)
        device.metrics = verdict.figures
        if verdict.ok:
            device.reason = "; ".join(verdict.notes)
            continue
        device.result = "failed"
        device.reason = "live-traffic gate failed: " + "; ".join(verdict.failures)
        failing.append(device)
    return failing


def metrics_verdict(
    host: str,
    report: MetricsReport | RolloutError | None,
    thresholds: MetricsThresholds,
    expected: dict[str, str],
    log: Path,
) -> MetricsVerdict:
    """One device's live-traffic verdict from what its gate playbook reported
    (`read_report`): none, or one that does not decode, fails the gate."""
    if report is None:
        return MetricsVerdict(host, failures=[f"{host}: no report from the device; see {log}"])
    if isinstance(report, RolloutError):
        return MetricsVerdict(host, failures=[f"{host}: report refused: {report}"])
    for status, error in zip(report.status, report.error, strict=True):
        if status != 200:
            return MetricsVerdict(
                host,
                failures=[
                    f"{host}: cannot scrape {report.url} (HTTP {status}: "
                    f"{error or 'no answer'}); is `trt-edge-device serve` running there?"
                ],
            )
    return judge(host, report.metrics[0], report.metrics[1], thresholds, expected)


def _syntax_check(command: list[str], env: dict[str, str], workdir: Path) -> None:
    """`ansible-playbook --syntax-check`: a dry run proves the rendered playbook parses."""
    result = subprocess.run(
        [*command, "--syntax-check"], capture_output=True, text=True, env=env, check=False
    )
    if result.returncode != 0:
        raise RolloutError(
            f"{workdir / 'rollout.yml'}: rendered playbook fails ansible-playbook "
            f"--syntax-check:\n{result.stdout}{result.stderr}",
            exit_code=EXIT_FAILED,
        )
