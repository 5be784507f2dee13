"""Inspecting a 2 GB `.pte`: time and peak RSS of `trt-edge inspect` (issue 6).

Goal: < 2 s and < 200 MB peak RSS for a 2 GB `.pte`.

The 2 GB file is made here without holding 2 GB in Python: a real XNNPACK program is
lowered from a tiny model, then *grown* with ExecuTorch's own serializer pieces — its
FlatBuffer gets one more segment and one more named-data entry (`bench/padding`, 2 GiB)
and the segment bytes are streamed to disk in 16 MiB chunks. The result is a valid
`.pte` (ExecuTorch's deserializer and runtime accept the grown format; checked below on
the 256 MiB variant, where that is affordable) whose bulk is named data, like the
weights of a large XNNPACK or TensorRT model.

Every measured command runs in a fresh process under a small wrapper process that
waits for it and reads `resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`, so each RSS
figure is exactly one inspecting process (interpreter start-up included). Printed side
by side in one run:

* `trt-edge inspect --json` on the tiny original, on 256 MiB and on 2 GiB (cost must
  not grow with the file);
* on 256 MiB, ExecuTorch's `deserialize_pte_binary` (reads the whole file into Python)
  against ours.

Files are deleted afterwards. Exits 0 whether or not goals are met (a figure, not a
test); 1 only when a measurement cannot be taken.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TypedDict

REPO = Path(__file__).resolve().parents[1]
GIB = 1 << 30
MIB = 1 << 20
CHUNK = 16 * MIB
SEGMENT_ALIGNMENT = 128  # ExecuTorch's default segment_alignment

WRAPPER = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
wall = time.perf_counter() - t
rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"wall": wall, "rss_mib": rss_kib / 1024, "rc": proc.returncode,
                  "stdout": proc.stdout.decode()[-400:], "stderr": proc.stderr.decode()[-800:]}))
"""


class Measured(TypedDict):
    """What the wrapper prints about one process."""

    wall: float  # seconds
    rss_mib: float  # peak resident set size
    rc: int
    stdout: str  # the last 400 characters
    stderr: str  # the last 800 characters


def measure(cmd: list[str]) -> Measured:
    """Run `cmd` under the wrapper; wall seconds and peak RSS (MiB) of that one process."""
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, *cmd], check=True, capture_output=True, text=True
    )
    result: Measured = json.loads(out.stdout)
    if result["rc"] != 0:
        raise RuntimeError(f"{cmd} failed: {result['stderr']}")
    return result


def small_xnnpack_pte(dest: Path) -> Path:
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from torch.export import Dim, export

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(256, 64)
            self.lin = torch.nn.Linear(64, 64)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.lin(self.emb(ids)))

    torch.manual_seed(0)
    ep = export(
        Tiny().eval(),
        (torch.zeros(1, 4, dtype=torch.long),),
        dynamic_shapes={"ids": {1: Dim("seq", min=1, max=128)}},
    )
    et = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
    dest.write_bytes(et.buffer)
    return dest


def grow_pte(source: Path, dest: Path, extra: int, key: str = "bench/padding") -> Path:
    """Copy `source` adding one named-data segment of `extra` bytes, streamed to disk.

    Re-serializes only the (small) FlatBuffer with ExecuTorch's own helpers; existing
    segments keep their relative offsets, the new one is appended after them.
    """
    from executorch.exir._serialize._flatbuffer_program import (
        _flatbuffer_to_program,
        _program_to_flatbuffer,
    )
    from executorch.exir._serialize._program import (
        _ExtendedHeader,
        _get_extended_header,
        _insert_flatbuffer_header,
    )
    from executorch.exir._serialize.padding import aligned_size
    from executorch.exir.schema import DataSegment, NamedData

    data = source.read_bytes()
    eh = _get_extended_header(data)
    if eh is None:
        raise RuntimeError(f"{source}: no extended header; lower a model with weights")
    program = _flatbuffer_to_program(data[: eh.program_size])
    old_segments = data[eh.segment_base_offset :]
    prev_end = max((s.offset + s.size for s in program.segments), default=0)
    offset = aligned_size(prev_end, SEGMENT_ALIGNMENT)
    program.segments.append(DataSegment(offset=offset, size=extra))
    program.named_data = [
        *(program.named_data or []),
        NamedData(key=key, segment_index=len(program.segments) - 1),
    ]
    flat = _program_to_flatbuffer(program)
    header_len = aligned_size(_ExtendedHeader.EXPECTED_LENGTH, flat.max_alignment)
    program_size = header_len + len(flat.data)
    base = aligned_size(program_size, SEGMENT_ALIGNMENT)
    header = _ExtendedHeader(
        program_size=program_size, segment_base_offset=base, segment_data_size=offset + extra
    ).to_bytes()
    header += b"\x00" * (header_len - len(header))
    program_data = _insert_flatbuffer_header(flat.data, r"ET[0-9a-zA-Z][0-9a-zA-Z]", header)
    pattern = bytes(range(256)) * (CHUNK // 256)
    with open(dest, "wb") as out:
        out.write(program_data)
        out.write(b"\x00" * (base - len(program_data)))
        out.write(old_segments)
        out.write(b"\x00" * (offset - len(old_segments)))
        remaining = extra
        while remaining:
            n = min(remaining, CHUNK)
            out.write(pattern[:n])
            remaining -= n
    return dest


# `trt-edge inspect --json PATH` in a fresh interpreter; prints how long `main()` took
# (reading the file and building the report) apart from interpreter start-up.
INSPECT_SCRIPT = """
import contextlib, io, sys, time
from trt_edge.cli.main import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    rc = main(["inspect", "--json", sys.argv[1]])
print(f"{time.perf_counter() - t:.4f}")
sys.exit(rc)
"""
INSPECT = [sys.executable, "-c", INSPECT_SCRIPT]
INSPECT_CLI = [sys.executable, "-m", "trt_edge.cli.main", "inspect", "--json"]
EXECUTORCH_DESERIALIZE = [
    sys.executable,
    "-c",
    "import sys; from executorch.exir._serialize._program import deserialize_pte_binary; "
    "deserialize_pte_binary(open(sys.argv[1], 'rb').read())",
]
RUNTIME_LOAD = [
    sys.executable,
    "-c",
    "import sys, torch; from executorch.runtime import Runtime; "
    "m = Runtime.get().load_program(sys.argv[1]).load_method('forward'); "
    "out = m.execute([torch.zeros(1, 5, dtype=torch.long)]); "
    "assert tuple(out[0].shape) == (1, 5, 64), out[0].shape",
]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-inspect-") as tmp:
        work = Path(tmp)
        small = small_xnnpack_pte(work / "small.pte")
        mid = grow_pte(small, work / "mid.pte", 256 * MIB)
        t = time.perf_counter()
        big = grow_pte(small, work / "big.pte", 2 * GIB)
        made = time.perf_counter() - t
        big_size = big.stat().st_size
        print(f"made {big.name}: {big_size / GIB:.2f} GiB in {made:.1f} s (streamed)")

        runtime = measure([*RUNTIME_LOAD, str(mid)])
        print(
            f"executorch runtime loads + runs the grown 256 MiB .pte: ok ({runtime['wall']:.2f} s)"
        )

        rows = [
            ("trt-edge inspect, tiny original", measure([*INSPECT, str(small)])),
            ("trt-edge inspect, 256 MiB", measure([*INSPECT, str(mid)])),
            ("trt-edge inspect, 2 GiB", measure([*INSPECT, str(big)])),
            (
                "executorch deserialize_pte_binary, 256 MiB",
                measure([*EXECUTORCH_DESERIALIZE, str(mid)]),
            ),
        ]
        doc = json.loads(subprocess.run([*INSPECT_CLI, str(big)], capture_output=True).stdout)
        padding = next(n for n in doc["named_data"] if n["key"] == "bench/padding")
        assert padding["size"] == 2 * GIB, padding
        for f in (small, mid, big):
            f.unlink()

    print(f"{'what':46s} {'process s':>9s} {'inspect s':>9s} {'peak RSS MiB':>13s}")
    for name, r in rows:
        inner = r["stdout"].strip().splitlines()
        read = f"{float(inner[-1]):9.3f}" if name.startswith("trt-edge") and inner else f"{'-':>9s}"
        print(f"{name:46s} {r['wall']:9.2f} {read} {r['rss_mib']:13.1f}")
    tiny, _, big_r, et_r = (r for _, r in rows)
    mid_r = rows[1][1]
    print(
        f"ratios: 2 GiB / tiny  wall {big_r['wall'] / tiny['wall']:.2f}x, "
        f"RSS {big_r['rss_mib'] / tiny['rss_mib']:.2f}x; "
        f"executorch / ours at 256 MiB  wall {et_r['wall'] / mid_r['wall']:.1f}x, "
        f"RSS {et_r['rss_mib'] / mid_r['rss_mib']:.1f}x"
    )
    ok_time = big_r["wall"] < 2.0  # whole process, start-up included
    ok_rss = big_r["rss_mib"] < 200.0
    print(
        f"goal (2 GiB .pte: < 2 s, < 200 MB RSS): wall {'met' if ok_time else 'MISSED'}, "
        f"RSS {'met' if ok_rss else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
