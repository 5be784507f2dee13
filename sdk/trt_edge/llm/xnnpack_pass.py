"""The edge-dialect pass that keeps a causal LM's XNNPACK partitions whole.

Run before partitioning (`transform_passes` of `to_edge_transform_and_lower`) and
only for the Hugging Face recipe. Each rewrite is the same computation written as
XNNPACK's partitioner accepts it (it would otherwise end one delegate and start
another, per layer):

| left outside XNNPACK | rewritten as |
|---|---|
| `view_copy` to a shape with a symbolic dim (`[1, s, 4, 80]`) | the same view, `[1, -1, 4, 80]` |
| `mean.dim` over the last dim, keepdim (RMSNorm) | view `[1, -1, 1, D]`, mean `[2, 3]`, view back |
| `unsqueeze_copy` on a non-trailing dim | the equivalent `view_copy` |
| `cat` of a tensor with itself (rotary `cat((f, f))`) | the repeat cloned (CatConfig counts) |
| `alias_copy`, `expand_copy` that keeps the shape | dropped (identities in edge IR) |

Measured on the seed's 3-layer mini Gemma-3 together with the model-side rewrites
(`rewrites`, `attention`): 45 XNNPACK delegates → 5.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.fx import GraphModule, Node


def _edge_op(name: str) -> Any:
    from executorch.exir.dialects._ops import ops as exir_ops

    packet, overload = name.split(".")
    return getattr(getattr(exir_ops.edge.aten, packet), overload)


def _is(node: Node, name: str) -> bool:
    return node.op == "call_function" and getattr(node.target, "__name__", "") == f"aten.{name}"


def _one_inferred(shape: Any) -> list[int] | None:
    """The shape with its single symbolic dim as -1; None when more than one is symbolic."""
    dims = [d if isinstance(d, int) else None for d in shape]
    if dims.count(None) > 1:
        return None
    return [-1 if d is None else d for d in dims]


def _add(graph: Any, target: Any, args: tuple[Any, ...], val: Any) -> Node:
    node: Node = graph.call_function(target, args)
    node.meta["val"] = val
    return node


def _mean_as_4d(graph: Any, node: Node, view: Any, mean: Any) -> bool:
    x = node.args[0]
    dims = node.args[1]
    keep = len(node.args) > 2 and bool(node.args[2])
    if not isinstance(x, Node) or node.kwargs.get("dtype") is not None or not keep:
        return False
    xval = x.meta["val"]
    if xval.dim() < 2 or list(dims) not in ([-1], [xval.dim() - 1]):  # type: ignore[arg-type]
        return False
    out_shape = _one_inferred(node.meta["val"].shape)
    if out_shape is None:
        return False
    width = int(xval.shape[-1])
    with graph.inserting_before(node), xval.fake_mode:
        v4 = torch.ops.aten.view_copy.default(xval, [1, -1, 1, width])
        m4 = torch.ops.aten.mean.dim(v4, [2, 3], True)
        back = torch.ops.aten.view_copy.default(m4, out_shape)
    with graph.inserting_before(node):
        n4 = _add(graph, view, (x, [1, -1, 1, width]), v4)
        nm = _add(graph, mean, (n4, [2, 3], True), m4)
        nb = _add(graph, view, (nm, out_shape), back)
    node.replace_all_uses_with(nb)
    graph.erase_node(node)
    return True


def _distinct_cat_inputs(graph: Any, node: Node) -> bool:
    from executorch.exir.dialects._ops import ops as exir_ops

    inputs = list(node.args[0])  # type: ignore[arg-type]
    if len(inputs) < 2 or len(set(inputs)) == len(inputs):
        return False
    clone = exir_ops.edge.dim_order_ops._clone_dim_order.default
    seen: set[Any] = set()
    fresh: list[Any] = []
    with graph.inserting_before(node):
        for item in inputs:
            if item in seen:
                with item.meta["val"].fake_mode:
                    cval = torch.ops.aten.clone.default(item.meta["val"])
                item = _add(graph, clone, (item,), cval)
            seen.add(item)
            fresh.append(item)
    node.args = (fresh, *node.args[1:])
    return True


def rewrite_for_xnnpack(gm: GraphModule) -> Any:
    """The pass (a `PassResult`): every rewrite in the table above, over the whole graph."""
    from torch.fx.passes.infra.pass_base import PassResult

    graph = gm.graph
    view = _edge_op("view_copy.default")
    mean = _edge_op("mean.dim")
    changed = False
    for node in list(graph.nodes):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        if _is(node, "unsqueeze_copy.default"):
            shape = _one_inferred(val.shape)
            if shape is not None:
                node.target, node.args = view, (node.args[0], shape)
                changed = True
        elif _is(node, "mean.dim"):
            changed |= _mean_as_4d(graph, node, view, mean)
        elif _is(node, "cat.default"):
            changed |= _distinct_cat_inputs(graph, node)
        elif _is(node, "alias_copy.default"):
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)
            changed = True
        elif _is(node, "expand_copy.default"):
            source = node.args[0]
            if isinstance(source, Node) and list(source.meta["val"].shape) == list(val.shape):
                node.replace_all_uses_with(source)
                graph.erase_node(node)
                changed = True
    # Last, so views created above are covered too: one symbolic dim becomes -1.
    for node in graph.nodes:
        if _is(node, "view_copy.default"):
            shape = node.args[1]
            if any(not isinstance(d, int) for d in shape):
                fixed = _one_inferred(node.meta["val"].shape)
                if fixed is not None:
                    node.args = (node.args[0], fixed)
                    changed = True
    graph.eliminate_dead_code()
    gm.recompile()
    return PassResult(gm, changed)
