"""Process group setup for ``torchrun`` (multi-GPU, multi-node); a single process needs none.

Every process of a GPU job trains on its own GPU (``cuda:LOCAL_RANK``). A process of a torchrun
job that sees no GPU while its job was given GPUs stops at once, naming its node: training on the
CPU, it would join the others' NCCL group over gloo and hang them. A process that stops or dies
leaves the others waiting in a collective for :data:`PROCESS_GROUP_TIMEOUT` at most; then NCCL's
watchdog aborts their communicator and ends them, so that torchrun and SLURM end the job instead of
holding its GPUs.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

from xling.jobs.gpu_pretence import ALLOW_VARIABLE

# How long a process waits in a collective (all-reduce, barrier, broadcast) before its job fails,
# instead of torch's 10 minutes for NCCL, every GPU of the job held idle when one process died.
# The longest a healthy job makes the others wait is process 0 alone writing a checkpoint at the
# paper's size (the weights and Adam's two moments, about 1.5 GB: a minute on a slow shared
# filesystem) or evaluating and saving the selected model, while they wait at a barrier or in
# their next all-reduce: 5 minutes leave that several times over.
PROCESS_GROUP_TIMEOUT = timedelta(minutes=5)
# How NCCL handles an error or a timeout of a collective (torch's ProcessGroupNCCL): 1 aborts the
# communicator and ends the process, so that no process stays blocked in a GPU kernel that waits
# for a peer that is gone. Set unless the environment sets it (NCCL_ASYNC_ERROR_HANDLING is its
# old name). Not blocking wait (TORCH_NCCL_BLOCKING_WAIT): it would make the host wait for every
# collective, and the watchdog ends a timed-out one without it.
NCCL_ERROR_HANDLING = ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
# What says that SLURM (or the user) gave this process GPUs: device lists and GPU counts.
GPU_LISTS = ("CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS")
GPU_COUNTS = ("SLURM_GPUS_ON_NODE", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK", "SLURM_GPUS")
_NO_DEVICES = {"", "-1", "none", "nodevfiles"}  # CUDA_VISIBLE_DEVICES hiding every GPU


class MissingGpuError(RuntimeError):
    """A process of a distributed GPU job sees no GPU of its own."""


@dataclass
class Runtime:
    rank: int
    local_rank: int
    world_size: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def init_runtime(device: str | None = None) -> Runtime:
    """Read torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE) and join the process group.

    Without those variables this is one process on ``device`` (default: the GPU if there is one).
    A CUDA ``device`` without an index is this process's GPU, ``cuda:LOCAL_RANK``. Raises
    :class:`MissingGpuError` for a torchrun process of a GPU job that sees no GPU of its own.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device is None:
        device = _own_device(rank, local_rank, world_size)
    chosen = torch.device(device)
    if chosen.type == "cuda" and chosen.index is None:  # set_device and NCCL need the index
        chosen = torch.device("cuda", local_rank)
    runtime = Runtime(rank, local_rank, world_size, chosen)
    if chosen.type == "cuda":
        torch.cuda.set_device(chosen)
    if world_size > 1 and not dist.is_initialized():
        backend = "nccl" if chosen.type == "cuda" else "gloo"
        if backend == "nccl":
            os.environ.setdefault(*NCCL_ERROR_HANDLING)
        dist.init_process_group(backend=backend, timeout=PROCESS_GROUP_TIMEOUT)
    return runtime


def _own_device(rank: int, local_rank: int, world_size: int) -> str:
    """``cuda:LOCAL_RANK`` where this process sees that GPU; else the CPU, unless this is a
    torchrun process of a job that was given GPUs (:func:`require_own_gpu`)."""
    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if local_rank < visible:
        return f"cuda:{local_rank}"
    if world_size > 1:
        require_own_gpu(rank, local_rank, visible)
    return "cpu"


def gpu_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` that give this process GPUs (:data:`GPU_LISTS`, and
    :data:`GPU_COUNTS` above 0), with their values."""
    found = {}
    for name in GPU_LISTS:
        value = environ.get(name, "").strip()
        if value.lower() not in _NO_DEVICES:
            found[name] = value
    for name in GPU_COUNTS:
        value = environ.get(name, "").strip()
        counts = [int(part) for part in value.replace(",", ":").split(":") if part.isdigit()]
        if any(counts):
            found[name] = value
    return found


def require_own_gpu(
    rank: int, local_rank: int, visible: int, environ: Mapping[str, str] | None = None
) -> None:
    """Raise :class:`MissingGpuError` for a torchrun process that sees ``visible`` GPUs, none for
    its ``local_rank``, where GPUs are on its node or its job was given some
    (:func:`gpu_variables`), unless :data:`ALLOW_VARIABLE` is 1; return if it may use the CPU."""
    environ = os.environ if environ is None else environ
    given = gpu_variables(environ)
    if (not given and not visible) or environ.get(ALLOW_VARIABLE) == "1":
        return
    raise MissingGpuError(_missing_gpu_message(rank, local_rank, visible, environ))


def _missing_gpu_message(rank: int, local_rank: int, visible: int, environ: Mapping) -> str:
    host = socket.gethostname()
    build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
    seen = f"sees {visible} GPU(s), none for local rank {local_rank}" if visible else "sees no GPU"
    given = ", ".join(f"{name}={value}" for name, value in gpu_variables(environ).items())
    return (
        f"process {rank} (local rank {local_rank}) on node {host} {seen} (torch "
        f"{torch.__version__}, {build}); CUDA_VISIBLE_DEVICES="
        f"{environ.get('CUDA_VISIBLE_DEVICES', 'unset')}, the job's GPU variables: "
        f"{given or 'none'}. On the CPU it would join the other processes' NCCL group over gloo "
        "and hang the job. Fix: give every process of the job step a GPU of its own: torchrun "
        "starts --nproc-per-node processes on each node, as many as the GPUs SLURM gives the "
        "step there (gpus_per_node, or gpu, under set-resources of the pretraining rules in the "
        f"SLURM profile); `srun --jobid $SLURM_JOB_ID -w {host} nvidia-smi` shows what the node "
        "sees, and a driver older than torch's CUDA hides every GPU (docs/cluster.md, 'GPU "
        f"generations and drivers'). Where GPUs are only pretended (a test cluster), set "
        f"{ALLOW_VARIABLE}=1."
    )


def barrier(runtime: Runtime) -> None:
    if runtime.distributed and dist.is_initialized():
        dist.barrier()


def broadcast_from_main(runtime: Runtime, value: Any) -> Any:
    """Process 0's ``value`` (any picklable object) on every process."""
    if not (runtime.distributed and dist.is_initialized()):
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def gather_from_all(runtime: Runtime, value: Any) -> list[Any]:
    """Every process's ``value`` (any picklable object), in rank order, on every process."""
    if not (runtime.distributed and dist.is_initialized()):
        return [value]
    values: list[Any] = [None] * runtime.world_size
    dist.all_gather_object(values, value)
    return values


def shutdown(runtime: Runtime) -> None:
    if runtime.distributed and dist.is_initialized():
        dist.destroy_process_group()
