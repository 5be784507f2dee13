"""The one command-line shell of `trt-edge` and `trt-edge-device`.

A command line is a package of command modules, one per sub-command (modules
named `main` or starting with `_` are not commands). Each defines
`COMMAND = Command(help=…, add_arguments=…, run=…)`, or `Command(help=…,
actions={…})` for a group such as `images build|list|…`. The shell does the rest,
once for both programs:

- discovery: a directory listing of the package (no imports, no pkgutil), and
  only the named command's module is imported (every one for `--help`, no
  command or a typo, so argparse can list them): start-up stays lean;
- `run(args)` returns 0, or 1 when the job ran and found problems (a failed
  health gate, a hash mismatch, a manifest with errors under `validate`);
  every other outcome is a raised `TrtEdgeError`;
- a `TrtEdgeError` is rendered as `PROG CMD: error: where: message`, then its
  details (manifest diagnostics with source line and caret), then
  `  hint: …`, and the process exits with `error.exit_code`; a command run
  with `--json` also gets the error's JSON document on stdout;
- Ctrl-C: one line `PROG CMD: interrupted`, exit 130;
- a reader that went away (`… | head -c1`): output stops quietly, exit 0;
- an `OSError` that escapes is an environment failure in the middle of a job
  (disk full, a file removed under us): commands check every path a user
  names before starting and raise a `UsageError` (exit 2) for it, so what
  escapes is rendered with its file name and exits 1.

Exit codes are those of `trt_edge_runner.errors` (docs/runner-interface.md has the table).
Standard library only, no dataclasses: this runs on every start-up, on devices too.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import Any, NamedTuple

from trt_edge_runner.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    TrtEdgeError,
)

NOT_COMMANDS = frozenset({"main"})

Run = Callable[[argparse.Namespace], int]
AddArguments = Callable[[argparse.ArgumentParser], None]


class Command(NamedTuple):
    """One sub-command: its one-line help, its arguments and what it does — or, for a
    group such as `images`, its `actions` (sub-commands of their own). One of `run`
    and `actions`, never both.

    `description` is the long text of `CMD --help`; by default the second
    paragraph of the command module's docstring (the first names the usage).
    """

    help: str
    run: Run | None = None
    add_arguments: AddArguments | None = None
    description: str | None = None
    actions: Mapping[str, Command] = MappingProxyType({})


class Shell:
    """A program (`trt-edge`, `trt-edge-device`) over one package of command modules."""

    def __init__(
        self,
        prog: str,
        package: ModuleType,
        *,
        description: str,
        version: str,
        help_order: Sequence[str] = (),
    ) -> None:
        self.prog = prog
        self.package = package
        self.description = description
        self.version = version
        self.help_order = tuple(help_order)

    # ---- discovery ----------------------------------------------------------------
    def command_names(self) -> list[str]:
        """Every public module of the package is a sub-command: adding one is adding a file."""
        names = {
            entry[:-3]
            for path in self.package.__path__
            for entry in os.listdir(path)
            if entry.endswith(".py") and not entry.startswith("_")
        } - NOT_COMMANDS
        rank = {name: i for i, name in enumerate(self.help_order)}
        return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))

    def command(self, name: str) -> Command:
        module = importlib.import_module(f"{self.package.__name__}.{name}")
        command = getattr(module, "COMMAND", None)
        if not isinstance(command, Command):
            raise TypeError(f"{module.__name__} defines no COMMAND = Command(...)")
        paragraphs = (module.__doc__ or "").split("\n\n")
        if command.description is None and len(paragraphs) > 1:
            return command._replace(description=paragraphs[1].strip())
        return command

    def commands(self) -> dict[tuple[str, ...], Command]:
        """Every runnable command by its words, e.g. `("validate",)`, `("images", "build")`."""
        found: dict[tuple[str, ...], Command] = {}

        def walk(path: tuple[str, ...], command: Command) -> None:
            if not command.actions:
                found[path] = command
            for name, action in command.actions.items():
                walk((*path, name), action)

        for name in self.command_names():
            walk((name,), self.command(name))
        return found

    def chosen_command(self, argv: Sequence[str]) -> str | None:
        """The sub-command named on the command line, if it is a known one (else None)."""
        for arg in argv:
            if arg.startswith("-"):
                if arg in {"-h", "--help", "--version"}:
                    return None
                continue
            return arg if arg in self.command_names() else None
        return None

    # ---- parsing ------------------------------------------------------------------
    def build_parser(self, only: str | None = None) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog=self.prog, description=self.description)
        parser.add_argument("--version", action="version", version=f"{self.prog} {self.version}")
        subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
        for name in [only] if only is not None else self.command_names():
            self._add(subparsers, (name,), self.command(name))
        return parser

    def _add(self, subparsers: Any, path: tuple[str, ...], command: Command) -> None:
        if (command.run is None) == (not command.actions):
            raise TypeError(f"{' '.join(path)}: a Command has either run or actions")
        parser = subparsers.add_parser(
            path[-1], help=command.help, description=command.description or command.help
        )
        if command.actions:
            actions = parser.add_subparsers(
                dest="_".join((*path, "action")), metavar="ACTION", required=True
            )
            for name, action in command.actions.items():
                self._add(actions, (*path, name), action)
            return
        if command.add_arguments is not None:
            command.add_arguments(parser)
        parser.set_defaults(shell_run=command.run, command_prog=" ".join((self.prog, *path)))

    # ---- running ------------------------------------------------------------------
    def main(self, argv: Sequence[str] | None = None) -> int:
        """Parse, run the command, render what it raised; the process exit code."""
        arguments = list(sys.argv[1:] if argv is None else argv)
        prog = self.prog
        args: argparse.Namespace | None = None
        try:
            parser = self.build_parser(only=self.chosen_command(arguments))
            try:
                args = parser.parse_args(arguments)
            except SystemExit as done:  # --help, --version, or a usage error argparse printed
                return done.code if isinstance(done.code, int) else EXIT_BAD_INPUT
            prog = args.command_prog
            code: int = args.shell_run(args)
            sys.stdout.flush()  # a reader that left is found here, not at interpreter exit
            return code
        except TrtEdgeError as error:
            return report(prog, error, json_mode=bool(getattr(args, "json", False)))
        except KeyboardInterrupt:
            print(f"{prog}: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            silence_stdout()
            return EXIT_OK
        except OSError as error:
            where = f"{error.filename}: " if error.filename else ""
            print(f"{prog}: error: {where}{error.strerror or error}", file=sys.stderr)
            return EXIT_FAILED


def report(prog: str, error: TrtEdgeError, *, json_mode: bool) -> int:
    """Print `error` the one way (and its JSON document under --json); its exit code."""
    if json_mode:
        try:
            print(json.dumps(error.to_dict(), sort_keys=True), flush=True)
        except BrokenPipeError:  # nobody reads stdout any more; stderr still says it
            silence_stdout()
    print(f"{prog}: error: {error}", file=sys.stderr)
    error.print_details(sys.stderr, color=sys.stderr.isatty())
    if error.hint:
        print(f"  hint: {error.hint}", file=sys.stderr)
    return error.exit_code


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no stdout file descriptor (embedded, captured)
        pass
