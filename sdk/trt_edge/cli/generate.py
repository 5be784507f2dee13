"""`trt-edge generate BUNDLE (--prompt TEXT | --prompt-ids 1,2,3) --max-new-tokens N [--json]`.

Greedy (argmax) decoding with a prefill/decode bundle, the loop an application would
write: the prompt once under the bundle's `prefill` phase, then each new token
under its `decode` phase, the profile switch done by the runner from the bundle's
policy. Greedy, so the tokens are a deterministic function of the weights: they
equal eager PyTorch's (transformers' `generate(do_sample=False)`) on the same
weights (tested). The loop is `trt_edge.llm.generation` (one for every Python caller),
over either contract bundle.json declares:

- a causal LM built by the Hugging Face recipe (bundle.json `llm`): inputs
  `input_ids [1, seq]` and `cache_position [seq]`, the KV cache inside the program;
  `--prompt` text is encoded with the bundle's tokenizer (the `tokenizers` library
  only), the output decoded back; stops at an eos id;
- the tiny-LLM contract (bundle.json `generation`, declared by the manifest's
  `runtime.generation: tiny_llm`; examples/tiny_llm): token ids `[1, seq]`, a start
  position `[1]` and caller-owned KV caches in, logits `[1, seq, vocab]` and the updated
  caches out, fed back each step; token ids only. A bundle that declares neither contract
  is refused.

`--json` prints `prompt_ids`, `tokens`, `text` and per-phase timings (prefill ms,
time to first token, decode ms per token, tokens/s).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from trt_edge_runner.cli_args import (
    add_bundle_argument,
    add_json_argument,
    add_verbose_argument,
    parse_prompt_ids,
    require_dir,
)
from trt_edge_runner.cli_shell import Command
from trt_edge_runner.commands.run import configure_logging
from trt_edge_runner.generation_summary import summary_lines
from trt_edge_runner.runner import Runner

from trt_edge.llm.errors import GenerateContractError, NoTokenizerError
from trt_edge.llm.generation import contract_for, greedy_generate
from trt_edge.llm.text import HostTokenizer

# No json or dataclasses at module level: `trt-edge --help` imports every CLI
# module, so only what startup needs is imported.
if TYPE_CHECKING:
    from trt_edge_runner.runner import Runner


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle_argument(parser)
    prompt = parser.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt", help="text, encoded with the bundle's tokenizer")
    prompt.add_argument("--prompt-ids", help="comma-separated token ids, e.g. 1,2,3")
    parser.add_argument("--max-new-tokens", type=int, default=16, help="tokens to generate")
    add_json_argument(parser, help="print JSON on stdout")
    add_verbose_argument(parser)


def run(args: argparse.Namespace) -> int:
    configure_logging(args.command_prog)
    started = time.perf_counter()
    prompt_ids = parse_prompt_ids(args.prompt_ids) if args.prompt_ids is not None else None
    runner = Runner.open(
        require_dir(args.bundle, "bundle directory"),
        runtime_logs=True if args.verbose else None,
    )
    contract_for(runner)  # a bundle that declares no contract is refused before the prompt
    section = runner.manifest.llm
    if section is None and prompt_ids is None:
        raise GenerateContractError(
            f"{runner.bundle_dir}: this bundle (the tiny-LLM contract) carries no tokenizer: "
            "--prompt needs a causal LM built from a Hugging Face folder",
            hint="pass token ids with --prompt-ids",
        )
    return _generate(args, runner, prompt_ids, started)


def _generate(
    args: argparse.Namespace, runner: Runner, prompt_ids: list[int] | None, started: float
) -> int:
    """Text (a causal LM's tokenizer) or ids in; ids, and text when there is a tokenizer, out."""
    section = runner.manifest.llm
    tokenizer = None
    if section is not None and (args.prompt is not None or section.tokenizer is not None):
        try:
            tokenizer = HostTokenizer.from_bundle(runner.bundle_dir, section)
        except NoTokenizerError as exc:
            if args.prompt is not None:  # text in needs it; ids in only lose the text out
                raise
            print(f"{args.command_prog}: note: no text shown: {exc}", file=sys.stderr)
    if prompt_ids is None:
        assert tokenizer is not None
        prompt_ids = tokenizer.encode(args.prompt)
    result = greedy_generate(runner, prompt_ids, args.max_new_tokens)
    text = tokenizer.decode(result.tokens) if tokenizer is not None else None
    timings = result.timings()
    if args.json:
        report = {
            "bundle": str(runner.bundle_dir),
            "mode": runner.mode,
            "prompt": args.prompt,
            "prompt_ids": result.prompt_ids,
            "tokens": result.tokens,
            "text": text,
            "stop": result.stop,
            "steps": [vars(step) for step in result.steps],
            "timings": timings,
            "seconds_total": round(time.perf_counter() - started, 3),
        }
        print(json.dumps(report, indent=2))
        return 0
    print(text if text is not None else f"tokens: {','.join(str(t) for t in result.tokens)}")
    lines = summary_lines(
        len(result.prompt_ids), result.steps, len(result.tokens), result.stop, timings, runner.mode
    )
    for line in lines:
        print(line, file=sys.stderr)
    return 0


COMMAND = Command(
    "greedy generation with a prefill/decode bundle: text or token ids in, text and ids out",
    add_arguments=add_arguments,
    run=run,
)
