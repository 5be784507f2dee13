"""The `validate` stage for a causal LM: the staged bundle, through the runner, vs transformers.

Every check runs the bundle's method the way generation does — a prefill at
positions 0..s-1, then decode steps at s, s+1, … — and compares each call's
last-position logits with eager transformers under the same cache semantics
(`reference.eager_chain`), within the manifest's atol/rtol:

- `parity`: every profile at its min/opt/max `seq` (pinned to that profile), then
  decode steps under the `decode` phase;
- `state`: a prompt continued in two prefill calls (longer than the sliding window
  where the model has one) and decoded; one position overwritten changes what the
  next one sees, exactly as eager says; a freshly loaded method starts clean (its first
  call, before any other check); a used one restarted at position 0 is exact;
- `generation`: greedy tokens of the bundle (`generation.greedy_generate`, the loop
  `trt-edge generate` runs) equal `generate(do_sample=False)`, or first diverge
  where eager's top-2 gap is within the parity tolerance of the two logits;
- `tokenizer`: the bundle's tokenizer (the `tokenizers` library and the section's
  bos rule alone) encodes and decodes sample strings as transformers does;
- `chat_template`: the bundle's chat template, rendered by the device's text layer
  (`trt_edge_runner.text`) from the staged bundle, gives the same text and ids as
  transformers' `apply_chat_template` on sample conversations (or both refuse one);
- `cache_bounds`: a position at `max_cache_len` or below 0 is refused by the runner;
- `outside`: one step past every profile's `seq` bounds is refused;
- `quality` (`trt_edge.llm.quality`): max abs logit error, greedy-token agreement and
  mean KL divergence over every call above. A quantized bundle (`bundle.json`
  `quantization`) is compared with eager fp32 within its precision's budget
  (`validate.budgets`) instead of atol/rtol, and must meet the budget's agreement and KL.

It runs in two phases so the bundle's program and the eager model are never resident
together (at a real model's size each is about the weights' size, and the build's memory
peak was here): first every runner call, keeping the bundle's logits and tokens; then the
runner is released, transformers' model is loaded, and each chain is compared
(`_Checks.compare_pending`). The report is deterministic (no timings, no paths; errors
rounded to 4 digits): it is hashed into bundle.json.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from trt_edge_runner.bundle_format import DelegateInfo
from trt_edge_runner.errors import InputValueError, RunnerError
from trt_edge_runner.text import BundleText, TextError

from trt_edge.llm.chat import SAMPLE_CONVERSATIONS
from trt_edge.llm.generation import (
    DECODE,
    PREFILL,
    greedy_generate,
    method_inputs,
    phase_seq_range,
    phase_target,
)
from trt_edge.llm.loading import load_eager
from trt_edge.llm.quality import quality
from trt_edge.llm.reference import eager_chain, eager_generate
from trt_edge.llm.text import HostTokenizer
from trt_edge.llm.tokenizer import SAMPLE_TEXTS, load_auto_tokenizer
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import ValidationFailedError
from trt_edge.pipeline.plan import ExportPlan
from trt_edge.pipeline.validate import (
    StagedRun,
    ValidationReport,
    compare_arrays,
    open_staged,
    probe_outside,
    round_figure,
    validation_report,
)

DECODE_STEPS = 3  # after each parity prefill
OVERWRITE_PREFIX = 10  # tokens before the overwritten position
GENERATE_PROMPT = 12
GENERATE_TOKENS = 8
PROMPT_SEED = 2026


@dataclass
class _PendingChain:
    """A chain the runner has run, waiting for eager's logits (the second phase): `entry` is
    its report entry, completed in place; `chunks` the ids of each call, in order."""

    label: str
    entry: dict[str, Any]
    chunks: list[list[int]]
    got: list[np.ndarray]


@dataclass
class _PendingGeneration:
    """The bundle's greedy tokens, waiting for `generate(do_sample=False)`."""

    entry: dict[str, Any]
    prompt: list[int]
    count: int
    tokens: list[int]


class _Checks:
    """One validation run: the runner (first phase), the eager model (second), what waits
    between them, and the failures collected so far."""

    def __init__(
        self, staged: Path, manifest: ResolvedManifest, runner: Any, failures: list[str]
    ) -> None:
        self.staged = staged
        self.manifest = manifest
        self.runner = runner
        self.failures = failures
        self.chains: list[_PendingChain] = []
        self.pending_generation: _PendingGeneration | None = None
        self.scrub = str(staged)
        section = runner.manifest.llm
        self.vocab = section.vocab_size
        self.cache_len = section.max_cache_len
        self.prefill_range = phase_seq_range(runner.manifest, PREFILL)
        self.rng = np.random.default_rng(PROMPT_SEED)
        # A quantized bundle is compared with eager fp32 within its precision's budget.
        quantization = runner.manifest.quantization
        self.scheme: str | None = str(quantization["scheme"]) if quantization else None
        self.budget = manifest.budget(self.scheme) if self.scheme else None
        self.atol = self.budget.max_abs if self.budget else manifest.atol
        self.rtol = 0.0 if self.budget else manifest.rtol
        self.pairs: list[tuple[np.ndarray, np.ndarray]] = []  # (bundle, eager) logits

    # ---- running -------------------------------------------------------------
    def prompt(self, length: int) -> list[int]:
        return [int(t) for t in self.rng.integers(0, self.vocab, size=length)]

    def call(self, runner: Any, target: Any, ids: list[int], start: int) -> tuple[Any, int]:
        section = runner.manifest.llm
        names = [spec.name for spec in runner.manifest.inputs]
        result = runner.run(target, method_inputs(section, names, ids, start))
        return np.asarray(result.outputs[0]), int(result.profile)

    def compare_chain(
        self,
        label: str,
        calls: list[tuple[Any, list[int], int]],
        greedy_steps: int = 0,
        decode: Any = None,
        into: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Run `(target, ids, start)` calls in order — then `greedy_steps` decode calls, each
        feeding the bundle's own argmax token — and queue the chain for comparison with
        eager's chain of the same chunks (eager continues one cache: starts follow on from 0).
        Returns the report entry (`into`, when given), with the bundle's logits under
        "logits" until the caller drops them; `compare_pending` completes it."""
        entry = into if into is not None else {}
        entry["check"] = label
        calls = list(calls)
        got: list[np.ndarray] = []
        profiles: list[int] = []
        try:
            for target, ids, start in calls:
                logits, profile = self.call(self.runner, target, ids, start)
                got.append(logits)
                profiles.append(profile)
            for _ in range(greedy_steps):
                _, last_ids, last_start = calls[-1]
                step = ([int(np.argmax(got[-1][0]))], last_start + len(last_ids))
                calls.append((decode, *step))
                logits, profile = self.call(self.runner, decode, *step)
                got.append(logits)
                profiles.append(profile)
        except RunnerError as exc:
            error = str(exc).replace(self.scrub, self.manifest.name)
            self.failures.append(f"{label}: the runner failed: {error}")
            entry.update(ok=False, error=error)
            return entry
        entry["calls"] = [
            {"start": start, "seq": len(ids), "profile": profile}
            for (_, ids, start), profile in zip(calls, profiles, strict=True)
        ]
        entry.update(ok=True, logits=got)
        self.chains.append(_PendingChain(label, entry, [ids for _, ids, _ in calls], got))
        return entry

    def compare_pending(self, model: Any) -> None:
        """The second phase: eager's logits for every queued chain, compared call by call
        within the manifest's tolerance (or the precision's budget); then eager's greedy
        tokens against the bundle's."""
        for chain in self.chains:
            want = eager_chain(model, chain.chunks)
            rows = chain.entry["calls"]
            for row, g, w in zip(rows, chain.got, want, strict=True):
                self.pairs.append((g, w))
                row.update(compare_arrays(g, w, self.atol, self.rtol))
            if not all(r["ok"] for r in rows):
                chain.entry["ok"] = False
                worst = max(r["max_abs"] or 0.0 for r in rows)
                self.failures.append(
                    f"{chain.label}: logits differ from eager transformers by up to {worst} "
                    f"(atol {self.atol}, rtol {self.rtol})"
                )
        self.chains.clear()
        if self.pending_generation is not None:
            self.compare_generation(model, self.pending_generation)
            self.pending_generation = None

    # ---- checks --------------------------------------------------------------
    def parity(self, plan: ExportPlan) -> list[dict[str, Any]]:
        """Each profile at its samples, then decode; "outputs" (the worst error per entry)
        is filled once the chains are compared (`parity_outputs`)."""
        entries = []
        decode = phase_target(self.runner, DECODE)
        for sample in plan.samples:
            seq = sample.symbols["seq"]
            profile = self.manifest.profiles[sample.profile]
            label = f"profile {sample.profile} ({profile.name}) at {sample.point} seq={seq}"
            entry: dict[str, Any] = {
                "profile": sample.profile,
                "profile_name": profile.name,
                "point": sample.point,
                "symbols": dict(sample.symbols),
            }
            self.compare_chain(
                label,
                [(sample.profile, self.prompt(seq), 0)],
                greedy_steps=min(DECODE_STEPS, self.cache_len - seq),
                decode=decode,
                into=entry,
            )
            entry.pop("logits", None)
            rows = entry.get("calls", [])
            selected = rows[0]["profile"] if rows else None
            entry["selected_profile"] = selected
            if selected is not None and selected != sample.profile:
                entry["ok"] = False
                self.failures.append(f"{label}: the runner selected profile {selected}")
            entries.append(entry)
        return entries

    def prefill_size(self, wanted: int) -> int:
        low, high = self.prefill_range
        return max(low, min(high, wanted))

    def fresh_start(self) -> dict[str, Any]:
        """A freshly loaded method starts clean (its planned memory zeroed): its very first
        call, a token at position 0, equals eager's, finite although nothing was written
        before. Run first, on the runner validation opened, rather than on a second load of
        the program: that would hold a second copy of the weights (and of XNNPACK's packed
        ones) beside the first."""
        decode = phase_target(self.runner, DECODE)
        token = int(np.random.default_rng(PROMPT_SEED + 1).integers(0, self.vocab))
        entry = self.compare_chain("state: fresh load, position 0", [(decode, [token], 0)])
        entry.pop("logits", None)
        return entry

    def state(self, fresh: dict[str, Any]) -> list[dict[str, Any]]:
        """The state checks; `fresh` is `fresh_start`'s entry, reported in its place here."""
        prefill = phase_target(self.runner, PREFILL)
        decode = phase_target(self.runner, DECODE)
        entries = []
        # Continuation: two prefill calls then decode, crossing the sliding window if any.
        label = "state: prompt in two prefill calls, then decode"
        half = self.prefill_size((self.cache_len - 2) // 2)
        if 2 * half + 2 <= self.cache_len:
            first, second, tail = self.prompt(half), self.prompt(half), self.prompt(2)
            calls = [
                (prefill, first, 0),
                (prefill, second, half),
                (decode, tail[:1], 2 * half),
                (decode, tail[1:], 2 * half + 1),
            ]
            entries.append(self.compare_chain(label, calls))
        else:
            entries.append(_skipped(label, 2 * half + 2, self.cache_len))
        # Overwrite: position n rewritten with another token changes what n+1 sees.
        n = self.prefill_size(OVERWRITE_PREFIX)
        a, b, c = self.prompt(3)
        if n + 2 <= self.cache_len:
            prefix = self.prompt(n)
            before = self.compare_chain(
                "state: decode at n, n+1",
                [(prefill, prefix, 0), (decode, [a], n), (decode, [b], n + 1)],
            )
            after = self.compare_chain(
                "state: position n overwritten, then n+1 again",
                [(prefill, prefix, 0), (decode, [c], n), (decode, [b], n + 1)],
            )
            changed = None
            if "logits" in before and "logits" in after:
                delta = float(np.abs(after["logits"][-1] - before["logits"][-1]).max())
                changed = bool(delta > self.manifest.atol)
                if not changed:
                    self.failures.append(
                        "state: overwriting position n did not change the logits at n+1: the "
                        "cache is not written in place"
                    )
            after["changed_next_position"] = changed
            entries += [before, after]
        else:
            entries.append(_skipped("state: position n overwritten", n + 2, self.cache_len))
        entries.append(fresh)
        # Restart: the used method, back at position 0 with a shorter prompt.
        entries.append(
            self.compare_chain("state: restart at position 0", [(prefill, self.prompt(n), 0)])
        )
        for entry in entries:
            entry.pop("logits", None)
        return entries

    def generation(self) -> dict[str, Any]:
        """The bundle's greedy tokens (first phase); `compare_generation` judges them."""
        length = max(1, min(GENERATE_PROMPT, self.cache_len - 1))
        count = max(1, min(GENERATE_TOKENS, self.cache_len - length + 1))
        prompt = self.prompt(length)
        entry: dict[str, Any] = {"prompt_ids": prompt, "max_new_tokens": count}
        try:
            ours = greedy_generate(self.runner, prompt, count)
        except RunnerError as exc:
            error = str(exc).replace(self.scrub, self.manifest.name)
            self.failures.append(f"generation: the runner failed: {error}")
            return {**entry, "ok": False, "error": error}
        entry.update(bundle_tokens=ours.tokens)
        entry["phases"] = {
            phase: sorted({s.profile for s in ours.steps if s.phase == phase})
            for phase in (PREFILL, DECODE)
        }
        self.pending_generation = _PendingGeneration(entry, prompt, count, ours.tokens)
        return entry

    def compare_generation(self, model: Any, pending: _PendingGeneration) -> None:
        """Equal to `generate(do_sample=False)`, or first diverging where eager's top-2 gap
        is within the parity tolerance of the two logits."""
        entry, tokens = pending.entry, pending.tokens
        eager = eager_generate(model, pending.prompt, pending.count)
        entry.update(eager_tokens=eager.tokens, equal=False)
        if tokens == eager.tokens:
            entry.update(equal=True, first_divergence=None, ok=True)
            return
        step = next(
            i
            for i, (x, y) in enumerate(zip([*tokens, -1], [*eager.tokens, -2], strict=False))
            if x != y
        )
        gap = eager.top2_gaps[step] if step < len(eager.top2_gaps) else None
        top1 = eager.top1[step] if step < len(eager.top1) else 0.0
        tolerance = 2 * (self.atol + self.rtol * abs(top1))
        ok = gap is not None and gap <= tolerance
        shown_gap = round_figure(gap) if gap is not None else None
        entry.update(
            first_divergence={
                "step": step,
                "eager_top2_gap": shown_gap,
                "tolerance": round_figure(tolerance),
            },
            ok=ok,
        )
        if not ok:
            self.failures.append(
                f"generation: greedy tokens diverge from generate(do_sample=False) at step "
                f"{step}, where eager's top-2 gap {shown_gap} exceeds the parity tolerance "
                f"{round_figure(tolerance)}: bundle {tokens}, eager {eager.tokens}"
            )

    def tokenizer(self) -> dict[str, Any]:

        section = self.runner.manifest.llm
        if section.tokenizer is None:
            return {"present": False, "ok": True}
        reference = load_auto_tokenizer(self.manifest)
        host = HostTokenizer.from_bundle(self.staged, section)
        rows = []
        for text in SAMPLE_TEXTS:
            want = list(reference(text)["input_ids"])
            got = host.encode(text)
            decoded = host.decode(want)
            expected = reference.decode(want, skip_special_tokens=True)
            rows.append(
                {"text": text, "encode_equal": got == want, "decode_equal": decoded == expected}
            )
        ok = all(r["encode_equal"] and r["decode_equal"] for r in rows)
        if not ok:
            bad = [r["text"] for r in rows if not (r["encode_equal"] and r["decode_equal"])]
            self.failures.append(
                f"tokenizer: the bundle's tokenizer disagrees with transformers on {bad!r}"
            )
        return {"present": True, "file": section.tokenizer, "samples": rows, "ok": ok}

    def chat_template(self) -> dict[str, Any]:

        section = self.runner.manifest.llm
        if section.tokenizer is None or section.chat_template is None:
            return {"present": False, "ok": True}
        reference = load_auto_tokenizer(self.manifest)
        text = BundleText.from_bundle(self.staged, section)
        rows = []
        for number, conversation in enumerate(SAMPLE_CONVERSATIONS):
            messages = [dict(m) for m in conversation]
            try:
                want: str | None = reference.apply_chat_template(
                    messages, tokenize=False, add_generation_prompt=True
                )
                want_ids = list(
                    reference.apply_chat_template(
                        messages, tokenize=True, add_generation_prompt=True, return_dict=False
                    )
                )
            except Exception:  # the template refused it (raise_exception): we must refuse too
                want, want_ids = None, []
            try:
                got: str | None = text.render_chat(messages)
                got_ids = text.encode_chat(messages)
            except TextError:
                got, got_ids = None, []
            ok = got == want and got_ids == want_ids
            rows.append({"conversation": number, "refused": want is None, "ok": ok})
            if not ok:
                self.failures.append(
                    f"chat_template: conversation {number} ({len(messages)} messages) renders "
                    f"differently from transformers' apply_chat_template: bundle {got!r}, "
                    f"transformers {want!r}; the model's template uses something the device's "
                    "renderer (trt_edge_runner.text) does not do as transformers does"
                )
        return {"present": True, "conversations": rows, "ok": all(r["ok"] for r in rows)}

    def cache_bounds(self) -> list[dict[str, Any]]:
        decode = phase_target(self.runner, DECODE)
        entries = []
        for position in (self.cache_len, -1):
            entry: dict[str, Any] = {"position": position}
            try:
                self.call(self.runner, decode, [0], position)
            except InputValueError as exc:
                entry.update(rejected=True, error=str(exc).replace(self.scrub, self.manifest.name))
            except RunnerError as exc:
                entry.update(rejected=False, error=str(exc).replace(self.scrub, self.manifest.name))
            else:
                entry.update(rejected=False)
            if not entry["rejected"]:
                self.failures.append(
                    f"cache_bounds: position {position} (cache [0, {self.cache_len})) was not "
                    "refused by the runner before executing"
                )
            entries.append(entry)
        return entries


def _skipped(label: str, needed: int, cache_len: int) -> dict[str, Any]:
    """A check the cache is too short for: recorded as such, not silently left out."""
    return {"check": label, "ok": True, "skipped": f"needs {needed} positions, cache {cache_len}"}


def _worst(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One summary output per parity entry, as the generic report has (for the tables)."""
    abs_errs = [r["max_abs"] for r in rows if r["max_abs"] is not None]
    rel_errs = [r["max_rel"] for r in rows if r["max_rel"] is not None]
    return {
        "output": 0,
        "shape": rows[0]["shape"],
        "max_abs": max(abs_errs) if abs_errs else None,
        "max_rel": max(rel_errs) if rel_errs else None,
        "ok": all(r["ok"] for r in rows),
    }


def validate_causal_lm(
    staged: Path,
    manifest: ResolvedManifest,
    plan: ExportPlan,
    backend: str,
    delegates: tuple[DelegateInfo, ...] = (),
) -> ValidationReport:
    """Every check above on the staged bundle; the report document and its verdict."""

    source = manifest.huggingface
    assert source is not None
    runner = open_staged(staged, manifest)
    if runner.manifest.llm is None:
        raise ValidationFailedError(f"{manifest.source_path}: the bundle has no llm section")
    failures: list[str] = []
    checks = _Checks(staged, manifest, runner, failures)
    # First phase: every runner call.
    fresh = checks.fresh_start()  # before anything else runs the method
    parity = checks.parity(plan)
    state = checks.state(fresh)
    generation = checks.generation()
    bounds = checks.cache_bounds()
    outside = probe_outside(
        StagedRun(runner, manifest.inputs, manifest.name, str(staged)), plan, failures
    )
    # Second phase: the program released before the eager model is loaded.
    runner.release()
    gc.collect()
    checks.compare_pending(load_eager(manifest))
    for entry in parity:
        rows = entry.get("calls", [])
        entry["outputs"] = [_worst(rows)] if rows else []
    tokenizer = checks.tokenizer()
    chat = checks.chat_template()
    figures = quality(checks.pairs, checks.scheme, checks.budget, failures)
    sections = {
        "recipe": {
            "architecture": source.architecture,
            "max_cache_len": source.max_cache_len,
            "reference": "transformers, DynamicCache, one call per chunk",
        },
        "parity": parity,
        "state": state,
        "generation": generation,
        "tokenizer": tokenizer,
        "chat_template": chat,
        "cache_bounds": bounds,
        "outside": outside,
        "quality": figures,
    }
    return validation_report(manifest, backend, runner, delegates, sections, failures)
