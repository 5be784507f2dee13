"""Whether this host can hand GPUs to a container.

Checked without CUDA: the NVIDIA driver exposes `/dev/nvidia<N>` device nodes, and
the daemon needs the NVIDIA container runtime/hook to pass them in. A host without
either gets a clear error for TensorRT targets instead of a failing TensorRT build.
"""

from __future__ import annotations

import glob
import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docker import DockerClient


def host_gpus() -> list[str]:
    return sorted(p for p in glob.glob("/dev/nvidia[0-9]*"))


def daemon_has_nvidia_runtime(client: DockerClient) -> bool:
    info = client.info()
    runtimes = info.get("Runtimes", {}) or {}
    return "nvidia" in runtimes or shutil.which("nvidia-container-runtime-hook") is not None
