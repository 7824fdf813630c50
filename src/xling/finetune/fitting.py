"""A task model trained epoch by epoch, resumably, and its epoch selected on source dev.

Wu, Conneau et al. 2020, section 3.2: train on the source language, score its dev after every
epoch, keep the best epoch. Every experiment that trains a task head this way shares it:
fine-tuning (:mod:`xling.finetune.run`) and the task layers of the contextual transfer
(:mod:`xling.analysis.transfer`). Any ``TaskModel`` works: what trains and what is checkpointed
(:mod:`xling.finetune.checkpoint`) are its parameters that require gradients.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from xling.base.fileio import file_stamp
from xling.finetune import checkpoint
from xling.finetune.data import Encoded, TaskData
from xling.finetune.evaluation import evaluate_split
from xling.finetune.settings import FinetuneSettings
from xling.finetune.tasks import Task, TaskModel
from xling.finetune.training import (
    Learner,
    batches_per_epoch,
    epoch_order,
    group_by_length,
    make_scheduler,
    train_epoch,
)
from xling.jobs.checkpoint import restore_rng_state, rng_state
from xling.model import model_stamp
from xling.model.interface import EncoderSpec
from xling.model.optim import EagerAdam
from xling.model.random_init import BERT

log = logging.getLogger(__name__)
# An epoch's log line; the pilot's report reads its examples and seconds (xling.cluster.pilot).
EPOCH_LOG = (
    "epoch %d/%d: train loss %.4f, %s dev %s %.4f (%d train examples in %.1f s, %.0f train "
    "examples/s)"
)
WARMUP_FRACTION = 0.1  # Wu 3.2, Muller A.1.1: warm up over the first 10% of batches (not XNLI)


def head_dropout(settings: FinetuneSettings, config: EncoderSpec) -> float:
    return config.dropout if settings.head_dropout is None else settings.head_dropout


def job_fingerprint(
    task: str,
    hp: dict,
    settings: FinetuneSettings,
    spec: Task,
    config: EncoderSpec,
    model_dir: Path,
    data: TaskData | list,
    *,
    random_init: str | None = None,
    random_init_scheme: str = BERT,
) -> dict:
    """What a saved state must match to be resumed: the settings that change the weights' path
    (resolved: the head dropout taken, the tag set used) and the input files' stamps.

    Left out: ``eval_batch_size`` (scores only) and ``exclude_punct`` (in ``metric``). The
    RANDOM-INIT group and its seed (and its scheme, where not the default ``bert``), and
    ``group_by_length``, are added only when used, so the states of jobs without them stay
    resumable.

    Why so many parameters: the fingerprint names everything a run's weights depend on, and that
    comes from four owners (the job's task and grid point, the settings, the task's labels, the
    encoder and its files), each passed as it is rather than copied into one more object.
    """
    source = settings.source_lang
    fingerprint = {"task": task, "hp": hp, "seed": settings.seed, "epochs": settings.epochs}
    fingerprint |= {"epoch_size": settings.epoch_size, "max_length": settings.max_length}
    fingerprint |= {"head_dropout": head_dropout(settings, config), "labels": spec.labels}
    fingerprint |= {"source_lang": source, "metric": spec.metric}
    fingerprint |= {"parser_dims": [settings.arc_dim, settings.label_dim]}
    fingerprint |= {"model": model_stamp(model_dir)}
    if isinstance(data, list):  # the stamp of an encoding cache made from the files
        fingerprint["inputs"] = data
    else:
        fingerprint |= {"train": file_stamp(data.train), "dev": file_stamp(data.dev[source])}
    if settings.group_by_length:
        fingerprint["group_by_length"] = True
    if random_init is not None:
        fingerprint["random_init"] = {"group": random_init, "seed": settings.seed}
        if random_init_scheme != BERT:
            fingerprint["random_init"]["scheme"] = random_init_scheme
    return fingerprint


@dataclass(frozen=True)
class Fitting:
    """A task model and what its epochs need: the task, the encoded files (the training file and
    the source language's dev), the grid point ``hp`` and the settings, the device, and the work
    directory whose saved state resumes a run of the same ``fingerprint``."""

    spec: Task
    model: TaskModel
    encoded: Encoded
    hp: dict
    settings: FinetuneSettings
    device: torch.device
    work_dir: Path
    fingerprint: dict


def fit_and_select(fitting: Fitting) -> tuple[list[dict], int]:
    """:func:`fit_epochs`, then the selected epoch's weights put back into the model."""
    history, best_epoch = fit_epochs(fitting)
    checkpoint.load_epoch(fitting.work_dir, fitting.model, best_epoch)
    return history, best_epoch


def fit_epochs(fitting: Fitting) -> tuple[list[dict], int]:
    """Train all epochs (or the ones a killed run left), scoring source dev after each.

    Returns the per-epoch dev history and the best epoch (ties: the earliest), whose weights are
    in the work directory. The caller holds the work directory's lock.
    """
    spec, model, settings, hp = fitting.spec, fitting.model, fitting.settings, fitting.hp
    train, dev = fitting.encoded.train, fitting.encoded.dev[settings.source_lang]
    epochs, batch_size = settings.epochs, hp["batch_size"]
    # torch's fused Adam: one kernel for all tensors instead of a loop over them, 3-20 % of a
    # demo fine-tuning job on CPU (bench/finetune_batching.py); the same update up to rounding.
    # EagerAdam: torch's, without the second of start-up its compile guards cost
    # (xling.model.optim).
    optimizer = EagerAdam(spec.parameter_groups(model, hp), fused=True)
    grouped = settings.group_by_length
    lengths = np.array([spec.item_length(item) for item in train.items]) if grouped else None
    steps = epochs * batches_per_epoch(len(train.items), batch_size, settings.epoch_size)
    scheduler = make_scheduler(optimizer, spec.lr_schedule, steps, WARMUP_FRACTION)
    learner = Learner(spec, model, optimizer, scheduler, fitting.device)
    fitting.work_dir.mkdir(parents=True, exist_ok=True)
    history, best_epoch = _resume(fitting, learner)
    for epoch in range(len(history) + 1, epochs + 1):
        tick = time.perf_counter()
        order = epoch_order(len(train.items), epoch, settings.seed, settings.epoch_size)
        if grouped:
            order = group_by_length(order, lengths, batch_size, epoch, settings.seed)
        loss = train_epoch(learner, train.items, order, batch_size, train.lang)
        train_seconds = time.perf_counter() - tick  # the pilot's report reads it (cluster.pilot)
        score, _ = evaluate_split(spec, model, dev, settings.eval_batch_size, fitting.device)
        history.append({"epoch": epoch, "dev": {dev.lang: score}})
        if not best_epoch or score > history[best_epoch - 1]["dev"][dev.lang]:
            best_epoch = epoch
        _save_epoch(fitting, learner, history, best_epoch)
        rate = len(order) / max(train_seconds, 1e-9)
        log.info(
            EPOCH_LOG,
            *(epoch, epochs, loss, dev.lang, spec.metric, score, len(order), train_seconds, rate),
        )
    return history, best_epoch


def _save_epoch(fitting: Fitting, learner: Learner, history: list[dict], best_epoch: int) -> None:
    """The epoch's weights, then the state that resumes after it; only the last and the best
    epoch's weights stay."""
    epoch = len(history)
    checkpoint.save_epoch(fitting.work_dir, fitting.model, epoch)
    rng = rng_state(fitting.device)
    state = {"fingerprint": fitting.fingerprint, "epoch": epoch, "best_epoch": best_epoch}
    state |= {"history": history, "rng": rng["torch"]}
    state |= {"optimizer": learner.optimizer.state_dict()}
    state |= {"scheduler": learner.scheduler.state_dict()}
    if "cuda" in rng:
        state["cuda_rng"] = rng["cuda"]
    checkpoint.save_state(fitting.work_dir, state)
    checkpoint.prune(fitting.work_dir, {epoch, best_epoch})


def _resume(fitting: Fitting, learner: Learner) -> tuple[list[dict], int]:
    """Restore the state a killed run of the same job left; its history and best epoch so far."""
    work_dir = fitting.work_dir
    state = checkpoint.load_state(work_dir, fitting.fingerprint)
    if state is None:
        return [], 0
    checkpoint.load_epoch(work_dir, fitting.model, state["epoch"])
    learner.optimizer.load_state_dict(state["optimizer"])
    learner.scheduler.load_state_dict(state["scheduler"])
    rng = {"torch": state["rng"], "cuda": state.get("cuda_rng")}
    restore_rng_state(rng, fitting.device)
    log.info("resuming after epoch %d from %s", state["epoch"], work_dir)
    return state["history"], state["best_epoch"]
