"""Containers benchmark: container build ÷ local build (warm image), and image build times.

Run by `make bench` (or directly). Measured side by side in one run, on the same
machine and manifest, with the stage cache disabled for both builds so each one
runs every stage (export, lower, validate):

  container ÷ local  goal ≤ 1.3: what `--container` costs over `--local` once the
                     builder image exists (engine start, mounts, log streaming); both
                     run as `trt-edge build` processes, as a user runs them.
  image build        `cpu` and `cpu-runtime` built without the layer cache (the
                     wheelhouse and the Debian base already present): what CI pays
                     cold, apart from the one-off `trt-edge images base`.
  image sizes        the device image `cpu-runtime` (C++ runner + agent, no torch)
                     beside its Debian base and the `cpu` builder; goal ≤ 250 MB.

Options: --manifest PATH (default examples/vision/manifest.yaml), --rounds N
(default 1: builds are tens of seconds each), --skip-image-build.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _quiet(_: str) -> None:
    return None


def _cli_build(manifest: Path, out: Path, *mode: str) -> float:
    """One `trt-edge build` as a user runs it: a fresh process each time, so both modes
    pay interpreter start and the torch/executorch imports (an in-process local build
    would reuse warm imports and compare unfairly)."""
    command = [sys.executable, "-m", "trt_edge", "build", str(manifest), *mode, "--no-cache"]
    command += ["--out", str(out / "out"), "--cache-dir", str(out / "cache")]
    command += ["--log-format", "json"]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def timed_local(manifest: Path, work: Path) -> float:
    return _cli_build(manifest, work / "local", "--local")


def timed_container(manifest: Path, work: Path, image: str) -> float:
    return _cli_build(manifest, work / "container", "--container", "--image", image)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", default=str(ROOT / "examples/vision/manifest.yaml"))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--skip-image-build", action="store_true")
    args = parser.parse_args(argv)
    import logging

    import structlog

    # The pipeline's own stage log would bury the figures; keep warnings only.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))

    from trt_edge.containers.daemon import connect
    from trt_edge.containers.errors import ContainerError
    from trt_edge.containers.images import build_image

    try:
        client = connect()
    except ContainerError as err:
        print(f"bench_containers: skipped: {err}")
        return 0
    if not args.skip_image_build:
        for name in ("cpu-runtime", "cpu"):
            ref = build_image(name, client=client, no_cache=True)
            size = client.images.get(ref.id).attrs.get("Size", 0) / 1e6
            print(f"image build {name:12s} (no layer cache): {ref.seconds:7.1f} s, {size:.0f} MB")
    from trt_edge.containers.base_image import load_recipe

    def megabytes(ref: str) -> float:
        return float(client.images.get(ref).attrs.get("Size", 0)) / 1e6

    warm = build_image("cpu", client=client).tag  # warm: the current image, reused
    device = megabytes(build_image("cpu-runtime", client=client).tag)
    base, builder = megabytes(load_recipe().tag), megabytes(warm)
    print(
        f"image sizes: cpu-runtime {device:.0f} MB (goal ≤ 250: "
        f"{'met' if device <= 250 else 'NOT met'}), its base {base:.0f} MB (+{device - base:.0f}),"
        f" cpu builder {builder:.0f} MB; cpu-runtime ÷ cpu builder {device / builder:.2f}"
    )
    manifest = Path(args.manifest).resolve()
    local: list[float] = []
    container: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-containers-") as tmp:
        for round_index in range(args.rounds):
            work = Path(tmp) / str(round_index)
            # Alternate the order so neither mode always runs on a warmer page cache.
            if round_index % 2 == 0:
                local.append(timed_local(manifest, work))
                container.append(timed_container(manifest, work, warm))
            else:
                container.append(timed_container(manifest, work, warm))
                local.append(timed_local(manifest, work))
    best_local, best_container = min(local), min(container)
    print(f"manifest {manifest.relative_to(ROOT) if manifest.is_relative_to(ROOT) else manifest}")
    print(f"local build     (no stage cache): {best_local:7.2f} s  (best of {len(local)})")
    print(f"container build (no stage cache): {best_container:7.2f} s  (best of {len(container)})")
    ratio = best_container / best_local
    print(f"container ÷ local: {ratio:.2f}  (goal ≤ 1.3: {'met' if ratio <= 1.3 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
