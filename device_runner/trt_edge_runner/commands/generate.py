"""`trt-edge-device generate BUNDLE (--prompt-ids 1,2,3 | --prompt TEXT [--chat [--system S]]
| --messages FILE) [--stop TEXT]... [--max-new-tokens N] [--json]`.

Greedy generation on the device, through the C++ runner (`trt-edge-run generate`, a child
process found like `run`'s: `--runner`, `$TRT_EDGE_RUNNER`, device.json `runner`, PATH): the
prompt runs under the bundle's `prefill` phase (in chunks when longer than its profile), each
new token under `decode`, until an eos id or `--max-new-tokens`. A causal LM (bundle.json
`llm`) or the tiny-LLM contract; `--json` prints the same fields as `trt-edge generate
--json` (`prompt_ids`, `tokens`, `stop`, `steps`, `timings`).

Text (`--prompt`, `--chat`, `--messages`, `--stop`) goes through the bundle's tokenizer and
chat template (`trt_edge_runner.text`, which needs the `text` extra: `tokenizers`, `jinja2`);
the output is then `text` too, cut at the first stop string (`stop` is `stop_string` then).
Token ids need only the standard library.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from trt_edge_runner.agent.config import add_config_argument
from trt_edge_runner.agent.smoke import open_runner
from trt_edge_runner.bundle_integrity import read_manifest
from trt_edge_runner.cli_args import (
    add_bundle_argument,
    add_json_argument,
    add_verbose_argument,
    at_least,
    parse_prompt_ids,
    require_dir,
)
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.commands.run import cpp_report_head
from trt_edge_runner.errors import UsageError
from trt_edge_runner.generation_summary import summary_lines
from trt_edge_runner.text import BundleText, TextError
from trt_edge_runner.text.requests import check_text_options, generated_text, prompt_request


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle_argument(parser, help="bundle directory (holds bundle.json and model.pte)")
    prompt = parser.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt-ids", help="comma-separated token ids, e.g. 1,2,3")
    prompt.add_argument("--prompt", help="text, encoded with the bundle's tokenizer")
    prompt.add_argument(
        "--messages",
        metavar="FILE",
        help="a conversation as JSON ([{role, content}, ...]; '-' reads stdin), rendered "
        "with the model's chat template",
    )
    parser.add_argument(
        "--chat", action="store_true", help="send --prompt as a user turn of a chat"
    )
    parser.add_argument("--system", help="a system message before the --chat prompt")
    parser.add_argument(
        "--stop",
        action="append",
        default=[],
        metavar="TEXT",
        help="end the text where this string appears (not included; repeatable)",
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
    _data, manifest = read_manifest(bundle)
    if manifest.llm is None and manifest.generation is None:
        raise UsageError(
            f"{bundle}/bundle.json: the bundle declares no generation contract (neither "
            "`generation` nor `llm`): generate needs one to know which input carries the tokens",
            hint="rebuild it with `generation: tiny_llm` under `runtime:` in its manifest (a "
            "model implementing the tiny-LLM contract), or from a Hugging Face causal LM",
        )


def raise_stop_needs_text() -> None:
    raise TextError("--stop needs a text prompt (--prompt or --messages): ids have no text")


def run(args: argparse.Namespace) -> int:
    require_dir(args.bundle, "bundle directory")
    text: Any = None  # BundleText when the prompt is text
    if args.prompt_ids is not None:
        check_text_options(args)
        if args.stop:
            raise_stop_needs_text()
        prompt = parse_prompt_ids(args.prompt_ids)
        request = None
    else:
        check_text_options(args)
        text = BundleText.from_bundle(args.bundle)
        request = prompt_request(args, text)
        prompt = request.ids
    require_contract(args.bundle)
    runner = open_runner(args, probe=False)
    env = {"TRT_EDGE_RUNTIME_LOGS": "1"} if args.verbose else None
    doc, generation = runner.generate(
        args.bundle, prompt, args.max_new_tokens, verify=not args.no_verify, env=env
    )
    stop = generation.stop
    output = None
    if text is not None:
        output = generated_text(text, generation.tokens, args.stop)
        if output.stop_string is not None:
            stop = "stop_string"
    if args.json:
        report: dict[str, Any] = {
            **cpp_report_head(args.bundle, runner, doc),
            "contract": generation.contract,
            "prompt_ids": list(generation.prompt_ids),
            "tokens": list(generation.tokens),
            "stop": stop,
            "steps": doc["steps"],
            "timings": generation.timings,
        }
        if output is not None and request is not None:
            report["prompt_text"] = request.text
            report["text"] = output.text
            report["stop_string"] = output.stop_string
        print(json.dumps(report, indent=2))
        return 0
    if output is not None:
        print(output.text)
    else:
        print(f"tokens: {','.join(str(t) for t in generation.tokens)}")
    lines = summary_lines(
        len(generation.prompt_ids),
        generation.steps,
        len(generation.tokens),
        stop,
        generation.timings,
        doc["mode"],
    )
    for line in lines:
        print(line, file=sys.stderr)
    return 0


COMMAND = Command(
    "greedy generation with a prefill/decode bundle in the C++ runner (text or token ids)",
    description="Generate greedily with the C++ runner trt-edge-run: the prompt under the "
    "bundle's prefill phase, each new token under decode, until an eos id or "
    "--max-new-tokens. Text prompts and chats use the bundle's tokenizer and chat template "
    "(needs trt-edge-runner[text]); token ids need nothing more.",
    add_arguments=add_arguments,
    run=run,
)
