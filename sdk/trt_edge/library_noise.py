"""Known-harmless messages that torch, torchao and ExecuTorch print, and how to hold them back.

A build imports torch, ExecuTorch and, through ExecuTorch, torchao. On a CPU machine
they print lines a user reads as failures ("Failed to load ... Could not load this
library") or as something to act on (deprecations inside those libraries). Each is
listed below with where it comes from and why it is harmless; `quiet_library_noise()`
holds back exactly these, at the level they are emitted at:

- Python `logging` records: a filter on the named logger that drops a WARNING whose
  message matches (an ERROR with the same text, or any other message, still shows);
- Python `warnings`: an "ignore" entry for that category and message.

Nothing else is hidden: an unknown line, a new message from the same library, or a
real error reaches the user as before. `trt-edge build -v` installs none of this.
The ExecuTorch runtime's own C++ lines on file descriptor 2 (XNNPACK's CPU probe)
are held back where bundles are loaded: `trt_edge_runner.runner.quiet_runtime_stderr`.
"""

from __future__ import annotations

import builtins
import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class KnownNoise:
    """One harmless message: which channel and source emit it, what it says, why it is noise.

    `source` is the logger's name for `logging`, the warning category's name for
    `warnings`; `pattern` is a regular expression matched at the start of the message.
    """

    channel: Literal["logging", "warnings"]
    source: str
    pattern: str
    why: str


KNOWN_NOISE: tuple[KnownNoise, ...] = (
    KnownNoise(
        "logging",
        "torchao",
        r"Failed to load \S*/torchao/_C\w*\.\S*so: Could not load this library",
        why="torchao/__init__.py tries its optional compiled kernels (CUDA, or built for "
        "another Python) when ExecuTorch imports it; CPU lowering and the runtime never "
        "call them",
    ),
    KnownNoise(
        "logging",
        "torch.utils._pytree",
        r"<enum '\w+'> is an Enum subclass and is now natively supported by torch\.compile "
        r"as an opaque value type\. Calling register_constant\(\) on Enum subclasses is "
        r"deprecated",
        why="torchao registers its KernelPreference enum the pre-2.13 way at import; torch "
        "2.13 warns once through its own log handler (the `W1201 ... _pytree.py:630]` line)",
    ),
    KnownNoise(
        "warnings",
        "FutureWarning",
        r"`isinstance\(treespec, LeafSpec\)` is deprecated",
        why="torch.utils._pytree deprecated LeafSpec; ExecuTorch's lowering copies programs "
        "holding LeafSpecs, and every copy warns (a dozen times per lowering)",
    ),
    KnownNoise(
        "warnings",
        "UserWarning",
        r"Mutation on a buffer in the model is detected\. ExecuTorch assumes buffers that are "
        r"mutated in the graph have a meaningless initial state",
        why="ExecuTorch's emitter, for every program with mutable buffers: the Hugging Face "
        "recipe's KV cache is one by design. It starts zeroed because the runtime zero-fills "
        "the planned memory it lives in; the bundle records that requirement "
        "(llm.requires_zeroed_planned_memory) and validation checks a fresh load starts clean",
    ),
)


class _DropKnown(logging.Filter):
    """Drops WARNING records whose message matches one of `patterns`; passes all else."""

    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        super().__init__()
        self.patterns = patterns

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING:
            return True
        message = record.getMessage()
        return not any(p.match(message) for p in self.patterns)


def _category(name: str) -> type[Warning]:
    category = getattr(builtins, name, None)
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise ValueError(f"KNOWN_NOISE: {name!r} is not a built-in warning category")
    return category


@contextmanager
def quiet_library_noise(noise: tuple[KnownNoise, ...] = KNOWN_NOISE) -> Iterator[None]:
    """Hold back exactly the `noise` entries while the block runs; restore everything after.

    Filters go on the named loggers before the libraries are imported (the filter
    stays on the logger object the library later fetches by the same name).
    """
    by_logger: dict[str, list[re.Pattern[str]]] = {}
    for entry in noise:
        if entry.channel == "logging":
            by_logger.setdefault(entry.source, []).append(re.compile(entry.pattern))
    installed = [(logging.getLogger(name), _DropKnown(p)) for name, p in by_logger.items()]
    with warnings.catch_warnings():
        for entry in noise:
            if entry.channel == "warnings":
                warnings.filterwarnings(
                    "ignore", message=entry.pattern, category=_category(entry.source)
                )
        for logger, drop in installed:
            logger.addFilter(drop)
        try:
            yield
        finally:
            for logger, drop in installed:
                logger.removeFilter(drop)
