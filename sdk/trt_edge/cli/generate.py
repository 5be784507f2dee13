"""`trt-edge generate BUNDLE (--prompt TEXT | --prompt-ids 1,2,3) --max-new-tokens N [--json]`.

Greedy (argmax) decoding with a prefill/decode bundle, the loop an application would
write: the prompt once under the bundle's `prefill` phase, then each new token
under its `decode` phase, the profile switch done by the runner from the bundle's
policy. Greedy, so the tokens are a deterministic function of the weights: they
equal eager PyTorch's (transformers' `generate(do_sample=False)`) on the same
weights (tested). Two I/O contracts:

- a causal LM built by the Hugging Face recipe (bundle.json `llm`): inputs
  `input_ids [1, seq]` and `cache_position [seq]`, the KV cache inside the program;
  `--prompt` text is encoded with the bundle's tokenizer (the `tokenizers` library
  only), the output decoded back; stops at an eos id (`trt_edge.llm.generation`);
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
import time
from typing import TYPE_CHECKING, Any

from trt_edge_runner.cli_args import (
    add_bundle_argument,
    add_json_argument,
    add_verbose_argument,
    parse_prompt_ids,
    require_dir,
)
from trt_edge_runner.cli_shell import Command

from trt_edge.llm.errors import GenerateContractError, NoTokenizerError

# No json or dataclasses at module level: `trt-edge --help` imports every CLI
# module, so only what startup needs is imported.
if TYPE_CHECKING:
    from trt_edge_runner.runner import Runner

PREFILL = "prefill"
DECODE = "decode"


class Generation:
    """Tokens produced and what each step ran on."""

    def __init__(self, prompt: list[int]) -> None:
        self.prompt = prompt
        self.tokens: list[int] = []
        self.steps: list[dict[str, Any]] = []


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle_argument(parser)
    prompt = parser.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt", help="text, encoded with the bundle's tokenizer")
    prompt.add_argument("--prompt-ids", help="comma-separated token ids, e.g. 1,2,3")
    parser.add_argument("--max-new-tokens", type=int, default=16, help="tokens to generate")
    add_json_argument(parser, help="print JSON on stdout")
    add_verbose_argument(parser)


class _TinyLlm:
    """The tiny-LLM contract as bundle.json declares it (`generation`, never input names):
    which input carries the tokens, which the start position, which output the logits; the
    other inputs are caches, fed back from the other outputs in order."""

    def __init__(self, runner: Runner) -> None:
        manifest = runner.manifest
        where = f"{runner.bundle_dir}/bundle.json"
        section = manifest.generation
        if section is None:
            raise GenerateContractError(
                f"{where}: the bundle declares no generation contract (bundle.json has neither "
                "`generation` nor `llm`); generate needs one to know which input carries the "
                "tokens",
                hint="build a model that implements the tiny-LLM contract with `generation: "
                "tiny_llm` under `runtime:` in its manifest, or a Hugging Face causal LM",
            )
        missing = [phase for phase in (PREFILL, DECODE) if phase not in manifest.runtime.phases]
        if missing:
            raise GenerateContractError(
                f"{where}: runtime.phases lacks {', '.join(missing)}; generate runs the prompt "
                "under 'prefill' and each new token under 'decode'"
            )
        specs = {spec.name: spec for spec in manifest.inputs}
        ids_spec, pos_spec = specs[section.tokens], specs[section.start_position]
        if ids_spec.values is None or pos_spec.values is None:
            raise GenerateContractError(
                f"{where}: {ids_spec.name} and {pos_spec.name} must declare values (vocabulary, "
                "context length)"
            )
        self.caches = [specs[name] for name in section.caches(manifest.inputs)]
        for spec in self.caches:
            if any(isinstance(d, str) for d in spec.shape):
                raise GenerateContractError(
                    f"{where}: cache input {spec.name!r} has a symbolic shape; caches are static"
                )
        names = [spec.name for spec in manifest.outputs]
        self.logits = names.index(section.logits)
        self.cache_outputs = [i for i in range(len(names)) if i != self.logits]
        self.order = [spec.name for spec in manifest.inputs]
        self.section = section
        self.vocab, self.context = ids_spec.values[1], pos_spec.values[1]

    def inputs(self, ids: Any, position: Any, caches: list[Any]) -> list[Any]:
        """The method's arguments in bundle.json's input order."""
        named = {self.section.tokens: ids, self.section.start_position: position}
        named.update(zip([spec.name for spec in self.caches], caches, strict=True))
        return [named[name] for name in self.order]


def generate(runner: Runner, prompt: list[int], max_new_tokens: int) -> Generation:
    """Prefill once, then decode token by token, greedily; caches owned by this loop."""
    import numpy as np
    from trt_edge_runner.tensors import numpy_dtype

    contract = _TinyLlm(runner)
    vocab, context = contract.vocab, contract.context
    bad = [t for t in prompt if not 0 <= t < vocab]
    if bad:
        raise GenerateContractError(f"--prompt-ids: {bad} outside the vocabulary [0, {vocab})")
    if max_new_tokens < 1:
        raise GenerateContractError("--max-new-tokens must be at least 1")
    # The last generated token is never fed back: the calls fill prompt + N - 1 positions.
    if len(prompt) + max_new_tokens - 1 > context:
        raise GenerateContractError(
            f"prompt ({len(prompt)}) + --max-new-tokens ({max_new_tokens}) exceeds the "
            f"context of {context} positions ({contract.section.start_position} values); "
            "shorten one of them"
        )
    caches = [
        np.zeros([int(d) for d in spec.shape], dtype=numpy_dtype(spec)) for spec in contract.caches
    ]
    result = Generation(prompt=list(prompt))
    # A one-token prompt is a decode step: the prefill profile need not accept seq 1.
    phase = PREFILL if len(prompt) > 1 else DECODE
    ids = np.asarray([prompt], dtype=np.int64)
    position = 0
    for _ in range(max_new_tokens):
        run = runner.run(
            phase, contract.inputs(ids, np.asarray([position], dtype=np.int64), caches)
        )
        logits = run.outputs[contract.logits]
        caches = [run.outputs[i] for i in contract.cache_outputs]
        token = int(np.argmax(logits[0, -1]))
        result.tokens.append(token)
        result.steps.append(
            {
                "phase": phase,
                "profile": run.profile,
                "seq": int(ids.shape[1]),
                "ms": round(run.seconds * 1e3, 3),
            }
        )
        position += int(ids.shape[1])
        ids = np.asarray([[token]], dtype=np.int64)
        phase = DECODE
    return result


def run(args: argparse.Namespace) -> int:
    from trt_edge_runner.commands.run import configure_logging
    from trt_edge_runner.runner import Runner

    configure_logging(args.command_prog)
    started = time.perf_counter()
    prompt_ids = parse_prompt_ids(args.prompt_ids) if args.prompt_ids is not None else None
    runner = Runner.open(
        require_dir(args.bundle, "bundle directory"),
        runtime_logs=True if args.verbose else None,
    )
    if runner.manifest.llm is not None:
        return _run_causal_lm(args, runner, prompt_ids, started)
    _TinyLlm(runner)  # a bundle that declares no contract is refused before the prompt is read
    if prompt_ids is None:
        raise GenerateContractError(
            f"{runner.bundle_dir}: this bundle (the tiny-LLM contract) carries no tokenizer: "
            "--prompt needs a causal LM built from a Hugging Face folder",
            hint="pass token ids with --prompt-ids",
        )
    return _run_tiny_llm(args, runner, prompt_ids, started)


def _run_causal_lm(
    args: argparse.Namespace, runner: Runner, prompt_ids: list[int] | None, started: float
) -> int:
    """The Hugging Face recipe's contract: text or ids in, text and ids out."""
    import json
    import sys

    from trt_edge_runner.generation_summary import summary_lines

    from trt_edge.llm.generation import greedy_generate, llm_section
    from trt_edge.llm.text import HostTokenizer

    section = llm_section(runner)
    tokenizer = None
    if args.prompt is not None or section.tokenizer is not None:
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


def _run_tiny_llm(
    args: argparse.Namespace, runner: Runner, prompt: list[int], started: float
) -> int:
    import json

    result = generate(runner, prompt, args.max_new_tokens)
    total = time.perf_counter() - started
    decode_ms = [s["ms"] for s in result.steps if s["phase"] == DECODE]
    report = {
        "bundle": str(runner.bundle_dir),
        "mode": runner.mode,
        "prompt_ids": result.prompt,
        "tokens": result.tokens,
        "steps": result.steps,
        "decode_ms_mean": round(sum(decode_ms) / len(decode_ms), 3) if decode_ms else None,
        "seconds_total": round(total, 3),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"tokens: {','.join(str(t) for t in result.tokens)}")
    first = result.steps[0]
    print(
        f"  {first['phase']}: {first['seq']} token(s) on profile {first['profile']} "
        f"in {first['ms']} ms"
    )
    if decode_ms:
        profiles = sorted({s["profile"] for s in result.steps[1:]})
        print(
            f"  decode: {len(decode_ms)} step(s) on profile {profiles}, "
            f"mean {report['decode_ms_mean']} ms/token ({runner.mode} mode)"
        )
    return 0


COMMAND = Command(
    "greedy generation with a prefill/decode bundle: text or token ids in, text and ids out",
    add_arguments=add_arguments,
    run=run,
)
