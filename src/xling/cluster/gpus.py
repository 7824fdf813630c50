"""A GPU job that cannot see its GPUs stops at once instead of training on the CPU.

When the node's NVIDIA driver is older than the CUDA build of torch (or the job's env got the CPU
build), ``torch.cuda.is_available()`` is False and every training loop here falls back to the CPU:
a week of 8-GPU pretraining would run at a thousandth of the speed while holding the GPUs. Every
job adapter calls :func:`require_visible_gpus` with its resources before any work.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

# Set to 1 where GPUs are only pretended, e.g. the test suite's SLURM cluster with fake GPUs.
ALLOW_VARIABLE = "XLING_ALLOW_MISSING_GPUS"
_DRIVER_FILE = Path("/proc/driver/nvidia/version")
_GRES_GPUS = re.compile(r"(?:^|,)gpu(?::[A-Za-z0-9_.-]+)?:(\d+)\b")


class GpuVisibilityError(RuntimeError):
    """The job asked for GPUs that torch does not see."""


def gpus_of(resources: Mapping[str, object]) -> int:
    """GPUs a job holds in all: nodes x gpus_per_node, else gpu (SLURM's --gpus), else gres."""
    nodes = int(resources.get("nodes") or 1)
    if resources.get("gpus_per_node"):
        return nodes * int(resources["gpus_per_node"])
    for name in ("gpu", "gpus"):
        if resources.get(name):
            return int(resources[name])
    return nodes * gres_gpus_per_node(resources)


def gres_gpus_per_node(resources: Mapping[str, object]) -> int:
    """GPUs per node a ``gres`` resource asks for (``gpu:8``, typed ``gpu:a100:8``); 0 without."""
    found = _GRES_GPUS.search(str(resources.get("gres") or ""))
    return int(found.group(1)) if found else 0


def gpus_per_node(resources: Mapping[str, object]) -> int:
    """GPUs a job's resources ask for on each of its nodes (0 for a CPU job)."""
    nodes = max(int(resources.get("nodes") or 1), 1)
    return gpus_of(resources) // nodes


def driver_description() -> str:
    """The NVIDIA driver of this node in words, or why there is none to name."""
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        versions = sorted(set(done.stdout.split()))
        if done.returncode == 0 and versions:
            return f"NVIDIA driver {', '.join(versions)} (nvidia-smi)"
    except (OSError, subprocess.TimeoutExpired):
        pass
    if _DRIVER_FILE.is_file():
        first = _DRIVER_FILE.read_text(errors="replace").splitlines()[:1]
        return f"NVIDIA driver: {first[0].strip() if first else 'unreadable'} ({_DRIVER_FILE})"
    return f"no NVIDIA driver on this node (no nvidia-smi, no {_DRIVER_FILE})"


def _torch_view() -> tuple[int, str, str | None]:
    try:
        import torch
    except ImportError:  # a rule env without torch sees no GPU either
        return 0, "(not installed)", None
    return torch.cuda.device_count(), torch.__version__, torch.version.cuda


def require_visible_gpus(
    resources: Mapping[str, object],
    *,
    torch_view: Callable[[], tuple[int, str, str | None]] = _torch_view,
    driver: Callable[[], str] = driver_description,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Raise GpuVisibilityError when torch sees fewer GPUs than the job asked for on its node."""
    environ = os.environ if environ is None else environ
    asked = gpus_per_node(resources)
    if asked == 0 or environ.get(ALLOW_VARIABLE) == "1":
        return
    seen, torch_version, cuda = torch_view()
    if seen >= asked:
        return
    build = f"built for CUDA {cuda}" if cuda else "a CPU-only build (no CUDA at all)"
    visible = environ.get("CUDA_VISIBLE_DEVICES", "unset")
    raise GpuVisibilityError(
        f"this job asked for {asked} GPU(s) on its node but torch sees {seen}: torch "
        f"{torch_version} is {build}; {driver()}; CUDA_VISIBLE_DEVICES={visible}. A driver older "
        "than torch's CUDA version hides every GPU from torch, and the job would train on the CPU "
        "while holding the GPUs. Fix: give the GPU rules a torch build for the nodes' driver "
        "(envs/torch.yaml: pytorch-cuda / cuda-version), or submit to a partition with a newer "
        f"driver. Where GPUs are only pretended (a test cluster), set {ALLOW_VARIABLE}=1."
    )
