"""The C++ runner `trt-edge-run` as a child process: start it, time-limit it, read its JSON.

Why a child process and not a library call: ExecuTorch does not harden its loader
and kernels against every malformed program (measured: with full verification,
about 2 in 1,000 mutated `model.pte` still end in SIGSEGV or an abort from an
assert). In a child, such a death is *contained*: the agent sees the signal, names
it with the stage the runner announced last (`--progress`), and treats it as a
failed smoke run or health check; the previous model stays active.

Every outcome of a run is one of: the success document (`"interface": 1`,
`"ok": true`), a typed refusal (`RunnerRefused`: one of the exit codes of
`trt_edge_runner.runner_interface`, with its JSON error document), a death by a
signal or a timeout (`RunnerCrashed`), or a runner that cannot serve at all
(`RunnerBroken`: not executable, another architecture, no interface-1 JSON).

Standard library only: this is what lets a device run bundles with no torch,
executorch or numpy installed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import platform
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from trt_edge_runner.agent.config import FoundRunner
from trt_edge_runner.agent.errors import (
    RunnerBroken,
    RunnerCrashed,
    RunnerDocumentInvalid,
    RunnerRefused,
)
from trt_edge_runner.runner_interface import EXIT_KINDS, INTERFACE_VERSION, RUNNER_NAME
from trt_edge_runner.schemas import check

PROGRESS = f"{RUNNER_NAME}: progress: "
# Lines of the runner's stderr the agent reports itself (as a typed error), not again.
_OWN_LINES = (PROGRESS, f"{RUNNER_NAME}: error: ", f"{RUNNER_NAME}: fatal: ")
VERSION_TIMEOUT_S = 60.0

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Record = TypeVar("_Record", bound="DataclassInstance")

# ELF e_machine -> architecture, to say which one a binary was built for.
_ELF_MACHINES = {0x3E: "x86_64", 0xB7: "aarch64", 0x28: "arm", 0xF3: "riscv64", 0x03: "x86"}


_SCHEMAS = {
    "version": "runner-version",
    "load": "runner-load",
    "generate": "runner-generate",
    "phases": "runner-phases",
    "run": "runner-run",
}
# The flag-only form (`trt-edge-run --load ...`), which every runner still takes.
_FLAG_FORM = {
    "--version": "version",
    "--load": "load",
    "--generate": "generate",
    "--phases": "phases",
}


def _schema_for(argv: Sequence[str]) -> str:
    """The schema of the success document a command line (the program, then its arguments)
    asks for (trt_edge_runner/schemas): its subcommand's, or in the flag-only form its mode
    flag's."""
    if len(argv) > 1 and argv[1] in _SCHEMAS:
        return _SCHEMAS[argv[1]]
    for flag, subcommand in _FLAG_FORM.items():
        if flag in argv:
            return _SCHEMAS[subcommand]
    return _SCHEMAS["run"]


def _tupled(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def read_record(cls: type[_Record], obj: Mapping[str, Any]) -> _Record:
    """The record `cls` from an object of a runner document already checked against its
    schema (so every required field is there, of its type; an optional one the document
    omits keeps the record's default): lists become tuples, nothing else moves."""
    return cls(
        **{
            f.name: _tupled(obj[f.name])
            for f in dataclasses.fields(cls)
            if f.name in obj or not _has_default(f)  # a missing required field: KeyError
        }
    )


def _has_default(f: dataclasses.Field[Any]) -> bool:
    """Whether the record field `f` is optional in its document (it has a default)."""
    return f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING


@dataclass(frozen=True)
class PhaseRun:
    """One phase of a `--phases` run: what ran, on which profile, how long (ms)."""

    phase: str
    request: str
    profile: int
    profile_name: str
    outcome: str
    median_ms: float
    min_ms: float
    max_ms: float
    first_ms: float
    inputs: tuple[dict[str, Any], ...]
    outputs: tuple[dict[str, Any], ...]
    runs_ms: tuple[float, ...] = ()  # every timed run, in order (optional in the document)


@dataclass(frozen=True)
class GenerationStep:
    """One execution of a `--generate` run: the phase and profile, the positions it wrote."""

    phase: str
    profile: int
    start: int
    seq: int
    ms: float


@dataclass(frozen=True)
class GenerationRun:
    """A `--generate` document: the same fields `trt-edge generate --json` prints for ids
    (`prompt_ids`, `tokens`, `stop`, `steps`, `timings`), so one reader serves both."""

    contract: str  # "causal_lm" (bundle.json llm) or "tiny_llm" (caches passed in and out)
    prompt_ids: tuple[int, ...]
    max_new_tokens: int
    tokens: tuple[int, ...]
    stop: str  # "eos" or "max_new_tokens"
    steps: tuple[GenerationStep, ...]
    timings: dict[str, float | None]  # prefill_ms, time_to_first_token_ms, decode_ms_per_token,
    # decode_tokens_per_s, tokens_per_s, total_ms

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> GenerationRun:
        """The run of a document that matched `runner-generate` (`validate` first)."""
        return cls(
            contract=doc["contract"],
            prompt_ids=tuple(doc["prompt_ids"]),
            max_new_tokens=doc["max_new_tokens"],
            tokens=tuple(doc["tokens"]),
            stop=doc["stop"],
            steps=tuple(read_record(GenerationStep, s) for s in doc["steps"]),
            timings=dict(doc["timings"]),
        )


def elf_arch(path: Path) -> str | None:
    """The architecture an ELF binary was built for, or None if it is not one."""
    try:
        with path.open("rb") as handle:
            head = handle.read(20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
    return _ELF_MACHINES.get(machine, f"ELF machine {machine:#x}")


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _stage(stderr: str) -> str:
    stages = [line[len(PROGRESS) :] for line in stderr.splitlines() if line.startswith(PROGRESS)]
    return stages[-1] if stages else "starting"


def _last_words(stderr: str, count: int = 3) -> list[str]:
    """The runner's last stderr lines that are not its progress or error lines."""
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(PROGRESS)]
    return lines[-count:]


def passed_on(stderr: str) -> list[str]:
    """The runner's stderr lines worth showing the user: warnings and runtime log lines (a
    typed error is reported by the agent itself, once)."""
    return [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith(_OWN_LINES)]


@dataclass(frozen=True)
class RunnerProcess:
    """A found `trt-edge-run` (`open` checked it answers `--version --json`) and its limits."""

    found: FoundRunner
    facts: Mapping[str, Any]
    timeout_s: float

    @classmethod
    def open(cls, found: FoundRunner, timeout_s: float, *, probe: bool = True) -> RunnerProcess:
        """Check the runner starts and speaks interface 1 (`--version --json`; RunnerBroken or
        RunnerCrashed if not) and return it with its facts. `probe=False` skips the check
        (one process start fewer): every document it prints is checked anyway, so a broken
        runner is still found, at its first real run."""
        if not probe:
            return cls(found, {}, timeout_s)
        probe_run = cls(found, {}, VERSION_TIMEOUT_S)
        # The flag-only form on purpose: every runner ever shipped answers it, so the probe
        # reads an older runner's facts too instead of failing on the `version` subcommand.
        doc = probe_run.run_json(["--version", "--json"], what="answering --version")
        return cls(found, doc["runner"], timeout_s)

    @property
    def path(self) -> Path:
        return self.found.path

    # ---- running -------------------------------------------------------------------
    def _broken(self, why: str) -> RunnerBroken:
        return RunnerBroken(
            f"{RUNNER_NAME} {self.found}: {why}",
            hint="install the runner tarball of this agent's version for this machine "
            f"({platform.machine()}) and point --runner, $TRT_EDGE_RUNNER or device.json at it",
        )

    def _start_failed(self, exc: OSError) -> RunnerBroken:
        if exc.errno == errno.ENOEXEC:
            arch = elf_arch(self.path)
            built = f"it is an {arch} binary" if arch else "it is not a program for this machine"
            return self._broken(f"exec format error: {built}, this machine is {platform.machine()}")
        if exc.errno in (errno.EACCES, errno.EPERM):
            return self._broken("permission denied: not executable by this user")
        if exc.errno == errno.ENOENT:
            arch = elf_arch(self.path)
            why = (
                f"cannot be started: its program interpreter (dynamic loader) is missing; it is "
                f"an {arch} binary, this machine is {platform.machine()}"
                if arch and self.path.exists()
                else "no such file (removed since it was found?)"
            )
            return self._broken(why)
        return self._broken(f"cannot be started: {exc.strerror or exc}")

    def run_json(
        self,
        args: Sequence[str],
        *,
        what: str,
        env: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Run the runner with `args` (+ `--json --progress` when absent) and return its
        success document; every other outcome raises (see the module docstring).

        `what` completes "died of SIGSEGV while …" when the runner announced no stage.
        """
        argv = [str(self.path), *args]
        for flag in ("--json", "--progress"):
            if flag not in argv:
                argv.append(flag)
        try:
            # Its own session: on a timeout the whole group goes (a qemu-user launcher too).
            child = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                env=None if env is None else {**os.environ, **env},
                start_new_session=True,
            )
        except OSError as exc:
            raise self._start_failed(exc) from None
        try:
            stdout, stderr = child.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            _stdout, stderr = child.communicate()
            stage = _stage(stderr) if PROGRESS in stderr else what
            raise RunnerCrashed(
                f"{RUNNER_NAME} did not finish within {self.timeout_s:g} s while {stage}; "
                "it was killed (device.json runner_timeout_s sets the limit)",
                signal=None,
                stage=stage,
            ) from None
        except BaseException:  # interrupted (Ctrl-C): never leave the child running
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
        done = subprocess.CompletedProcess(argv, child.returncode, stdout, stderr)
        return self._document(done, what)

    def _document(self, done: subprocess.CompletedProcess[str], what: str) -> dict[str, Any]:
        stage = _stage(done.stderr) if PROGRESS in done.stderr else what
        if done.returncode >= 0:
            for line in passed_on(done.stderr):  # warnings, runtime log lines: the user's
                print(line, file=sys.stderr)
        if done.returncode < 0:
            name = signal_name(-done.returncode)
            last = _last_words(done.stderr)
            said = f" (its last words: {' | '.join(last)})" if last else ""
            raise RunnerCrashed(
                f"{RUNNER_NAME} died of {name} while {stage}{said}", signal=name, stage=stage
            )
        try:
            doc = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
        except json.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict) or "interface" not in doc:
            shown = done.stdout.strip()[:120] or "(nothing)"
            words = " | ".join(_last_words(done.stderr)) or "(nothing)"
            raise self._broken(
                f"exit {done.returncode} without a JSON document on stdout (stdout: {shown!r}; "
                f"stderr: {words}); is this trt-edge-run?"
            )
        if doc["interface"] != INTERFACE_VERSION:
            raise self._broken(
                f"speaks interface {doc['interface']!r}, this agent reads {INTERFACE_VERSION}: "
                "install the runner tarball of the same trt-edge version as the agent"
            )
        if done.returncode == 0 and doc.get("ok") is True:
            return self._checked(_schema_for(done.args), doc)
        kind = EXIT_KINDS.get(done.returncode)
        if kind is None or doc.get("ok") is not False:
            raise self._broken(
                f"exit {done.returncode} with a document that does not match it: "
                f"{json.dumps(doc)[:200]}"
            )
        error = self._checked("runner-error", doc)["error"]
        if error["kind"] != kind:
            raise self._broken(
                f"exit {done.returncode} ({kind}) with an error document of kind {error['kind']!r}"
            )
        raise RunnerRefused(
            error["message"],
            kind=kind,
            runner_exit_code=done.returncode,
            error=error,
        )

    def _checked(self, schema: str, doc: dict[str, Any]) -> dict[str, Any]:
        """`doc` if it matches its schema, else RunnerDocumentInvalid naming the field."""
        problem = check(schema, doc)
        if problem is None:
            return doc
        field, what = problem
        raise RunnerDocumentInvalid(
            f"{RUNNER_NAME} {self.found}: its document does not match {schema}.schema.json "
            f"(interface {INTERFACE_VERSION}): {field or 'the document'}: {what}",
            field=field,
            schema=schema,
            hint="install the runner tarball of the same trt-edge version as the agent",
        )

    # ---- the requests the agent makes ------------------------------------------------
    def run_phases(
        self, bundle_dir: Path, runs: int, *, warmup: int = 1, seed: int = 0
    ) -> tuple[dict[str, Any], list[PhaseRun]]:
        """Every phase of the bundle's runtime policy at its profile's opt shape: `warmup`
        untimed runs, then `runs` timed ones. The document and one PhaseRun per phase."""
        args = ["phases", "--bundle", str(bundle_dir), "--runs", str(runs)]
        args += ["--warmup", str(warmup), "--seed", str(seed)]
        doc = self.run_json(args, what=f"running {bundle_dir}")
        return doc, [read_record(PhaseRun, p) for p in doc["phases"]]

    def generate(
        self,
        bundle_dir: Path,
        prompt_ids: Sequence[int],
        max_new_tokens: int,
        *,
        verify: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> tuple[dict[str, Any], GenerationRun]:
        """Greedy generation (`trt-edge-run generate`): the prompt under the bundle's prefill
        phase, each new token under decode. The document and its typed reading."""
        args = ["generate", "--bundle", str(bundle_dir)]
        args += ["--prompt-ids", ",".join(str(t) for t in prompt_ids)]
        args += ["--max-new-tokens", str(max_new_tokens)]
        if not verify:
            args.append("--no-verify")
        doc = self.run_json(args, what=f"generating with {bundle_dir}", env=env)
        return doc, GenerationRun.from_document(doc)

    def load(self, bundle_dir: Path) -> dict[str, Any]:
        """Check and load the bundle (`trt-edge-run load`), executing nothing: its mode, phases,
        profiles."""
        return self.run_json(["load", "--bundle", str(bundle_dir)], what=f"loading {bundle_dir}")
