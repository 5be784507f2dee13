"""What a bundle needs in memory at run time, and whether a target's boards can hold it.

`needs.bundle_memory` reads it from the staged bundle's program (`bundle.json` `memory`);
`budget.over_budget` compares it with the target catalog's board memory less a headroom.
The device's own check (`trt_edge_runner.memory_budget`) uses the same rule on measured
memory. See docs/memory-budget.md.
"""

from trt_edge.memory.budget import BoardVerdict, board_verdicts, bundle_warnings, over_budget
from trt_edge.memory.needs import RUNNER_BYTES, bundle_memory

__all__ = [
    "RUNNER_BYTES",
    "BoardVerdict",
    "board_verdicts",
    "bundle_memory",
    "bundle_warnings",
    "over_budget",
]
