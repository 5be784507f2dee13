"""One copy of a weight that a delegate and the rest of the program both read.

A tied embedding (`tie_word_embeddings`: the input embedding and `lm_head` are one
Parameter) is read by two operators: the embedding gather, which XNNPACK does not
take and so stays a constant of the program, and the `lm_head` linear, which XNNPACK
takes and serializes into its own named data. ExecuTorch then stores the table twice
(593 MB extra at Qwen3-0.6B's shape).

ExecuTorch's `NamedDataStore` stores identical bytes once under any number of keys,
but only within one store: the program's constants and the delegate's data live in
different places. So when the program has such a shared constant, every constant goes
to one external data file — the program's (`ExecutorchBackendConfig.external_constants`)
and the delegates' (`delegate_constant_tag`, set on the placeholders before
partitioning) under the same tag — where the merge keeps one copy of each distinct
tensor. The bundle then holds `model.pte` (the program) and `model.ptd` (the weights,
once), which both runners load; the computation is untouched, so outputs are exact.
"""

from __future__ import annotations

from typing import Any

# ExecuTorch's tag for `external_constants=True`; delegate constants join the same file.
TAG = "_default_external_constant"


def shared_constants(program: Any) -> list[str]:
    """Parameters of the ExportedProgram that an embedding gather (which stays outside
    XNNPACK) reads and another node reads too: a tied embedding. Other parameters read
    twice (e.g. Gemma's norm weights) are read inside the delegates, which already store
    them once, and are left as they are."""
    parameters = program.graph_signature.inputs_to_parameters
    return sorted(
        parameters[node.name]
        for node in program.graph.nodes
        if node.op == "placeholder"
        and node.name in parameters
        and len(node.users) > 1
        and any(_is_embedding(user) for user in node.users)
    )


def _is_embedding(node: Any) -> bool:
    return node.op == "call_function" and "embedding" in str(getattr(node, "target", ""))


def tag_delegate_constants(gm: Any) -> Any:
    """Edge pass: every placeholder's data, if a delegate serializes it, goes to `TAG`'s
    file (XNNPACK reads `meta["custom"]["delegate_constant_tag"]`); a `PassResult`."""
    from torch.fx.passes.infra.pass_base import PassResult

    for node in gm.graph.nodes:
        if node.op == "placeholder":
            node.meta.setdefault("custom", {})["delegate_constant_tag"] = TAG
    return PassResult(gm, True)
