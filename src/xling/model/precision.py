"""Which precision a GPU trains in natively: shared by pretraining and fine-tuning, so that no
job runs in an arithmetic its GPU only emulates."""

from __future__ import annotations

import re

import torch

# The first CUDA compute capability with bf16 tensor cores (A100, sm_80).
NATIVE_BF16 = (8, 0)


def native_precision(capability: tuple[int, int] | None) -> str:
    """The precision ``auto`` trains in on a GPU of compute ``capability`` (None: a CPU).

    bf16 where the GPU computes it natively (sm_80 and later: A100, H100...), fp16 with loss
    scaling below (V100 sm_70, T4 sm_75), fp32 on a CPU. Not ``torch.cuda.is_bf16_supported()``:
    it says True on a V100 too, which emulates bf16 at a fraction of its fp16 speed.
    """
    if capability is None:
        return "fp32"
    return "bf16" if tuple(capability) >= NATIVE_BF16 else "fp16"


def device_capability(device: torch.device) -> tuple[int, int] | None:
    """The compute capability of a CUDA ``device``; None for any other device."""
    if device.type != "cuda":
        return None
    return tuple(torch.cuda.get_device_capability(device))


def capability_name(capability: tuple[int, int]) -> str:
    """``(8, 0)`` as ``"8.0"``, as NVIDIA writes a compute capability."""
    return f"{capability[0]}.{capability[1]}"


# Compute capabilities of the data-centre GPUs that checkpoints of earlier versions may name (they
# keyed a resume on torch.cuda.get_device_name): whole words of the name, so that "A10" is not
# read in "A100-SXM4-80GB" nor "H200" in "GH200". NVIDIA's table (developer.nvidia.com/cuda-gpus).
NAMED_CAPABILITIES = {
    "P100": (6, 0),
    "V100": (7, 0),
    "V100S": (7, 0),
    "T4": (7, 5),
    "A100": (8, 0),
    "A30": (8, 0),
    "A800": (8, 0),
    "A10": (8, 6),
    "A40": (8, 6),
    "A6000": (8, 6),
    "L4": (8, 9),
    "L40": (8, 9),
    "L40S": (8, 9),
    "H100": (9, 0),
    "H800": (9, 0),
    "H200": (9, 0),
    "GH200": (9, 0),
    "B200": (10, 0),
    "GB200": (10, 0),
}


def capability_of_name(device_name: str) -> tuple[int, int] | None:
    """The compute capability of a GPU named like ``torch.cuda.get_device_name()`` ("NVIDIA
    A100-SXM4-40GB", "Tesla V100-SXM2-16GB"); None for a name not in :data:`NAMED_CAPABILITIES`."""
    words = set(re.split(r"[^A-Za-z0-9]+", device_name))
    found = {NAMED_CAPABILITIES[word] for word in words if word in NAMED_CAPABILITIES}
    return found.pop() if len(found) == 1 else None
