"""Small real bundles for the runner tests, built here (not by `trt_edge.pipeline`).

One tiny model (an embedding + linear over `ids [1, seq]` with a `scale [1]`
input), exported once per session with `torch.export` over seq in [1, 64] and
lowered with XNNPACK; several bundle directories then share that `.pte` with
different profile tables and policies, written through `BundleManifest`, exactly
the document a build writes. Reference outputs come from the same eager model.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import (
    BUNDLE_JSON,
    MODEL_PTE,
    SCHEMA_VERSION,
    BundleManifest,
    DimRange,
    FileEntry,
    PhaseTarget,
    Profile,
    RuntimePolicy,
    TensorSpec,
)

VOCAB = 16
WIDTH = 8
SEQ_MAX = 64

INPUTS = (
    TensorSpec("ids", "int64", (1, "seq"), (0, VOCAB)),
    TensorSpec("scale", "float32", (1,)),
)
OUTPUTS = (TensorSpec("hidden", "float32", (1, "seq", WIDTH)),)


def build_tiny_model() -> Any:
    """The eager model (fixed seed) whose lowered program every tiny bundle carries."""
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(VOCAB, WIDTH)
            self.lin = torch.nn.Linear(WIDTH, WIDTH)

        def forward(self, ids: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor]:
            return (self.lin(self.emb(ids)) * scale,)

    torch.manual_seed(7)
    return Tiny().eval()


def write_bundle(
    out: Path,
    pte: Path,
    profiles: list[tuple[str, int, int, int]],
    phases: dict[str, PhaseTarget],
    *,
    policy: str = "pinned",
    delegates: tuple[Any, ...] = (),
    inputs: tuple[TensorSpec, ...] = INPUTS,
    outputs: tuple[TensorSpec, ...] = OUTPUTS,
) -> Path:
    """A bundle dir: a copy of `pte` and a bundle.json with (name, min, opt, max) profiles of
    the symbol `seq` (the tiny model's I/O unless `inputs`/`outputs` say otherwise)."""
    from trt_edge_runner.bundle_format import DelegateInfo

    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(pte, out / MODEL_PTE)
    data = (out / MODEL_PTE).read_bytes()
    manifest = BundleManifest(
        schema_version=SCHEMA_VERSION,
        name="tiny",
        version="0.0.1",
        backend="xnnpack",
        target={"id": "cpu-x86_64"},
        method="forward",
        inputs=inputs,
        outputs=outputs,
        profiles=tuple(
            Profile(name, {"seq": DimRange(lo, opt, hi)}) for name, lo, opt, hi in profiles
        ),
        runtime=RuntimePolicy(policy=policy, phases=phases),  # type: ignore[arg-type]
        files={MODEL_PTE: FileEntry(hashlib.sha256(data).hexdigest(), len(data))},
        delegates=tuple(d if isinstance(d, DelegateInfo) else DelegateInfo(*d) for d in delegates),
    )
    (out / BUNDLE_JSON).write_bytes(manifest.to_canonical_json())
    return out


BundleMaker = Callable[..., Path]


def lower_tiny_model(model: Any, path: Path) -> Path:
    """torch.export over seq in [1, SEQ_MAX], XNNPACK lowering, `.pte` written to `path`."""
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from torch.export import Dim, export

    seq = Dim("seq", min=1, max=SEQ_MAX)
    exported = export(
        model,
        (torch.zeros(1, 4, dtype=torch.int64), torch.ones(1)),
        dynamic_shapes={"ids": {1: seq}, "scale": None},
    )
    program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])
    path.write_bytes(program.to_executorch().buffer)
    return path


def eager(model: Any, ids: Any, scale: Any) -> Any:
    import numpy as np
    import torch

    with torch.no_grad():
        return model(torch.from_numpy(np.asarray(ids)), torch.from_numpy(np.asarray(scale)))[
            0
        ].numpy()
