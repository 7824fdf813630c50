"""What every trainer's resumable state does the same way: torch files written atomically, and the
random number generators' states, so that a resumed run draws what an uninterrupted one would.

The trainers keep their own layouts (:mod:`xling.finetune.checkpoint`, one state and the epochs'
weights; :mod:`xling.pretrain.checkpoint`, the last two checkpoints and their best models).
"""

from __future__ import annotations

import os
from typing import Any

import torch

from xling.base.atomic import atomic_open


def save(path: str | os.PathLike, obj: Any) -> None:
    """``torch.save`` through a temporary file: a kill leaves the previous file or the new one."""
    with atomic_open(path, "wb") as handle:
        torch.save(obj, handle)


def rng_state(device: torch.device) -> dict[str, Any]:
    """The CPU generator's state (``"torch"``) and, on a GPU, that device's (``"cuda"``)."""
    state = {"torch": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def restore_rng_state(state: dict[str, Any], device: torch.device) -> None:
    """Put back what :func:`rng_state` saved (a GPU state only on a GPU, and only if saved)."""
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and state.get("cuda") is not None:
        torch.cuda.set_rng_state(state["cuda"], device)
