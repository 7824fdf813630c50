"""The pieces of one fine-tuning run: example order, schedules, an epoch of training, evaluation."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from xling.finetune.tasks.base import Task, TaskModel
from xling.model.precision import device_capability, native_precision


def epoch_order(n_examples: int, epoch: int, seed: int, epoch_size: int | None) -> np.ndarray:
    """Indices of the training examples seen in ``epoch`` (1-based), a pure function of its inputs.

    ``epoch_size`` None: one shuffled pass over the data. Otherwise an epoch is ``epoch_size``
    examples of an endless stream of shuffled passes, as XLM's ``--epoch_size`` (the paper's
    200 XNLI epochs are XLM epochs). Being stateless, the order survives a restart.
    """
    if epoch_size is None:
        return np.random.default_rng([seed, epoch]).permutation(n_examples)
    start = (epoch - 1) * epoch_size
    positions = np.arange(start, start + epoch_size)
    passes = positions // n_examples
    order = np.empty(epoch_size, dtype=np.int64)
    for index in np.unique(passes):
        chosen = passes == index
        permutation = np.random.default_rng([seed, 1_000_000 + int(index)]).permutation(n_examples)
        order[chosen] = permutation[positions[chosen] % n_examples]
    return order


GROUP_WINDOW = 50  # batches per window of similar-length grouping (transformers' mega-batches)


def group_by_length(
    order: np.ndarray, lengths: np.ndarray, batch_size: int, epoch: int, seed: int
) -> np.ndarray:
    """``order`` rearranged so that each batch holds examples of similar length, the batches in
    random order: a pure function of its inputs, so a resumed epoch sees the same batches.

    As transformers' ``group_by_length`` (its ``LengthGroupedSampler``): windows of 50 batches of
    the shuffled order, each sorted by length and cut into batches. Random batches of 16 of the
    demo's tasks compute 36-45 % padding; these 2-3 %. Written here because importing transformers
    costs each fine-tuning job seconds of start-up.
    """
    if len(order) == 0:
        return order
    window = batch_size * GROUP_WINDOW
    batches = []
    for start in range(0, len(order), window):
        chunk = order[start : start + window]
        chunk = chunk[np.argsort(-lengths[chunk], kind="stable")]
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    # Windows hold whole batches, so only the very last batch can be short; it stays last, so
    # that train_epoch, which cuts the order every batch_size indices, sees these same batches.
    full = batches if len(batches[-1]) == batch_size else batches[:-1]
    rest = batches[len(full) :]
    shuffled = np.random.default_rng([seed, epoch, 2]).permutation(len(full))
    return np.concatenate([*(full[i] for i in shuffled), *rest])


def batches_per_epoch(n_examples: int, batch_size: int, epoch_size: int | None) -> int:
    return math.ceil((epoch_size or n_examples) / batch_size)


class WarmupLinearDecay:
    """Learning-rate factor: linear warmup over ``warmup`` steps, linear decay to 0 at ``total``.

    NER and parsing in the paper warm up over the first 10% of batches. The first step already uses
    1/warmup of the rate (no wasted step at 0). A callable class rather than
    ``transformers.get_linear_schedule_with_warmup`` so that a fine-tuning job does not import
    transformers (seconds of start-up per job) for three lines.
    """

    def __init__(self, warmup: int, total: int):
        self.warmup, self.total = warmup, total

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return (step + 1) / self.warmup
        return max(0.0, (self.total - step) / max(1, self.total - self.warmup))


def make_scheduler(
    optimizer: torch.optim.Optimizer, schedule: str, total_steps: int, warmup_fraction: float
) -> torch.optim.lr_scheduler.LRScheduler:
    if schedule == "constant":
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    if schedule == "warmup_linear":
        warmup = max(1, int(warmup_fraction * total_steps))
        return torch.optim.lr_scheduler.LambdaLR(optimizer, WarmupLinearDecay(warmup, total_steps))
    raise ValueError(f"unknown schedule {schedule!r}: expected constant or warmup_linear")


def pick_device(device: str | None = None) -> torch.device:
    """``device``; None: CUDA when present, else the CPU."""
    return torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {key: value.to(device, non_blocking=True) for key, value in batch.items()}


def autocast(device: torch.device) -> contextlib.AbstractContextManager:
    """bf16 autocast on GPUs that compute it natively (sm_80 on); full precision elsewhere: on the
    CPU (no speed-up there) and on older GPUs, which would only emulate bf16 and have no loss
    scaling here for fp16."""
    if native_precision(device_capability(device)) == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


@dataclass(frozen=True)
class Learner:
    """What a training step changes and how: a task's loss on its model, the optimizer and its
    learning-rate schedule, the device the batches go to."""

    task: Task
    model: TaskModel
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    device: torch.device


def train_epoch(
    learner: Learner,
    items: Sequence[dict[str, Any]],
    order: np.ndarray,
    batch_size: int,
    lang: str,
) -> float:
    """One epoch of updates on ``items`` in the given order; returns the mean batch loss."""
    task, model, device = learner.task, learner.model, learner.device
    model.train()
    total = torch.zeros((), device=device)
    steps = 0
    for start in range(0, len(order), batch_size):
        batch = to_device(
            task.collate([items[i] for i in order[start : start + batch_size]]), device
        )
        with autocast(device):
            loss = task.loss(model, batch, lang)
        loss.backward()
        learner.optimizer.step()
        learner.scheduler.step()
        learner.optimizer.zero_grad(set_to_none=True)
        total += loss.detach()  # summed on the device: no host sync per step
        steps += 1
    return total.item() / max(steps, 1)


def _length_sorted_batches(
    task: Task, items: Sequence[dict[str, Any]], batch_size: int
) -> Iterator[list[int]]:
    """Indices in batches of similar length, so that little padding is computed."""
    order = sorted(range(len(items)), key=lambda i: task.item_length(items[i]))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def predict(
    task: Task,
    model: TaskModel,
    items: Sequence[dict[str, Any]],
    lang: str,
    batch_size: int,
    device: torch.device,
) -> list:
    """Predictions for every item, in item order, in batches of ``batch_size``."""
    model.eval()
    predictions: list = [None] * len(items)
    with torch.inference_mode(), autocast(device):
        for indices in _length_sorted_batches(task, items, batch_size):
            batch = to_device(task.collate([items[i] for i in indices]), device)
            for index, prediction in zip(indices, task.predict(model, batch, lang), strict=True):
                predictions[index] = prediction
    model.train()
    return predictions
