"""Resumable training state in the job's work directory (never a declared workflow output).

``checkpoint.pt`` holds everything a rerun needs to continue as if never stopped: weights, Adam
moments, schedule, gradient scaler, RNG states, the batch plan's position, the curve so far, the
current best model's step. It is written atomically (temporary file + rename), so a kill during the
write leaves the previous checkpoint intact.

The best model (by dev perplexity of the selection language) lives in ``best-step{N}/``, a model
directory written atomically when a new best appears. The checkpoint names the best directory that
belongs to its own history; a newer one (written after the last checkpoint by a run that was then
killed) is removed on resume, because the resumed run will redo that part.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import torch

from xling.atomic import atomic_open

CHECKPOINT_NAME = "checkpoint.pt"
FORMAT_VERSION = 1


def checkpoint_path(work_dir: str | Path) -> Path:
    return Path(work_dir) / CHECKPOINT_NAME


def save_checkpoint(work_dir: str | Path, state: dict[str, Any]) -> Path:
    path = checkpoint_path(work_dir)
    with atomic_open(path, "wb") as handle:
        torch.save({"format": FORMAT_VERSION, **state}, handle)
    return path


def load_checkpoint(work_dir: str | Path) -> dict[str, Any] | None:
    """The saved state, or None when the job has not checkpointed yet."""
    path = checkpoint_path(work_dir)
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise RuntimeError(
            f"{path} cannot be read ({error}); delete it (or the whole work directory) to restart "
            "this pretraining job from scratch"
        ) from error
    if state.get("format") != FORMAT_VERSION:
        raise RuntimeError(
            f"{path} has checkpoint format {state.get('format')!r}, this code writes "
            f"{FORMAT_VERSION}; delete the work directory to restart the job"
        )
    return state


def check_same_job(state: dict[str, Any], expected: dict[str, Any], path: Path) -> None:
    """Refuse to resume a checkpoint written with other settings, data or languages."""
    saved = state["job"]
    differing = sorted(k for k in set(saved) | set(expected) if saved.get(k) != expected.get(k))
    if differing:
        details = "; ".join(f"{k}: {saved.get(k)!r} -> {expected.get(k)!r}" for k in differing)
        raise RuntimeError(
            f"{path} was written by a different pretraining job ({details}). Delete "
            f"{path.parent} to start this job from scratch, or restore the old settings to resume"
        )


def best_dir(work_dir: str | Path, step: int) -> Path:
    return Path(work_dir) / f"best-step{step}"


def prune_best_dirs(work_dir: str | Path, keep: Path | None) -> None:
    """Remove every ``best-step*`` directory except ``keep``."""
    for candidate in Path(work_dir).glob("best-step*"):
        if keep is None or candidate.resolve() != Path(keep).resolve():
            shutil.rmtree(candidate, ignore_errors=True)


def rng_state(device: torch.device) -> dict[str, Any]:
    state = {"torch": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def restore_rng_state(state: dict[str, Any], device: torch.device) -> None:
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)
