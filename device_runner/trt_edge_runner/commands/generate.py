"""`trt-edge-device generate BUNDLE --prompt-ids 1,2,3 [--max-new-tokens N] [--json]`.

Greedy generation on the device, through the C++ runner (`trt-edge-run --generate`, a child
process found like `run`'s: `--runner`, `$TRT_EDGE_RUNNER`, device.json `runner`, PATH): the
prompt runs under the bundle's `prefill` phase (in chunks when longer than its profile), each
new token under `decode`, until an eos id or `--max-new-tokens`. Token ids only: a device has
no `tokenizers` library, so text in and out is the host's `trt-edge generate --prompt`. A
causal LM (bundle.json `llm`) or the tiny-LLM contract; `--json` prints the same fields as
`trt-edge generate --json` (`prompt_ids`, `tokens`, `stop`, `steps`, `timings`). Standard
library only on this side.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from trt_edge_runner.cli_args import (
    add_bundle_argument,
    add_json_argument,
    add_verbose_argument,
    at_least,
    parse_prompt_ids,
    require_dir,
)
from trt_edge_runner.cli_shell import Command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from trt_edge_runner.agent.config import add_config_argument

    add_bundle_argument(parser, help="bundle directory (holds bundle.json and model.pte)")
    parser.add_argument(
        "--prompt-ids", required=True, help="comma-separated token ids, e.g. 1,2,3 (no text)"
    )
    parser.add_argument(
        "--max-new-tokens", type=at_least(1, "--max-new-tokens"), default=16, help="tokens to make"
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="skip the sha256/size check of bundle files"
    )
    parser.add_argument(
        "--runner", type=Path, default=None, metavar="PATH", help="the trt-edge-run binary"
    )
    add_config_argument(parser)
    add_json_argument(parser)
    add_verbose_argument(parser)


def require_contract(bundle: Path) -> None:
    """Refuse, before a runner starts, a bundle whose bundle.json declares no generation
    contract (`llm` or `generation`): the contract is declared, never guessed from names."""
    from trt_edge_runner.bundle_integrity import read_manifest
    from trt_edge_runner.errors import UsageError

    _data, manifest = read_manifest(bundle)
    if manifest.llm is None and manifest.generation is None:
        raise UsageError(
            f"{bundle}/bundle.json: the bundle declares no generation contract (neither "
            "`generation` nor `llm`): generate needs one to know which input carries the tokens",
            hint="rebuild it with `generation: tiny_llm` under `runtime:` in its manifest (a "
            "model implementing the tiny-LLM contract), or from a Hugging Face causal LM",
        )


def run(args: argparse.Namespace) -> int:
    import json

    from trt_edge_runner.agent.smoke import open_runner
    from trt_edge_runner.commands.run import cpp_report_head
    from trt_edge_runner.generation_summary import summary_lines

    require_dir(args.bundle, "bundle directory")
    prompt = parse_prompt_ids(args.prompt_ids)
    require_contract(args.bundle)
    runner = open_runner(args, probe=False)
    env = {"TRT_EDGE_RUNTIME_LOGS": "1"} if args.verbose else None
    doc, generation = runner.generate(
        args.bundle, prompt, args.max_new_tokens, verify=not args.no_verify, env=env
    )
    if args.json:
        report: dict[str, Any] = {
            **cpp_report_head(args.bundle, runner, doc),
            "contract": generation.contract,
            "prompt_ids": list(generation.prompt_ids),
            "tokens": list(generation.tokens),
            "stop": generation.stop,
            "steps": doc["steps"],
            "timings": generation.timings,
        }
        print(json.dumps(report, indent=2))
        return 0
    print(f"tokens: {','.join(str(t) for t in generation.tokens)}")
    lines = summary_lines(
        len(generation.prompt_ids),
        generation.steps,
        len(generation.tokens),
        generation.stop,
        generation.timings,
        doc["mode"],
    )
    for line in lines:
        print(line, file=sys.stderr)
    return 0


COMMAND = Command(
    "greedy generation with a prefill/decode bundle in the C++ runner (token ids in and out)",
    description="Generate greedily with the C++ runner trt-edge-run: the prompt under the "
    "bundle's prefill phase, each new token under decode, until an eos id or "
    "--max-new-tokens. Token ids only (the device has no tokenizer library).",
    add_arguments=add_arguments,
    run=run,
)
