"""What a person reads after a greedy generation: the prefill, decode and stop lines.

`trt-edge generate` (the host, ExecuTorch's Python runtime) and `trt-edge-device generate`
(the C++ runner) print the same summary from the same fields, so a laptop and a device
can be compared line by line; this module is that one text. Standard library only: it
ships to devices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class GeneratedStep(Protocol):
    """One execution of a generation: the first position it wrote, the profile it ran on."""

    @property
    def start(self) -> int: ...

    @property
    def profile(self) -> int: ...


def summary_lines(
    prompt_length: int,
    steps: Sequence[GeneratedStep],
    new_tokens: int,
    stop: str,
    timings: Mapping[str, float | None],
    mode: str,
) -> list[str]:
    """`prefill: …`, `decode: …` (when a token was decoded) and `stop: …`: the calls that
    carried the prompt are those starting inside it, every later call made one token."""
    prompt_calls = [s for s in steps if s.start < prompt_length]
    decode = steps[len(prompt_calls) :]
    lines = [
        f"prefill: {prompt_length} token(s) in {len(prompt_calls)} call(s) on profile(s) "
        f"{sorted({s.profile for s in prompt_calls})}, {timings['prefill_ms']} ms "
        f"(first token after {timings['time_to_first_token_ms']} ms)"
    ]
    if decode:
        lines.append(
            f"decode: {len(decode)} token(s) on profile(s) {sorted({s.profile for s in decode})}, "
            f"{timings['decode_ms_per_token']} ms/token ({timings['decode_tokens_per_s']} "
            f"tokens/s, {mode} mode)"
        )
    lines.append(f"stop: {stop} after {new_tokens} new token(s)")
    return lines
