"""Process group setup for ``torchrun`` (multi-GPU, multi-node); a single process needs none."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist


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
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device is None:
        device = f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"
    runtime = Runtime(rank, local_rank, world_size, torch.device(device))
    if runtime.device.type == "cuda":
        torch.cuda.set_device(runtime.device)
    if world_size > 1 and not dist.is_initialized():
        backend = "nccl" if runtime.device.type == "cuda" else "gloo"
        dist.init_process_group(backend=backend)
    return runtime


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
