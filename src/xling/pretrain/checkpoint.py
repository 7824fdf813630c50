"""Resumable training state in the job's work directory (never a declared workflow output).

``checkpoint-step{N}.pt`` holds everything a rerun needs to continue as if never stopped: weights,
Adam moments, schedule, gradient scaler, RNG states, the batch plan's position, the curve so far,
the current best model's step and the attempts so far (``summary.json``'s ``attempts``). Each is
written atomically (temporary file + rename), and the last two are kept: should the newest be
unreadable all the same (truncated by a copy or a file system fault), the rerun resumes from the
one before and loses one checkpoint interval, not the run.

The best model (by dev perplexity of the selection language) lives in ``best-step{N}/``, a model
directory written atomically when a new best appears. Each kept checkpoint's best directory is kept
with it; a newer one (written after the checkpoint a rerun resumes from, by a run that was then
killed) is removed on resume, because the resumed run will redo that part.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch

from xling.base.atomic import remove_parts, write_json
from xling.jobs.checkpoint import save
from xling.model.precision import capability_name, capability_of_name

CHECKPOINT_NAME = re.compile(r"checkpoint-step(\d+)\.pt")
# Job keys that checkpoints of earlier versions lack: those checkpoints still resume.
ADDED_JOB_KEYS = frozenset({"precision", "compute_capability"})
# What the arithmetic of a run depends on beyond its settings: a resume must run on the same.
HARDWARE_KEYS = ("precision", "compute_capability")
# The job key's GPU entry of the version before compute capabilities: the GPUs' names.
LEGACY_GPU_KEY = "gpu"
# The stop record of the attempt whose stop wrote the newest checkpoint (see write_stop_record).
STOP_RECORD_NAME = "stopped-attempt.json"
SINGLE_CHECKPOINT_NAME = "checkpoint.pt"  # the one checkpoint of earlier versions, still resumed
FORMAT_VERSION = 1


def checkpoint_path(work_dir: str | Path, step: int) -> Path:
    return Path(work_dir) / f"checkpoint-step{step}.pt"


def checkpoint_files(work_dir: str | Path) -> list[Path]:
    """The checkpoints in ``work_dir``, newest (highest step) first."""
    steps = {}
    for path in Path(work_dir).glob("checkpoint*.pt"):
        match = CHECKPOINT_NAME.fullmatch(path.name)
        if match:
            steps[path] = int(match.group(1))
    found = sorted(steps, key=steps.__getitem__, reverse=True)
    single = Path(work_dir) / SINGLE_CHECKPOINT_NAME
    return [*found, single] if single.exists() else found


def save_checkpoint(work_dir: str | Path, state: dict[str, Any], previous: Path | None) -> Path:
    """Write the checkpoint of ``state["step"]``, then delete every other one but ``previous``."""
    path = checkpoint_path(work_dir, state["step"])
    save(path, {"format": FORMAT_VERSION, **state})
    for old in checkpoint_files(work_dir):
        if old not in (path, previous):
            old.unlink(missing_ok=True)
    # Temporary files of writes that a kill interrupted (the work directory's lock holder is the
    # only writer, so none of these is being written now).
    remove_parts(work_dir, "checkpoint")
    return path


class UnreadableCheckpoint(RuntimeError):
    """A checkpoint file that torch cannot load (truncated, corrupt)."""


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The state saved in ``path``; :class:`UnreadableCheckpoint` if it cannot be loaded."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise UnreadableCheckpoint(f"checkpoint {path} cannot be read ({error})") from error
    if not isinstance(state, dict):
        raise UnreadableCheckpoint(f"checkpoint {path} holds a {type(state).__name__}, not a dict")
    if state.get("format") != FORMAT_VERSION:
        raise RuntimeError(
            f"{path} has checkpoint format {state.get('format')!r}, this code writes "
            f"{FORMAT_VERSION}; delete the work directory to restart the job"
        )
    return state


def load_checkpoint(
    work_dir: str | Path, log: Callable[[str], None]
) -> tuple[dict[str, Any], Path] | None:
    """The newest checkpoint that can be read and its path, or None when there is none.

    An unreadable checkpoint is skipped with a warning naming it; the resumed run deletes it when
    it writes its next checkpoint.
    """
    candidates = checkpoint_files(work_dir)
    for path in candidates:
        try:
            return read_checkpoint(path), path
        except UnreadableCheckpoint as error:
            log(f"warning: {error}; trying an older one")
    if candidates:
        names = ", ".join(path.name for path in candidates)
        log(
            f"warning: no checkpoint in {work_dir} can be read ({names}); starting this job "
            "afresh from step 0"
        )
    return None


def check_same_job(
    state: dict[str, Any], expected: dict[str, Any], path: Path, gpu: str | None = None
) -> None:
    """Refuse to resume a checkpoint written with other settings, data, languages, precision or
    compute capability.

    ``gpu`` names this job's GPUs as :func:`upgraded_key` reads a checkpoint of the version that
    keyed a resume on the names: one written on GPUs of the very same names resumes whatever
    their capability is known to be.
    """
    saved = upgraded_key(state["job"])
    if gpu is not None and state["job"].get(LEGACY_GPU_KEY) == gpu:
        saved["compute_capability"] = expected.get("compute_capability")
    _check_same_hardware(saved, expected, path)
    keys = (set(saved) | set(expected)) - {k for k in ADDED_JOB_KEYS if k not in saved}
    differing = sorted(k for k in keys if saved.get(k) != expected.get(k))
    if differing:
        details = "; ".join(f"{k}: {saved.get(k)!r} -> {expected.get(k)!r}" for k in differing)
        raise RuntimeError(
            f"{path} was written by a different pretraining job ({details}). Delete "
            f"{path.parent} to start this job from scratch, or restore the old settings to resume"
        )


def upgraded_key(saved: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's job key in today's terms.

    Before gradient accumulation a key held the processes (``world_size``) and the batch per
    process, whose product is the global batch; before precision by compute capability its
    ``precision`` was the setting (``auto``), not what it resolved to, and no GPU was recorded.
    Then, until the key held the compute capability, it held the GPUs' names ("NVIDIA
    A100-SXM4-40GB", " + " between the models of a mixed job), which a site may put under one
    gres type beside a sibling of the same capability (the 80GB one): the names are read as their
    capability (:func:`xling.model.precision.capability_of_name`), a name it does not know as
    ``unknown (<name>)``, which no job matches (but one on GPUs of that very name,
    :func:`check_same_job`).
    """
    key = dict(saved)
    if "global_batch" not in key and "batch_size" in key:
        key["global_batch"] = key.pop("batch_size") * key.pop("world_size", 1)
    if LEGACY_GPU_KEY in key:
        key["compute_capability"] = _capability_of_names(key.pop(LEGACY_GPU_KEY))
    elif "compute_capability" not in key:
        key.pop("precision", None)
    return key


def _capability_of_names(names: str | None) -> str | None:
    """The compute capability key of GPUs named as the earlier key named them (None: the CPU)."""
    if names is None:
        return None
    found = set()
    for name in names.split(" + "):
        capability = capability_of_name(name)
        if capability is None:
            return f"unknown ({names})"
        found.add(capability)
    return " + ".join(capability_name(capability) for capability in sorted(found))


def _check_same_hardware(saved: dict[str, Any], expected: dict[str, Any], path: Path) -> None:
    """Refuse, saying why and what to do, to resume on another precision or compute capability.

    GPUs of another compute capability run other kernels, which sum floats in another order, and
    another precision rounds otherwise, and fp16 carries a loss scale that bf16 lacks: the run
    would go on as another computation than the one it started as, and two models of a study would
    differ by where their retries landed. GPUs of one capability under other names (A100 40GB and
    80GB, V100 16GB and 32GB, which sites put under one gres type) run the same kernels.
    """
    differing = [k for k in HARDWARE_KEYS if k in saved and saved[k] != expected.get(k)]
    if not differing:
        return
    was = f"{saved['precision']} on {_hardware_words(saved.get('compute_capability'))}"
    now = f"{expected.get('precision')} on {_hardware_words(expected.get('compute_capability'))}"
    raise RuntimeError(
        f"{path} was trained in {was}; this job would continue it in {now}, another arithmetic "
        "mid-run. To resume, run it where it started: pin the GPU type of the pretraining rules "
        "in the SLURM profile (gres: gpu:<type>:<count>, or --constraint in slurm_extra) and, "
        f"if you changed pretrain.precision, set it back ({saved['precision']}; auto trains in "
        "bf16 on GPUs from A100 (compute capability 8.0) on, fp16 below). To train this model "
        f"afresh on these GPUs instead, delete {path.parent}"
    )


def _hardware_words(capability: str | None) -> str:
    if capability is None:
        return "the CPU"
    return f"GPUs of compute capability {capability}"


def write_stop_record(work_dir: str | Path, record: dict[str, Any]) -> None:
    """Keep the record of the attempt that just stopped, once its checkpoint is written.

    The checkpoint holds the attempts so far, this one's as it was when the checkpoint began:
    its stop time (request to checkpoint written) and wall time can only be known after it is
    written. The resumed attempt completes it from here (:func:`read_stop_record`).
    """
    write_json(Path(work_dir) / STOP_RECORD_NAME, record)


def read_stop_record(work_dir: str | Path, step: int) -> dict[str, Any] | None:
    """The record :func:`write_stop_record` kept for an attempt that stopped at ``step``; None if
    there is none for that step (a kill before it was written, or a resume from an older
    checkpoint)."""
    try:
        record = json.loads((Path(work_dir) / STOP_RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("last_step") == step else None


def best_dir(work_dir: str | Path, step: int) -> Path:
    return Path(work_dir) / f"best-step{step}"


def prune_best_dirs(work_dir: str | Path, keep: Iterable[Path | None]) -> None:
    """Remove every ``best-step*`` directory except those in ``keep``, and the temporary ones
    that a kill left (the lock holder calls this between writes)."""
    kept = {Path(path).resolve() for path in keep if path is not None}
    for candidate in Path(work_dir).glob("best-step*"):
        if candidate.resolve() not in kept:
            shutil.rmtree(candidate, ignore_errors=True)
    for partial in Path(work_dir).glob(".best-step*"):
        shutil.rmtree(partial, ignore_errors=True)


def remove_best_dirs_after(work_dir: str | Path, step: int) -> None:
    """Remove the best models selected after ``step`` (a resumed run selects them again)."""
    for candidate in Path(work_dir).glob("best-step*"):
        number = candidate.name.removeprefix("best-step")
        if number.isdigit() and int(number) > step:
            shutil.rmtree(candidate, ignore_errors=True)
