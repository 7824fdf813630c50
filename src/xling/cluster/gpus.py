"""A GPU job that cannot use its GPUs stops within seconds instead of failing late or crawling.

Three things stop a CUDA build of torch on a node, and each is checked here before any work:

* the node's NVIDIA driver is older than the minimum of torch's CUDA version: torch sees no GPU
  (``torch.cuda.is_available()`` is False) and every training loop here would fall back to the
  CPU, a week of 8-GPU pretraining at a thousandth of the speed while holding the GPUs;
* the env holds torch's CPU build: the same;
* torch has no kernels for the GPU (the CUDA 13 wheel on a V100): every kernel launch fails with
  "no kernel image is available for execution on the device", after the job has read its data.

Each message names the config key that picks another build (``cluster.torch_build``,
:mod:`xling.cluster.torch_builds`) and its env file. Every job adapter calls
:func:`require_visible_gpus` with its resources (``workflow/scripts/_bootstrap.py``).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from xling.cluster.torch_builds import builds_for, format_version, min_driver, parse_version
from xling.jobs.gpu_pretence import ALLOW_VARIABLE

_DRIVER_FILE = Path("/proc/driver/nvidia/version")
_GRES_GPUS = re.compile(r"(?:^|,)gpu(?::[A-Za-z0-9_.-]+)?:(\d+)\b")
# torch.cuda.get_arch_list(): compiled kernels (sm_90) and PTX (compute_90); an "a" suffix
# (sm_90a) runs on exactly that GPU, an "f" one (sm_100f) on its family, as a plain one does.
_ARCH = re.compile(r"(sm|compute)_(\d+)(\d)([af]?)")


class GpuVisibilityError(RuntimeError):
    """The job asked for GPUs that torch does not see, or cannot run kernels on."""


@dataclass(frozen=True)
class TorchCuda:
    """What this process's torch says about CUDA: its version, the CUDA it was built with (None:
    the CPU build), the GPUs it sees, its architectures and, per GPU, name and capability."""

    version: str
    cuda: str | None
    devices: int
    arch_list: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    capabilities: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class NodeDriver:
    """This node's NVIDIA driver: its version (None if none is found), the GPUs it lists (0 where
    nvidia-smi is missing) and a description for messages."""

    version: tuple[int, ...] | None
    gpus: int
    description: str


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


def node_driver() -> NodeDriver:
    """This node's NVIDIA driver, from nvidia-smi, else from the kernel module's version file."""
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        lines = done.stdout.split()
        if done.returncode == 0 and lines:
            versions = sorted(set(lines))
            return NodeDriver(
                parse_version(versions[0]),
                len(lines),
                f"NVIDIA driver {', '.join(versions)} (nvidia-smi, {len(lines)} GPU(s))",
            )
    except (OSError, subprocess.TimeoutExpired):
        pass
    if _DRIVER_FILE.is_file():
        first = _DRIVER_FILE.read_text(errors="replace").splitlines()[:1]
        line = first[0].strip() if first else "unreadable"
        # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ..."
        found = re.search(r"Kernel Module\s+(\d+(?:\.\d+)+)", line)
        version = parse_version(found.group(1)) if found else None
        return NodeDriver(version, 0, f"NVIDIA driver: {line} ({_DRIVER_FILE})")
    return NodeDriver(None, 0, f"no NVIDIA driver on this node (no nvidia-smi, no {_DRIVER_FILE})")


def torch_cuda() -> TorchCuda:
    """:class:`TorchCuda` of this process (initialises CUDA, which takes a second or two)."""
    try:
        import torch
    except ImportError:  # a rule env without torch sees no GPU either
        return TorchCuda("(not installed)", None, 0)
    if not torch.cuda.is_available():
        return TorchCuda(torch.__version__, torch.version.cuda, 0)
    count = torch.cuda.device_count()
    return TorchCuda(
        torch.__version__,
        torch.version.cuda,
        count,
        tuple(torch.cuda.get_arch_list()),
        tuple(torch.cuda.get_device_name(i) for i in range(count)),
        tuple(tuple(torch.cuda.get_device_capability(i)) for i in range(count)),
    )


def kernel_for(arch_list: Sequence[str], capability: tuple[int, int]) -> str | None:
    """The entry of ``arch_list`` that runs on a GPU of ``capability``, None if none does.

    A compiled kernel (sm_XY) runs on GPUs of the same major version and a minor at least Y
    (CUDA's binary compatibility: sm_80 on an 8.6 A10); PTX (compute_XY) on any GPU of XY or
    newer, which the driver compiles at first use (minutes, cached in ~/.nv/ComputeCache). As
    CUDA does, this takes the newest compiled kernel that runs, else the newest PTX.
    """
    compiled, ptx = [], []
    for arch in arch_list:
        found = _ARCH.fullmatch(arch)
        if found is None:
            continue
        kind, version, suffix = found[1], (int(found[2]), int(found[3])), found[4]
        if suffix == "a" and version != tuple(capability):
            continue
        if kind == "sm" and version[0] == capability[0] and version[1] <= capability[1]:
            compiled.append((version, arch))
        elif kind == "compute" and version <= tuple(capability):
            ptx.append((version, arch))
    best = max(compiled or ptx, default=None)
    return best[1] if best else None


def sm_name(capability: tuple[int, int]) -> str:
    return f"sm_{capability[0]}{capability[1]}"


def require_visible_gpus(
    resources: Mapping[str, object],
    *,
    torch_view: Callable[[], TorchCuda] = torch_cuda,
    driver: Callable[[], NodeDriver] = node_driver,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """Raise GpuVisibilityError unless torch sees the GPUs the job asked for on its node and has
    kernels for each; return what was checked, in a line for the job's log (None: no GPU job)."""
    environ = os.environ if environ is None else environ
    asked = gpus_per_node(resources)
    if asked == 0 or environ.get(ALLOW_VARIABLE) == "1":
        return None
    view = torch_view()
    if view.devices < asked:
        raise GpuVisibilityError(_too_few_gpus(asked, view, driver(), environ))
    kinds = sorted(set(zip(view.names, view.capabilities, strict=True)))
    kernels = {capability: kernel_for(view.arch_list, capability) for _, capability in kinds}
    missing = [(name, capability) for name, capability in kinds if kernels[capability] is None]
    if missing:
        raise GpuVisibilityError(_no_kernels(missing, view, driver()))
    gpus = "; ".join(
        f"{view.names.count(name)} x {name} ({sm_name(capability)}: "
        f"{kernel_words(kernels[capability])})"
        for name, capability in kinds
    )
    return f"GPUs checked: {gpus}; torch {view.version}, CUDA {view.cuda}"


def kernel_words(arch: str | None) -> str:
    """What :func:`kernel_for` found, in words."""
    if arch is None:
        return "no kernels"
    if arch.startswith("compute_"):
        return f"{arch} PTX, compiled by the driver at first use"
    return f"{arch} kernels"


def _too_few_gpus(asked: int, view: TorchCuda, node: NodeDriver, environ: Mapping) -> str:
    seen = f"this job asked for {asked} GPU(s) on its node but torch sees {view.devices}"
    needed = min_driver(view.cuda)
    if view.cuda and needed and node.version is not None and node.version < needed:
        return (
            f"{seen}: torch {view.version} is built for CUDA {view.cuda}, which needs an NVIDIA "
            f"driver >= {format_version(needed)}, and this node has {node.description}. "
            f"{_fix(builds_for(driver=node.version), view, 'that runs on this driver')}"
        )
    build = f"built for CUDA {view.cuda}" if view.cuda else "a CPU-only build (no CUDA at all)"
    visible = environ.get("CUDA_VISIBLE_DEVICES", "unset")
    cause = (
        "The driver is new enough for this build: look at CUDA_VISIBLE_DEVICES and at the GPUs "
        "SLURM gave the job (`scontrol show job`)."
        if view.cuda and node.version is not None
        else "A driver older than torch's CUDA version, or a CPU build, hides every GPU from "
        "torch, and the job would train on the CPU while holding the GPUs."
    )
    return (
        f"{seen}: torch {view.version} is {build}; {node.description}; "
        f"CUDA_VISIBLE_DEVICES={visible}. {cause} The CUDA builds of torch the GPU rules can run "
        f"in: {_choices()}; or submit to a partition with a newer driver. Where GPUs are only "
        f"pretended (a test cluster), set {ALLOW_VARIABLE}=1."
    )


def _no_kernels(missing: list, view: TorchCuda, node: NodeDriver) -> str:
    gpus = ", ".join(
        f"{name} (compute capability {c[0]}.{c[1]}: {sm_name(c)})" for name, c in missing
    )
    capability = min(c for _, c in missing)
    return (
        f"torch {view.version} (CUDA {view.cuda}) has no kernels for this node's {gpus}: it "
        f"carries {' '.join(view.arch_list) or 'none'}, and every CUDA kernel would fail with "
        f"'no kernel image is available for execution on the device'. "
        f"{_fix(builds_for(capability, node.version), view, 'with kernels for it')}"
    )


def _fix(builds: list, view: TorchCuda, what: str) -> str:
    """The builds to switch to (not the one installed, whatever the table says of it)."""
    builds = [build for build in builds if build.cuda != view.cuda]
    if not builds:
        return (
            f"No torch build of this workflow runs here ({_choices()}): submit the GPU rules to "
            "a partition of other GPUs or a newer driver (docs/cluster.md, 'GPU generations and "
            "drivers')."
        )
    return (
        f"Fix: set {' or '.join(build.describe() for build in builds)} in the config (a build "
        f"{what}), or submit to another partition (docs/cluster.md, 'GPU generations and "
        "drivers')."
    )


def _choices() -> str:
    return " or ".join(build.describe() for build in builds_for())
