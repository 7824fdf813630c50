"""Resumable fine-tuning state in a work directory (never a declared output of the workflow).

After every epoch the trainable weights go to ``epoch{N:03d}.pt`` and the optimizer, scheduler, RNG
and history to ``state.pt``, each written atomically, weights first: a kill at any moment leaves a
consistent pair, and a rerun continues after the last finished epoch. Only the last and the best
epoch's weights are kept. Frozen (language-specific) parameters are not saved: they are reloaded
from the pretrained model.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch
from torch import nn

from xling.base.atomic import remove_parts
from xling.jobs import joblog
from xling.jobs.checkpoint import save

STATE_NAME = "state.pt"
log = logging.getLogger(__name__)


def epoch_path(work_dir: str | Path, epoch: int) -> Path:
    return Path(work_dir) / f"epoch{epoch:03d}.pt"


def trainable_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """Copies of the parameters that fine-tuning changes."""
    return {
        name: param.detach().cpu().clone()
        for name, param in model.named_parameters()
        if param.requires_grad
    }


def save_epoch(work_dir: str | Path, model: nn.Module, epoch: int) -> None:
    save(epoch_path(work_dir, epoch), trainable_state(model))


def load_epoch(work_dir: str | Path, model: nn.Module, epoch: int) -> None:
    """Put the weights saved after ``epoch`` back into ``model``'s trainable parameters."""
    path = epoch_path(work_dir, epoch)
    weights = torch.load(path, map_location="cpu", weights_only=True)
    params = dict(model.named_parameters())
    expected = {name for name, param in params.items() if param.requires_grad}
    if set(weights) != expected:
        raise RuntimeError(
            f"{path} does not match the model (different task head or frozen set); "
            f"delete {Path(work_dir)} to start this job afresh"
        )
    with torch.no_grad():
        for name, tensor in weights.items():
            params[name].copy_(tensor)


def save_state(work_dir: str | Path, state: dict[str, Any]) -> None:
    save(Path(work_dir) / STATE_NAME, state)


def load_state(work_dir: str | Path, fingerprint: dict[str, Any]) -> dict[str, Any] | None:
    """The saved state if it belongs to the same job (same ``fingerprint``), else None.

    A state from different settings (another grid point, a retrained model) is discarded, with a
    warning, together with its epoch files.
    """
    work_dir = Path(work_dir)
    path = work_dir / STATE_NAME
    if not path.exists():
        return None
    # weights_only=False: the state holds plain Python history and RNG byte tensors of our own.
    state = torch.load(path, map_location="cpu", weights_only=False)
    if state.get("fingerprint") != fingerprint:
        clear(work_dir)  # the other run's log lines too: they are no part of this run's history
        log.warning("%s belongs to other settings; starting this job afresh", path)
        return None
    if not epoch_path(work_dir, state["epoch"]).exists():  # a kill in the middle of clear()
        clear(work_dir)
        log.warning(
            "%s names epoch %d, whose weights are gone; starting afresh", path, state["epoch"]
        )
        return None
    return state


def prune(work_dir: str | Path, keep: set[int]) -> None:
    """Delete epoch weights other than ``keep``."""
    for path in Path(work_dir).glob("epoch*.pt"):
        number = path.stem.removeprefix("epoch")
        if number.isdigit() and int(number) not in keep:
            path.unlink(missing_ok=True)


def clear(work_dir: str | Path) -> None:
    """Delete the saved state, then the epoch weights and any half-written file, then the run's
    log history (:mod:`xling.jobs.joblog`): a kill in between leaves weights without a state, which
    a rerun ignores, never a state without its weights."""
    (Path(work_dir) / STATE_NAME).unlink(missing_ok=True)
    prune(work_dir, set())
    remove_parts(work_dir)  # writes a kill cut short
    joblog.history_path(work_dir).unlink(missing_ok=True)
