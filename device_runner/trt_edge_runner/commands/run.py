"""`trt-edge-device run BUNDLE (--phase P | --profile N | --auto)`: execute a bundle once.

Inputs are random (integer inputs drawn from their declared `values`) and sized
by `--dims sym=v`, else by the opt of the profile the request names (profile 0's
for auto), or read from `--inputs FILE.npz` keyed by input name. Prints each
output's name, shape and dtype, the profile used and the latency; `--json` for
machines, `--save-outputs FILE.npz` to compare runs.

Two engines execute it. On a device (`trt-edge-device run`) the default is the C++
runner `trt-edge-run` as a child process (found by `--runner`, `$TRT_EDGE_RUNNER`,
device.json `runner`, PATH): no torch, executorch or numpy needed; `.npz` files are
unpacked and packed with the standard library. On the host (`trt-edge run`, the
same command built by `make_command("python")`) the default is ExecuTorch's
Python runtime; `--engine` picks the other. Both apply the same policy (shared
vectors), so a laptop and a device accept, refuse and print the same thing for
the same bundle. A bad request or input (unknown phase, pin, shape, values, a
missing bundle directory) is exit 2; a bundle or runtime that fails (integrity,
loading, executing, a runner crash) is exit 1: each error's own code.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trt_edge_runner.agent.config import add_config_argument, add_runner_arguments
from trt_edge_runner.agent.smoke import executor_name, open_runner
from trt_edge_runner.bundle_integrity import read_manifest
from trt_edge_runner.cli_args import (
    add_bundle_argument,
    add_json_argument,
    add_verbose_argument,
    at_least,
    require_dir,
    require_path,
)
from trt_edge_runner.cli_shell import AddArguments, Command
from trt_edge_runner.errors import InputSpecError
from trt_edge_runner.npy_archive import pack_npz, unpack_npz
from trt_edge_runner.policy import Request
from trt_edge_runner.runner import Runner
from trt_edge_runner.tensors import check_output_path, load_npz, named, random_inputs, save_npz

PROFILE_INDEX = at_least(0, "a profile index", "; use --auto for shape-based selection")

# json/logging are imported where used: the host's `trt-edge --help` imports this module.
if TYPE_CHECKING:
    from pathlib import Path

    from trt_edge_runner.agent.runner_process import RunnerProcess
    from trt_edge_runner.bundle_format import BundleManifest
    from trt_edge_runner.runner import Runner, Target


def arguments_for(default_executor: str) -> AddArguments:
    """`add_arguments` of the command whose engine is `default_executor` unless told."""

    def add(parser: argparse.ArgumentParser) -> None:
        add_arguments(parser)
        add_runner_arguments(parser, default_executor)
        add_config_argument(parser)
        parser.set_defaults(default_executor=default_executor)

    return add


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle_argument(parser, help="bundle directory (holds bundle.json and model.pte)")
    request = parser.add_mutually_exclusive_group(required=True)
    request.add_argument("--phase", help="a phase of the bundle's runtime policy, e.g. decode")
    request.add_argument("--profile", type=PROFILE_INDEX, help="pin this profile index")
    request.add_argument("--auto", action="store_true", help="select from the input shapes")
    parser.add_argument(
        "--dims",
        nargs="+",
        default=[],
        metavar="SYM=V",
        help="symbol values for random inputs, e.g. seq=128 (default: the profile's opt)",
    )
    parser.add_argument(
        "--inputs", metavar="FILE.npz", help="inputs keyed by input name (.npz, or a dir of .npy)"
    )
    parser.add_argument("--save-outputs", metavar="FILE.npz", help="write outputs by name")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument(
        "--check-values", action="store_true", help="also check integer inputs against values"
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="skip the sha256/size check of bundle files"
    )
    add_json_argument(parser)
    add_verbose_argument(parser)


def parse_dims(items: list[str], manifest: BundleManifest) -> dict[str, int]:
    """`["seq=8"]` → `{"seq": 8}`, naming a bad item or an unknown symbol."""
    known = manifest.symbols()
    dims: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise InputSpecError(f"--dims {item!r}: expected SYM=INT, e.g. seq=128")
        if name not in known:
            raise InputSpecError(
                f"--dims {item!r}: the bundle has no symbol {name!r} "
                f"(symbols: {', '.join(known) or 'none'})"
            )
        dims[name] = int(value)
    return dims


def target_of(args: argparse.Namespace) -> Target:
    if args.phase is not None:
        return str(args.phase)
    if args.profile is not None:
        return int(args.profile)
    return Request.auto()


def default_dims(runner: Runner, target: Target) -> dict[str, int]:
    """The opt of the profile `target` pins (profile 0 for auto or out-of-range pins)."""
    request = runner.request_for(target)
    profiles = runner.manifest.profiles
    index = request.index if request.kind == "pinned" and request.index is not None else 0
    if not profiles:
        return {}
    return profiles[index if 0 <= index < len(profiles) else 0].opt_symbols()


def configure_logging(prog: str) -> None:
    """Runner warnings (profile 0 only, pin ignored) go to stderr once, prefixed.

    Importing the ExecuTorch runtime imports `executorch.exir`, which imports
    torchao; its optional CUDA kernels fail to load on a CPU machine and it logs
    that as a warning. That is noise to someone running a bundle, so those two
    loggers are raised to ERROR here (the CLI only; library users keep theirs).
    """
    for noisy in ("torchao", "torch.utils._pytree"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{prog}: warning: %(message)s"))
    logger = logging.getLogger("trt_edge_runner")
    if not any(getattr(h, "_trt_edge", False) for h in logger.handlers):
        handler._trt_edge = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False


def run(args: argparse.Namespace) -> int:
    """The whole command, on the engine asked for (`trt-edge run` is this same command)."""
    if executor_name(args, default=args.default_executor) == "python":
        return run_python(args)
    return run_cpp(args)


def run_python(args: argparse.Namespace) -> int:
    """Execute in this process with ExecuTorch's Python runtime (imports torch)."""

    configure_logging(args.command_prog)
    require_dir(args.bundle, "bundle directory")
    if args.inputs:
        require_path(args.inputs, "inputs file or directory", option="--inputs")
    if args.save_outputs:
        check_output_path(args.save_outputs)
    runner = Runner.open(
        args.bundle,
        verify_files=not args.no_verify,
        runtime_logs=True if args.verbose else None,
    )
    target = target_of(args)
    if args.inputs:
        inputs = load_npz(args.inputs, runner.manifest)
        dims: dict[str, int] = {}
    else:
        dims = default_dims(runner, target)
        dims.update(parse_dims(args.dims, runner.manifest))
        inputs = random_inputs(runner.manifest, dims, seed=args.seed)
    result = runner.run(target, inputs, check_values=args.check_values or None)
    outputs = named(runner.manifest.outputs, result.outputs)
    if args.save_outputs:
        save_npz(args.save_outputs, outputs)
    output_rows = [
        {"name": name, "shape": list(a.shape), "dtype": str(a.dtype)} for name, a in outputs.items()
    ]
    report: dict[str, Any] = {
        "bundle": str(runner.bundle_dir),
        "model": f"{runner.manifest.name} {runner.manifest.version}",
        "engine": "python",
        "mode": runner.mode,
        "request": str(result.request),
        "profile": result.profile,
        "profile_name": runner.manifest.profiles[result.profile].name,
        "outcome": result.outcome.value,
        "latency_ms": round(result.seconds * 1e3, 3),
        "inputs": [
            {"name": s.name, "shape": list(a.shape), "dtype": str(a.dtype)}
            for s, a in zip(runner.manifest.inputs, inputs, strict=True)
        ],
        "outputs": output_rows,
    }
    if args.save_outputs:
        report["saved_outputs"] = str(args.save_outputs)
    return print_report(args, report)


def print_report(args: argparse.Namespace, report: dict[str, Any]) -> int:
    """The one output of both engines: the report as JSON, or three lines for a person."""
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{report['model']}: profile {report['profile']} ({report['profile_name']}) "
        f"for request {report['request']}, {report['mode']} mode, "
        f"{report['latency_ms']} ms"
    )
    for entry in report["outputs"]:
        print(f"  output {entry['name']}: shape {entry['shape']} {entry['dtype']}")
    if args.save_outputs:
        print(f"  outputs written to {args.save_outputs}")
    return 0


def run_cpp(args: argparse.Namespace) -> int:
    """Execute in the C++ runner, a child process: standard library only on this side."""
    require_dir(args.bundle, "bundle directory")
    inputs = (
        require_path(args.inputs, "inputs file or directory", option="--inputs")
        if (args.inputs)
        else None
    )
    if args.save_outputs:
        check_output_path(args.save_outputs)
    _document, manifest = read_manifest(args.bundle)
    parse_dims(args.dims, manifest)  # the same messages as the Python engine's
    # No --version probe: the run's own document is checked (as health and generate do).
    runner = open_runner(args, probe=False)
    request = (
        ["--phase", str(args.phase)]
        if args.phase is not None
        else ["--profile", str(args.profile)]
        if args.profile is not None
        else ["--auto"]
    )
    argv = ["run", "--bundle", str(args.bundle), *request, "--seed", str(args.seed)]
    if args.dims:
        argv += ["--dims", *args.dims]
    if args.check_values:
        argv.append("--check-values")
    if args.no_verify:
        argv.append("--no-verify")
    with tempfile.TemporaryDirectory(prefix="trt-edge-run-") as scratch:
        if inputs is not None:
            names = [spec.name for spec in manifest.inputs]
            folder = inputs if inputs.is_dir() else unpack_npz(inputs, names, Path(scratch) / "in")
            argv += ["--inputs", str(folder)]
        if args.save_outputs:
            argv += ["--outputs", str(Path(scratch) / "out")]
        env = {"TRT_EDGE_RUNTIME_LOGS": "1"} if args.verbose else None
        doc = runner.run_json(argv, what=f"running {args.bundle}", env=env)
        if args.save_outputs:
            names = [entry["name"] for entry in doc["outputs"]]
            pack_npz(Path(scratch) / "out", names, Path(args.save_outputs))
    report: dict[str, Any] = {
        **cpp_report_head(args.bundle, runner, doc),
        "request": doc["request"],
        "profile": doc["profile"],
        "profile_name": doc["profile_name"],
        "outcome": doc["outcome"],
        "latency_ms": round(float(doc["latency_ms"]), 3),
        "inputs": doc["inputs"],
        "outputs": doc["outputs"],
    }
    if args.save_outputs:
        report["saved_outputs"] = str(args.save_outputs)
    return print_report(args, report)


def cpp_report_head(bundle: Path, runner: RunnerProcess, doc: dict[str, Any]) -> dict[str, Any]:
    """The fields every C++-runner report (`run --json`, `generate --json`) starts with: the
    bundle, its model, which runner binary answered and the mode it ran in."""
    return {
        "bundle": str(bundle),
        "model": f"{doc['model']['name']} {doc['model']['version']}",
        "engine": "cpp",
        "runner": str(runner.path),
        "mode": doc["mode"],
    }


def make_command(default_executor: str) -> Command:
    """`run` with `default_executor` ("cpp" on a device, "python" on the host)."""
    where = "the C++ runner trt-edge-run" if default_executor == "cpp" else "ExecuTorch's runtime"
    return Command(
        "execute a bundle once under a phase, a pinned profile or auto",
        description=f"Execute a bundle once with {where} (--engine picks the other), "
        "applying its profile policy (emulated on CPU backends). Inputs are random from the "
        "I/O spec (respecting `values`) unless --inputs is given.",
        add_arguments=arguments_for(default_executor),
        run=run,
    )


COMMAND = make_command("cpp")
