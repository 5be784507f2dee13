"""The one Python generation loop (host `trt-edge generate`, build validation, benchmarks):
plan → prefill → decode → stats, as ExecuTorch's TextLLMRunner splits them, over either
contract a bundle declares in bundle.json:

- a causal LM built by the Hugging Face recipe (`llm`): the KV cache lives inside the program;
- the tiny-LLM contract (`generation`, `runtime.generation: tiny_llm`): the caches are inputs,
  returned updated as outputs and fed back each call.

A bundle that declares neither is refused; the contract is never guessed from input names.

The prompt runs under the bundle's `prefill` phase — in chunks when it is longer
than that phase's profile accepts, positions continuing — and each new token under
`decode`, one position at a time; the KV cache stays inside the program between
calls, so only token ids, positions and one logits row cross the boundary. A phase
the bundle's runtime policy does not name runs under `auto`. Stops at an eos id
(which is kept, as transformers' `generate` keeps it) or after `max_new_tokens`.

Restarting at position 0 on the same loaded method is exact: the causal mask hides
whatever a longer earlier sequence left in later slots. Plain stdlib at import
(`trt-edge --help` imports the CLI module that imports this one); numpy inside.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trt_edge_runner.policy import Request
from trt_edge_runner.tensors import numpy_dtype

from trt_edge.llm.errors import GenerateContractError

if TYPE_CHECKING:
    from trt_edge_runner.bundle_format import BundleManifest, GenerationSection, LlmSection
    from trt_edge_runner.runner import Runner, Target

PREFILL = "prefill"
DECODE = "decode"


@dataclass(frozen=True)
class Step:
    phase: str
    profile: int
    start: int  # first position written
    seq: int
    ms: float


@dataclass
class GreedyResult:
    prompt_ids: list[int]
    tokens: list[int] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    stop: str = "max_new_tokens"  # or "eos"
    first_token_s: float = 0.0  # from the first prefill call to the first token
    total_s: float = 0.0  # from the first prefill call to the last token

    def timings(self) -> dict[str, float | None]:
        # The prompt's calls are prefill time whatever phase ran them (a 1-token prompt, or
        # a chunk leftover the prefill profile cannot take, runs under decode).
        split = self._prompt_calls()
        prefill = [s.ms for s in self.steps[:split]]
        decode = [s.ms for s in self.steps[split:]]
        decode_s = sum(decode) / 1e3
        return {
            "prefill_ms": round(sum(prefill), 3),
            "time_to_first_token_ms": round(self.first_token_s * 1e3, 3),
            "decode_ms_per_token": round(sum(decode) / len(decode), 3) if decode else None,
            "decode_tokens_per_s": round(len(decode) / decode_s, 2) if decode_s > 0 else None,
            "tokens_per_s": round(len(self.tokens) / self.total_s, 2) if self.total_s else None,
            "total_ms": round(self.total_s * 1e3, 3),
        }

    def _prompt_calls(self) -> int:
        """How many calls carried the prompt (the rest each made one new token)."""
        covered, calls = 0, 0
        for step in self.steps:
            if covered >= len(self.prompt_ids):
                break
            covered += step.seq
            calls += 1
        return calls


def prefill_chunks(length: int, low: int, high: int) -> list[int]:
    """Split a prompt of `length` into calls whose sizes the prefill profile takes
    ([low, high]) where possible; leftovers it cannot take become 1-token calls."""
    if length < 1:
        return []
    if high < 1 or low > high:
        return [1] * length
    chunks: list[int] = []
    remaining = length
    while remaining > high:
        chunks.append(high)
        remaining -= high
    if remaining >= low:
        chunks.append(remaining)
    elif chunks and high - (low - remaining) >= low:
        chunks[-1] -= low - remaining  # borrow from the previous full chunk
        chunks.append(low)
    else:
        chunks.extend([1] * remaining)
    return chunks


def phase_seq_range(manifest: BundleManifest, phase: str) -> tuple[int, int]:
    """The `seq` extents the phase's profile accepts (the union under auto or no phase)."""
    target = manifest.runtime.phases.get(phase, "auto")
    profiles = manifest.profiles if target == "auto" else (manifest.profiles[int(target)],)
    ranges = [p.dims["seq"] for p in profiles if "seq" in p.dims]
    if not ranges:
        return (1, 1)
    return (min(r.min for r in ranges), max(r.max for r in ranges))


def phase_target(runner: Runner, phase: str) -> Target:
    """The phase by name when the bundle's policy names it, else `auto`."""
    return phase if phase in runner.manifest.runtime.phases else Request.auto()


def llm_section(runner: Runner) -> LlmSection:
    section = runner.manifest.llm
    if section is None:
        raise GenerateContractError(
            f"{runner.bundle_dir}/bundle.json has no `llm` section: not a causal LM built by "
            "the Hugging Face recipe"
        )
    return section


def check_prompt(prompt: list[int], vocab_size: int, max_new_tokens: int) -> None:
    """Refuse an empty prompt, ids outside the vocabulary and fewer than one new token:
    what every generation contract asks before its own length limit."""
    if not prompt:
        raise GenerateContractError("the prompt is empty: give at least one token")
    bad = [t for t in prompt if not 0 <= t < vocab_size]
    if bad:
        raise GenerateContractError(
            f"prompt ids {bad[:8]} are outside the vocabulary [0, {vocab_size})"
        )
    if max_new_tokens < 1:
        raise GenerateContractError("--max-new-tokens must be at least 1")


def check_request(section: LlmSection, prompt: list[int], max_new_tokens: int) -> None:
    """Refuse a prompt or length the bundle cannot serve, before anything runs."""
    check_prompt(prompt, section.vocab_size, max_new_tokens)
    # The last generated token is never fed back: it needs no cache slot.
    needed = len(prompt) + max_new_tokens - 1
    if needed > section.max_cache_len:
        raise GenerateContractError(
            f"the prompt ({len(prompt)} tokens) and --max-new-tokens {max_new_tokens} need "
            f"{needed} cache positions; the bundle's KV cache holds {section.max_cache_len} "
            "(llm.max_cache_len): shorten one of them"
        )


def method_inputs(section: LlmSection, names: list[str], ids: list[int], start: int) -> list[Any]:
    """One call's input arrays in the method's order: the tokens `[1, seq]`, their positions
    and, for a bundle built with `attention: filled`, the window of positions attention reads
    (`0..W-1`, `W = section.window_length(start + seq)`: only its length matters); with
    slots (llm version 3), positions `[1, seq]` and slot `[0]`."""
    import numpy as np

    arrays: list[Any] = [None] * len(names)
    arrays[names.index(section.tokens_input)] = np.asarray([ids], dtype=np.int64)
    positions = np.arange(start, start + len(ids), dtype=np.int64)
    arrays[names.index(section.positions_input)] = positions
    if section.slot_input is not None:
        # Slots: one conversation is a batch of one row, in slot 0.
        arrays[names.index(section.positions_input)] = positions.reshape(1, -1)
        arrays[names.index(section.slot_input)] = np.zeros(1, dtype=np.int64)
    if section.window_input is not None:
        window = section.window_length(start + len(ids))
        arrays[names.index(section.window_input)] = np.arange(window, dtype=np.int64)
    return arrays


class _Contract:
    """How one call runs under a contract: the vocabulary, the positions available, the
    stop ids, and `call(phase, ids, start)` → (profile, seconds, the last logits row)."""

    vocab: int
    eos: frozenset[int]

    def check(self, prompt: list[int], max_new_tokens: int) -> None:
        raise NotImplementedError

    def call(self, phase: str, ids: list[int], start: int) -> tuple[int, float, Any]:
        raise NotImplementedError


class _CausalLm(_Contract):
    """bundle.json `llm`: tokens `[1, seq]` and positions `[seq]` in, logits `[1, vocab]` out;
    the KV cache stays inside the program between calls."""

    def __init__(self, runner: Runner, section: LlmSection) -> None:
        self.runner, self.section = runner, section
        names = [spec.name for spec in runner.manifest.inputs]
        self.names, self.count = names, len(names)
        self.tokens_at = names.index(section.tokens_input)
        self.positions_at = names.index(section.positions_input)
        outputs = [spec.name for spec in runner.manifest.outputs]
        self.logits_at = outputs.index(section.logits_output) if outputs else 0
        self.vocab, self.eos = section.vocab_size, frozenset(section.eos_token_ids)

    def check(self, prompt: list[int], max_new_tokens: int) -> None:
        check_request(self.section, prompt, max_new_tokens)

    def call(self, phase: str, ids: list[int], start: int) -> tuple[int, float, Any]:

        arrays = method_inputs(self.section, self.names, ids, start)
        run = self.runner.run(phase_target(self.runner, phase), arrays)
        return run.profile, run.seconds, run.outputs[self.logits_at][0]


class _TinyLlm(_Contract):
    """bundle.json `generation` (`tiny_llm`): tokens `[1, seq]`, the start position `[1]` and
    the caches in; logits `[1, seq, vocab]` and the updated caches (in the caches' order) out."""

    def __init__(self, runner: Runner, section: GenerationSection) -> None:
        import numpy as np

        manifest = runner.manifest
        where = f"{runner.bundle_dir}/bundle.json"
        specs = {spec.name: spec for spec in manifest.inputs}
        ids_spec, pos_spec = specs[section.tokens], specs[section.start_position]
        if ids_spec.values is None or pos_spec.values is None:
            raise GenerateContractError(
                f"{where}: {ids_spec.name} and {pos_spec.name} must declare values (vocabulary, "
                "context length)"
            )
        cache_specs = [specs[name] for name in section.caches(manifest.inputs)]
        for spec in cache_specs:
            if any(isinstance(d, str) for d in spec.shape):
                raise GenerateContractError(
                    f"{where}: cache input {spec.name!r} has a symbolic shape; caches are static"
                )
        outputs = [spec.name for spec in manifest.outputs]
        self.logits_at = outputs.index(section.logits)
        self.cache_outputs = [i for i in range(len(outputs)) if i != self.logits_at]
        self.order = [spec.name for spec in manifest.inputs]
        self.cache_names = [spec.name for spec in cache_specs]
        self.caches = [
            np.zeros([int(d) for d in spec.shape], dtype=numpy_dtype(spec)) for spec in cache_specs
        ]
        self.runner, self.section = runner, section
        self.vocab, self.context = ids_spec.values[1], pos_spec.values[1]
        self.eos = frozenset()

    def check(self, prompt: list[int], max_new_tokens: int) -> None:
        check_prompt(prompt, self.vocab, max_new_tokens)
        # The last generated token is never fed back: the calls fill prompt + N - 1 positions.
        if len(prompt) + max_new_tokens - 1 > self.context:
            raise GenerateContractError(
                f"prompt ({len(prompt)}) + --max-new-tokens ({max_new_tokens}) exceeds the "
                f"context of {self.context} positions ({self.section.start_position} values); "
                "shorten one of them"
            )

    def call(self, phase: str, ids: list[int], start: int) -> tuple[int, float, Any]:
        import numpy as np

        named = {
            self.section.tokens: np.asarray([ids], dtype=np.int64),
            self.section.start_position: np.asarray([start], dtype=np.int64),
            **dict(zip(self.cache_names, self.caches, strict=True)),
        }
        run = self.runner.run(phase_target(self.runner, phase), [named[n] for n in self.order])
        self.caches = [run.outputs[i] for i in self.cache_outputs]
        return run.profile, run.seconds, run.outputs[self.logits_at][0, -1]


def contract_for(runner: Runner) -> _Contract:
    """The contract bundle.json declares (`llm` or `generation`), or GenerateContractError."""
    manifest = runner.manifest
    if manifest.llm is not None:
        return _CausalLm(runner, manifest.llm)
    if manifest.generation is not None:
        return _TinyLlm(runner, manifest.generation)
    raise GenerateContractError(
        f"{runner.bundle_dir}/bundle.json: the bundle declares no generation contract (bundle.json "
        "has neither `generation` nor `llm`); generate needs one to know which input carries the "
        "tokens",
        hint="build a model that implements the tiny-LLM contract with `generation: tiny_llm` "
        "under `runtime:` in its manifest, or a Hugging Face causal LM",
    )


def greedy_generate(runner: Runner, prompt: list[int], max_new_tokens: int) -> GreedyResult:
    """Plan (check the request, split the prompt as the prefill profile takes it), prefill,
    then decode argmax tokens until eos or the limit; the stats are `GreedyResult.timings`."""
    import numpy as np

    contract = contract_for(runner)
    contract.check(prompt, max_new_tokens)
    low, high = phase_seq_range(runner.manifest, PREFILL)
    chunks = prefill_chunks(len(prompt), low, high)
    result = GreedyResult(prompt_ids=list(prompt))

    def call(phase: str, ids: list[int], start: int) -> Any:
        profile, seconds, logits = contract.call(phase, ids, start)
        result.steps.append(Step(phase, profile, start, len(ids), round(seconds * 1e3, 3)))
        return logits

    started = time.perf_counter()
    position = 0
    logits: Any = None
    for size in chunks:  # prefill
        phase = PREFILL if low <= size <= high else DECODE
        logits = call(phase, prompt[position : position + size], position)
        position += size
    token = int(np.argmax(logits))
    result.first_token_s = time.perf_counter() - started
    result.tokens.append(token)
    while token not in contract.eos and len(result.tokens) < max_new_tokens:  # decode
        logits = call(DECODE, [token], position)
        position += 1
        token = int(np.argmax(logits))
        result.tokens.append(token)
    result.total_s = time.perf_counter() - started
    result.stop = "eos" if token in contract.eos else "max_new_tokens"
    return result
