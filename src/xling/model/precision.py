"""Which precision a GPU trains in natively: shared by pretraining and fine-tuning, so that no
job runs in an arithmetic its GPU only emulates."""

from __future__ import annotations

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
