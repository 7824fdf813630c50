"""The step loop of a pretraining job: train, log, evaluate and select, checkpoint.

No host synchronisation inside a step: selected positions arrive as index tensors prepared on the
host, losses accumulate on the device, and values are read once per logging interval.
"""

from __future__ import annotations

import functools
import inspect
import math
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import xling.pretrain.checkpoint as ckpt
from xling.jobs.deadline import slurm_job_end, stop_time
from xling.jobs.signals import StopRequest
from xling.model import MLMEncoder, save_pretrained
from xling.pretrain.batching import block_parts
from xling.pretrain.data import MASK_ID, StreamBatch, cut_block, prefetch, step_rng, step_seed
from xling.pretrain.distributed import Runtime, barrier, broadcast_from_main
from xling.pretrain.evaluation import evaluate
from xling.pretrain.inputs import PretrainInputs
from xling.pretrain.masking import mask_tokens
from xling.pretrain.objective import MaskedLMObjective
from xling.pretrain.progress import LossInterval, progress_line
from xling.pretrain.settings import PretrainSettings
from xling.pretrain.trainer import StopVotes

if TYPE_CHECKING:
    from xling.pretrain.trainer import Trainer

_MASKING = 1  # the masking stream of data.step_rng
_OUT_OF_TIME = "out of time"  # a stop of _stop_agreed's: the job's time limit is near
_BUDGET_SPENT = "budget spent"  # an end of _stop_agreed's: max_train_minutes trained
# DDP's switch for broadcasting buffers before every forward: torch 2.13 names it anew (and its
# off still syncs them once, at the start); the name before stays for the torch the range allows.
_FORWARD_BUFFER_SYNC = (
    "forward_sync_buffers"
    if "forward_sync_buffers" in inspect.signature(DistributedDataParallel).parameters
    else "broadcast_buffers"
)


def train_steps(trainer: Trainer, step_callback: Callable[[int], None] | None = None) -> None:
    """Run ``trainer`` from its current step to ``settings.total_steps``."""
    s, runtime, device = trainer.settings, trainer.runtime, trainer.runtime.device
    if trainer.step >= s.total_steps:
        return
    stop_at = _stop_time(trainer)
    objective = _objective(trainer.model, runtime, compile_layers=s.compile_layers)
    trainer.model.train()
    index = {lang: i for i, lang in enumerate(trainer.languages)}
    interval = trainer.interval
    interval.restart_clock()
    tokens_per_step = s.global_batch * s.seq_len
    batches = trainer.sampler.iterate(trainer.step + 1, s.total_steps, trainer.consumed)
    prepare = functools.partial(_prepare, settings=s, runtime=runtime, inputs=trainer.inputs)
    batches = prefetch(batches, prepare) if device.type == "cuda" else map(prepare, batches)
    session_start = last_checkpoint = time.monotonic()
    elapsed_before = trainer.elapsed
    votes = StopVotes(device) if runtime.distributed else None
    with StopRequest(stop_at) as stop:
        for batch, prepared in batches:
            loss = _accumulate(trainer, objective, batch, prepared)
            _update(trainer)
            interval.add(index[batch.lang], loss)
            step = trainer.step = batch.step
            trainer.consumed = batch.consumed
            trainer.tokens += tokens_per_step
            trainer.elapsed = elapsed_before + (time.monotonic() - session_start)
            trainer.step_trained()
            if step == 1 or step % s.log_interval == 0 or step == s.total_steps:
                _log_progress(trainer, interval)
            pause_start = time.monotonic()
            if step % s.eval_interval == 0 or step == s.total_steps:
                evaluate_and_select(trainer)
            due = bool(s.checkpoint_steps) and step % s.checkpoint_steps == 0
            due = due or time.monotonic() - last_checkpoint >= 60 * s.checkpoint_minutes
            spent = _budget_spent(trainer)
            agreed = _stop_agreed(stop, votes, last=step == s.total_steps, spent=spent)
            cause, requested_at = agreed or (None, 0)
            if cause == _BUDGET_SPENT:
                _finish_early(trainer)
                return
            if cause == _OUT_OF_TIME:
                cause = f"{s.stop_margin_minutes:g} min before the job's time limit"
            if cause:
                trainer.record_stop(f"stopped {cause}", requested_at)
            if due or step == s.total_steps or cause:
                trainer.save_checkpoint()
                last_checkpoint = time.monotonic()
            interval.paused += time.monotonic() - pause_start
            if cause:
                stopped = f"stopped {cause} after checkpointing step {step}; rerun the same job "
                stopped += "to resume"
                trainer.log(stopped)  # into the job's history, which the retry's log shows
                trainer.log(f"stop: {trainer.stop_recorded()}")
                # No process leaves before process 0's checkpoint is on disk: torchrun (and srun
                # with --kill-on-bad-exit) kills the others when the first one exits.
                barrier(runtime)
                raise SystemExit(stopped)
            if step_callback is not None:
                step_callback(step)


def _budget_spent(trainer: Trainer) -> bool:
    """Whether process 0 has trained ``max_train_minutes`` over the attempts (the pilot's bound;
    process 0's clock decides, as for the time limit)."""
    budget = trainer.settings.max_train_minutes
    return bool(budget) and trainer.runtime.is_main and trainer.elapsed >= 60 * budget


def _finish_early(trainer: Trainer) -> None:
    """The end of a training that spent its ``max_train_minutes``: evaluated and checkpointed at
    this step as at total_steps; the job then writes its outputs."""
    if trainer.step % trainer.settings.eval_interval:
        evaluate_and_select(trainer)
    trainer.save_checkpoint()
    trainer.log(
        f"finished at step {trainer.step}: pretrain.max_train_minutes "
        f"({trainer.settings.max_train_minutes:g}) of training spent"
    )


def _stop_time(trainer: Trainer) -> float | None:
    """When the job stops on its own: ``stop_margin_minutes`` before its SLURM time limit (None
    outside SLURM). Process 0 reads the limit; every process learns it, so that all refuse
    together to start a job whose time is up already."""
    end = slurm_job_end() if trainer.runtime.is_main else None
    end = broadcast_from_main(trainer.runtime, end)
    attempt = trainer.attempts.number
    if end is not None and attempt in trainer.settings.signal_stop_attempts:
        trainer.log(
            f"attempt {attempt} does not stop itself before the job's time limit "
            f"({end.clock()}): pretrain.signal_stop_attempts leaves the stop to SLURM's signal"
        )
        return None
    margin = trainer.settings.stop_margin_minutes
    stop_at = stop_time(
        end, margin, margin_key="pretrain.stop_margin_minutes", more_time="pretrain.runtime_minutes"
    )
    if end is not None:
        trainer.log(
            f"the job's time limit ends {end.clock()} ({end.source}): it stops with a checkpoint "
            f"{margin:g} minutes before (pretrain.stop_margin_minutes)"
        )
    return stop_at if trainer.runtime.is_main else None


def _accumulate(
    trainer: Trainer, objective: nn.Module, batch: StreamBatch, prepared: _Prepared
) -> torch.Tensor:
    """Forward and backward of this process's micro-batches of a step; returns their loss.

    One micro-batch on one process is the plain step: the mean loss over its selected positions.
    Otherwise each micro-batch's mean is weighted by its share of the selected positions of the
    whole global batch times the micro-batches of the global batch (:func:`_loss_scales`), and the
    gradients are divided by this process's micro-batches once all are back (DDP averages over the
    processes): the gradient is that of the mean over the global batch, as one batch of its size
    would give, however it is split (:mod:`xling.pretrain.batching`), and each micro-batch's
    backward is of a micro-batch mean's size on any split, so that fp16 loss scaling overflows
    alike on 1 process accumulating 2 micro-batches and on 2 processes of 1. Gradients are
    synchronised once, after the last one. A block cut into parts (config ``pretrain.micro_batch``)
    draws each part's dropout from the block's number and the part's.
    """
    runtime, device, seed = trainer.runtime, trainer.runtime.device, trainer.settings.seed
    micro_batches = prepared.micro_batches
    scales, planned = None, prepared.planned
    if prepared.weighted:
        scales = _loss_scales(runtime, prepared.counts, planned)
    # a process whose share of a block selects nothing logs a loss of 0 (data.cut_block)
    local_total = float(sum(len(tensors[1]) for tensors in micro_batches)) or 1.0
    step_loss = None
    pieces = zip(prepared.parts, micro_batches, strict=True)
    for number, ((block, part), tensors) in enumerate(pieces):
        input_ids, selected, targets = (t.to(device, non_blocking=True) for t in tensors)
        last = number == len(micro_batches) - 1
        sync = nullcontext() if last or not runtime.distributed else objective.no_sync()
        with sync:
            torch.manual_seed(step_seed(seed, batch.step, block, part))  # dropout
            with trainer.autocast():
                loss = objective(input_ids, batch.lang, selected, targets)
            scaled = loss if scales is None else loss * scales[number]
            trainer.scaler.scale(scaled).backward()
        if scales is None:
            step_loss = loss.detach()
        else:  # this process's mean over its micro-batches, for the curve (process 0's)
            share = loss.detach() * (len(tensors[1]) / local_total)
            step_loss = share if step_loss is None else step_loss + share
    if scales is not None and planned > 1:  # the fp16 scaler's inf check sees inf / planned alike
        grads = [p.grad for p in trainer.model.parameters() if p.grad is not None]
        torch._foreach_div_(grads, planned)
    return step_loss


def _loss_scales(runtime: Runtime, counts: torch.Tensor, pieces: int) -> torch.Tensor:
    """Per micro-batch of this process: its selected positions over those of the global batch,
    times the micro-batches of the global batch (processes x ``pieces``, each process's): about 1
    each. The global count is summed on the device, an all-reduce of one number, so that no step
    waits for the host."""
    counts = counts.to(runtime.device, non_blocking=True)
    total = counts.sum()
    if runtime.distributed:
        dist.all_reduce(total)
    return runtime.world_size * pieces * counts / total


def _update(trainer: Trainer) -> None:
    """Clip, one optimizer and schedule step (through the fp16 loss scaler if on)."""
    trainer.scaler.unscale_(trainer.optimizer)
    if trainer.settings.clip_grad_norm > 0:
        torch.nn.utils.clip_grad_norm_(trainer.model.parameters(), trainer.settings.clip_grad_norm)
    trainer.scaler.step(trainer.optimizer)
    trainer.scaler.update()
    trainer.optimizer.zero_grad(set_to_none=True)
    trainer.schedule.step()


def _stop_agreed(
    stop: StopRequest, votes: StopVotes | None, *, last: bool, spent: bool = False
) -> tuple[str, float] | None:
    """Why every process stops after this step, and when that was first asked (seconds since the
    epoch); None: they go on. The cause: ``by signal N``, ``by another process's signal`` or
    ``_OUT_OF_TIME`` (the time limit is near), or ``_BUDGET_SPENT`` (``spent``: process 0 has
    trained ``max_train_minutes``; the training ends there).

    One process stops after the step in which its signal came or its time ran out. Processes of
    a distributed job stop together, at the same step, if any of them got a signal or process 0's
    time is up (it alone watches the clock): the signal reaches each at another point of its
    step, and a process that stopped alone would leave the others waiting in their next
    all-reduce, with process 0, which writes the checkpoint, possibly among them. They vote after
    every step and count the vote after the next (``votes``, :class:`StopVotes`: no step waits
    for it), so they stop one step after the one that one process would stop after; no vote is
    cast after the last step or a stop, so that none is left in flight when they leave.
    """
    # One reading of the request per vote: a signal that comes after it waits for the next vote,
    # which every process then counts alike; the signal a vote reports is the one it was cast with.
    signal, late, signal_time, spent_here = stop.signal, stop.out_of_time, stop.signal_time, spent
    if votes is None:
        own_signal, out_of_time, earliest = signal, late, signal_time
        signalled = signal is not None
    else:
        # The vote cast after the previous step (none before the first of an attempt).
        counted = votes.count() or ([0.0, 0.0, -math.inf, 0.0], None)
        (signalled, out_of_time, latest, spent), own_signal = counted
        earliest = -latest  # the first signal of any process
        if not (signalled or out_of_time or spent or last):
            reading = [float(signal is not None), float(late), -(signal_time or math.inf)]
            votes.cast([*reading, float(spent_here)], note=signal)
    if not (signalled or out_of_time):
        return (_BUDGET_SPENT, time.time()) if spent else None
    asked = [t for t, on in ((earliest, signalled), (stop.stop_at, out_of_time)) if on and t]
    requested_at = min(asked, default=time.time())
    if own_signal is not None:
        return f"by signal {own_signal}", requested_at
    if out_of_time:
        return _OUT_OF_TIME, requested_at
    return "by another process's signal", requested_at


def _objective(model: MLMEncoder, runtime: Runtime, *, compile_layers: bool) -> nn.Module:
    """The loss module the loop calls: the masked-LM objective, wrapped in DDP under torchrun."""
    objective = MaskedLMObjective(model)
    if compile_layers:
        separate = [layer for layers in model.language_layers.values() for layer in layers]
        for layer in [*model.shared_layers, *separate]:  # each Transformer layer, not a list
            layer.compile()
    if not runtime.distributed:
        return objective
    cuda = runtime.device.type == "cuda"
    return DistributedDataParallel(
        objective,
        device_ids=[runtime.device.index] if cuda else None,
        # A step trains one language on every process: the other language's own embeddings or
        # layers get no gradient then, and DDP must look for them after every backward. Language
        # embeddings need no search: one language's row is read out of the one weight, which
        # gets a gradient (zero in the other row) in every step.
        find_unused_parameters=not model.config.fully_shared,
        # The model's only buffers are the vocabulary masks of the language-specific softmax,
        # set before training, equal on every process (the same vocabulary) and never changed:
        # the default broadcast of process 0's buffers before every forward (each micro-batch
        # too) would be a collective per forward for nothing.
        **{_FORWARD_BUFFER_SYNC: False},
    )


@dataclass
class _Prepared:
    """A step's micro-batches of this process, each (input ids, selected, targets), and their
    counts of selected positions; ``weighted``: whether the step weighs their losses by those
    (several micro-batches or processes, :func:`_accumulate`); ``parts``: the (block, part) each
    micro-batch is, part 0 for a block trained whole (config ``pretrain.micro_batch`` unset);
    ``planned``: the micro-batches the blocks make, a part that selects nothing included (the
    same on every process)."""

    micro_batches: list[list[torch.Tensor]]
    counts: torch.Tensor
    weighted: bool
    parts: list[tuple[int, int]]
    planned: int


def _prepare(
    batch: StreamBatch, *, settings: PretrainSettings, runtime: Runtime, inputs: PretrainInputs
) -> tuple[StreamBatch, _Prepared]:
    """Mask each block on the host (from its own RNG: the step and its number), cut it into
    parts of at most ``settings.micro_batch`` streams (after masking, so that the masks do not
    depend on the cut), keep this process's share of a block that several train between them
    (:mod:`xling.pretrain.batching`) and, on GPU, pin them for async copy."""
    replacements = inputs.replacement_ids(batch.lang)
    micro_batches, parts, planned = [], [], 0
    for block, tokens in batch.micro_batches():
        planned += block_parts(len(tokens) // batch.share[1], settings.micro_batch)
        rng = step_rng(settings.seed, _MASKING, batch.step, block)
        masked = mask_tokens(tokens, rng, replacements, mask_id=MASK_ID, **settings.masking())
        arrays = (masked.input_ids, masked.selected, masked.targets)
        for part, pieces in cut_block(arrays, settings.micro_batch, batch.share):
            micro_batches.append([torch.from_numpy(a) for a in pieces])
            parts.append((block, part))
    counts = torch.tensor([float(len(tensors[1])) for tensors in micro_batches])
    if runtime.device.type == "cuda":
        micro_batches = [[t.pin_memory() for t in tensors] for tensors in micro_batches]
        counts = counts.pin_memory()
    weighted = len(micro_batches) > 1 or runtime.distributed
    return batch, _Prepared(micro_batches, counts, weighted, parts, planned)


def _log_progress(trainer: Trainer, interval: LossInterval) -> None:
    s = trainer.settings
    sums = interval.loss_sums.tolist()  # the one host sync of a logging interval
    seconds = max(time.monotonic() - interval.start - interval.paused, 1e-9)
    steps = sum(interval.steps)
    losses = {
        lang: sums[i] / n
        for i, (lang, n) in enumerate(zip(trainer.languages, interval.steps, strict=True))
        if n
    }
    for lang, loss in losses.items():
        _record(trainer, lang, train_loss=loss)
    trainer.attempts.add_interval(steps, seconds)
    if trainer.first_train_loss is None:
        trainer.first_train_loss = sum(sums) / steps
    trainer.last_train_loss = sum(sums) / steps
    per_step, peak = seconds / steps, trainer.peak_flops
    trainer.log(
        progress_line(
            step=trainer.step,
            total=s.total_steps,
            lang_losses=losses,
            lr=trainer.schedule.get_last_lr()[0],
            tokens_per_second=steps * s.global_batch * s.seq_len / seconds,
            elapsed=trainer.elapsed,
            seconds_left=(s.total_steps - trainer.step) * per_step,
            mfu=trainer.flops_per_step / per_step / peak if peak else None,
        )
    )
    interval.reset()


def _record(trainer: Trainer, lang: str, **values: float) -> None:
    """``values`` into the curve's row of the current step and ``lang``, with the step's tokens,
    learning rate and time."""
    lr = trainer.schedule.get_last_lr()[0]
    elapsed = round(trainer.elapsed, 3)
    trainer.curve.record(
        trainer.step, lang, tokens=trainer.tokens, **values, lr=lr, elapsed_s=elapsed
    )


def evaluate_and_select(trainer: Trainer) -> None:
    """Score every language on dev; keep the model if the selection language improved."""
    if not trainer.runtime.is_main:
        return
    model, device = trainer.model, trainer.runtime.device
    scores = {
        lang: evaluate(model, trainer.dev[lang], lang, device, trainer.autocast)
        for lang in trainer.languages
    }
    for lang, score in scores.items():
        dev = {"dev_loss": score.loss, "dev_ppl": score.perplexity, "dev_acc": score.accuracy}
        _record(trainer, lang, **dev)
    chosen = scores[trainer.selection_language]
    improved = trainer.best is None or _finite(chosen.loss) < _finite(trainer.best["dev_loss"])
    if improved:
        save_pretrained(trainer.model, ckpt.best_dir(trainer.work_dir, trainer.step))
        trainer.best = {"step": trainer.step, "dev_loss": chosen.loss}
    details = ", ".join(
        f"{lang} ppl {score.perplexity:.2f} acc {score.accuracy:.3f} (unigram ppl "
        f"{trainer.baselines[lang].perplexity:.2f} acc {trainer.baselines[lang].accuracy:.3f})"
        for lang, score in scores.items()
    )
    mark = " (new)" if improved else ""
    trainer.log(f"eval step {trainer.step}: {details}; best step {trainer.best['step']}{mark}")


def _finite(loss: float) -> float:
    """A diverged (NaN) score never wins model selection, and any finite score beats it."""
    return loss if math.isfinite(loss) else math.inf
