"""How close a (quantized) causal-LM bundle is to eager fp32: the figures and the budget verdict.

Every call validation makes gives a pair of last-position logits — the bundle's and
eager fp32's for the same tokens at the same positions (the parity prompts, their
greedy decode steps, the state chains). Over those pairs:

- `max_abs`: the largest |logit difference| (quantization moves every logit a little);
- `agreement`: the share of pairs whose greedy next token (argmax) is the same — what a
  user sees first when quantization hurts;
- `mean_kl`: the mean KL(eager ‖ bundle) of the next-token distributions, in nats — the
  whole distribution, not only its top, so sampling is covered too.

A quantized bundle must stay within its precision's budget (`validate.budgets`, with
the defaults of `trt_edge.manifest.quantization`); an fp32 bundle is held to the
manifest's atol/rtol by the parity checks and these figures are only reported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trt_edge.manifest.quantization import Budget
from trt_edge.pipeline.validate import round_figure


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return np.asarray(shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True)))


def quality(
    pairs: list[tuple[np.ndarray, np.ndarray]],
    scheme: str | None,
    budget: Budget | None,
    failures: list[str],
) -> dict[str, Any]:
    """The `quality` section over `(bundle, eager)` logits pairs; budget failures appended."""
    if not pairs:
        return {"scheme": scheme or "fp32", "calls": 0, "ok": True}
    got = np.concatenate([g.reshape(-1, g.shape[-1]) for g, _ in pairs]).astype(np.float64)
    want = np.concatenate([w.reshape(-1, w.shape[-1]) for _, w in pairs]).astype(np.float64)
    max_abs = float(np.abs(got - want).max())
    agreement = float((got.argmax(axis=-1) == want.argmax(axis=-1)).mean())
    log_p, log_q = _log_softmax(want), _log_softmax(got)
    kl = float((np.exp(log_p) * (log_p - log_q)).sum(axis=-1).mean())
    doc: dict[str, Any] = {
        "scheme": scheme or "fp32",
        "calls": len(got),
        "max_abs": round_figure(max_abs),
        "agreement": round_figure(agreement),
        "mean_kl": round_figure(max(kl, 0.0)),
    }
    if budget is None:
        return {**doc, "ok": True}
    doc["budget"] = {
        "max_abs": budget.max_abs,
        "min_agreement": budget.min_agreement,
        "max_kl": budget.max_kl,
    }
    problems = []
    if max_abs > budget.max_abs:
        problems.append(f"max abs logit error {doc['max_abs']} > {budget.max_abs}")
    if agreement < budget.min_agreement:
        problems.append(f"greedy agreement {doc['agreement']} < {budget.min_agreement}")
    if kl > budget.max_kl:
        problems.append(f"mean KL {doc['mean_kl']} > {budget.max_kl}")
    for problem in problems:
        failures.append(
            f"quality ({scheme}): {problem} against eager fp32 "
            f"(validate.budgets.{scheme} in the manifest sets the budget)"
        )
    return {**doc, "ok": not problems}
