"""The `trt-edge` dispatcher: every module in trt_edge/cli is a command, and a named
command imports only its own module (start-up of `trt-edge validate` stays lean).
Helper modules (`trt_edge.cli._manifest`) are not commands and may be imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import trt_edge.cli as cli_package

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "examples" / "tiny_llm" / "manifest.yaml"


def _cli_modules_after(argv: list[str]) -> tuple[int, list[str]]:
    script = (
        "import json, sys\n"
        "from trt_edge.cli.main import main\n"
        f"code = main({argv!r})\n"
        "mods = sorted(m for m in sys.modules if m.startswith('trt_edge.cli.')\n"
        "              and not m.rpartition('.')[2].startswith('_'))\n"
        "print(json.dumps([code, mods]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    code, mods = json.loads(out.strip().splitlines()[-1])
    return code, mods


def test_every_cli_module_is_listed_in_help() -> None:
    files = {
        p.stem
        for p in Path(cli_package.__path__[0]).glob("*.py")
        if p.stem != "main" and not p.stem.startswith("_")
    }
    help_text = subprocess.run(
        [sys.executable, "-m", "trt_edge.cli.main", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = {line.split()[0] for line in help_text.splitlines() if line.startswith("    ")}
    assert files <= listed, files - listed


def test_a_named_command_imports_only_its_own_module() -> None:
    code, mods = _cli_modules_after(["validate", str(MANIFEST)])
    assert code == 0
    assert mods == ["trt_edge.cli.main", "trt_edge.cli.validate"]


def test_an_unknown_command_still_gets_argparse_error_with_the_full_list() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "trt_edge.cli.main", "valdiate", str(MANIFEST)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "invalid choice: 'valdiate'" in result.stderr
    assert "validate" in result.stderr and "rollout" in result.stderr
