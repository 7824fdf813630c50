"""The step loop of a pretraining job: train, log, evaluate and select, checkpoint.

No host synchronisation inside a step: selected positions arrive as index tensors prepared on the
host, losses accumulate on the device, and values are read once per logging interval.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from xling.model import MLMEncoder, save_pretrained
from xling.pretrain import checkpoint as ckpt
from xling.pretrain.data import MASK_ID, StreamBatch, prefetch, step_rng, step_seed
from xling.pretrain.distributed import Runtime
from xling.pretrain.evaluation import evaluate
from xling.pretrain.inputs import PretrainInputs
from xling.pretrain.masking import mask_tokens
from xling.pretrain.objective import MaskedLMObjective
from xling.pretrain.progress import LossInterval, progress_line
from xling.pretrain.settings import PretrainSettings
from xling.signals import stop_signals_handled

if TYPE_CHECKING:  # engine imports this module
    from xling.pretrain.engine import PretrainJob

_MASKING = 1  # the masking stream of data.step_rng


def train_steps(job: PretrainJob, step_callback: Callable[[int], None] | None = None) -> None:
    """Run ``job`` from its current step to ``settings.total_steps``."""
    s, device = job.settings, job.runtime.device
    if job.step >= s.total_steps:
        return
    objective = _objective(job.model, job.runtime, compile_layers=s.compile_layers)
    job.model.train()
    index = {lang: i for i, lang in enumerate(job.languages)}
    interval = job.interval
    interval.restart_clock()
    tokens_per_step = s.batch_size * s.seq_len * job.runtime.world_size
    batches = job.sampler.iterate(job.step + 1, s.total_steps, job.consumed)
    prepare = functools.partial(_prepare, settings=s, runtime=job.runtime, inputs=job.inputs)
    batches = prefetch(batches, prepare) if device.type == "cuda" else map(prepare, batches)
    session_start = last_checkpoint = time.monotonic()
    elapsed_before = job.elapsed
    with _StopSignals() as stop:
        for batch, tensors in batches:
            input_ids, selected, targets = (t.to(device, non_blocking=True) for t in tensors)
            torch.manual_seed(step_seed(s.seed, batch.step, job.runtime.rank))  # dropout
            with job.autocast():
                loss = objective(input_ids, batch.lang, selected, targets)
            job.scaler.scale(loss).backward()
            job.scaler.unscale_(job.optimizer)
            if s.clip_grad_norm > 0:
                torch.nn.utils.clip_grad_norm_(job.model.parameters(), s.clip_grad_norm)
            job.scaler.step(job.optimizer)
            job.scaler.update()
            job.optimizer.zero_grad(set_to_none=True)
            job.schedule.step()
            interval.add(index[batch.lang], loss.detach())
            job.step, job.consumed = batch.step, batch.consumed
            job.tokens += tokens_per_step
            job.elapsed = elapsed_before + (time.monotonic() - session_start)
            if job.step == 1 or job.step % s.log_interval == 0 or job.step == s.total_steps:
                _log_progress(job, interval)
            pause_start = time.monotonic()
            if job.step % s.eval_interval == 0 or job.step == s.total_steps:
                evaluate_and_select(job)
            due = bool(s.checkpoint_steps) and job.step % s.checkpoint_steps == 0
            due = due or time.monotonic() - last_checkpoint >= 60 * s.checkpoint_minutes
            stopping = _stop_agreed(stop, job.runtime, job.step, every=s.log_interval)
            if due or job.step == s.total_steps or stopping:
                job.save_checkpoint()
                last_checkpoint = time.monotonic()
            interval.paused += time.monotonic() - pause_start
            if stopping:
                cause = f"signal {stop.signal}" if stop.signal else "another process's signal"
                raise SystemExit(
                    f"stopped by {cause} after checkpointing step {job.step}; "
                    "rerun the same job to resume"
                )
            if step_callback is not None:
                step_callback(job.step)


def _stop_agreed(stop: _StopSignals, runtime: Runtime, step: int, *, every: int) -> bool:
    """Whether every process stops after ``step``.

    One process stops after the step in which its signal came. Processes of a distributed job
    stop together, at a step they all check (every ``every`` steps), if any of them got one: the
    signal reaches each at another point of its step, and a process that stopped alone would
    leave the others waiting in their next all-reduce, with process 0, which writes the
    checkpoint, possibly among them.
    """
    if not runtime.distributed:
        return stop.signal is not None
    if step % every:
        return False
    flag = torch.tensor([int(stop.signal is not None)], dtype=torch.int32, device=runtime.device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())


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
        # The other language's own parts get no gradient in a step.
        find_unused_parameters=model.num_parameters(language_specific=True) > 0,
    )


def _prepare(
    batch: StreamBatch, *, settings: PretrainSettings, runtime: Runtime, inputs: PretrainInputs
) -> tuple[StreamBatch, list[torch.Tensor]]:
    """Mask a batch on the host (from the step's own RNG) and, on GPU, pin it for async copy."""
    rng = step_rng(settings.seed, _MASKING, batch.step, runtime.rank)
    masked = mask_tokens(
        batch.tokens,
        rng,
        inputs.replacement_ids(batch.lang),
        mask_prob=settings.mask_prob,
        mask_token_rate=settings.mask_token_rate,
        random_token_rate=settings.random_token_rate,
        mask_id=MASK_ID,
    )
    tensors = [torch.from_numpy(a) for a in (masked.input_ids, masked.selected, masked.targets)]
    if runtime.device.type == "cuda":
        tensors = [t.pin_memory() for t in tensors]
    return batch, tensors


def _log_progress(job: PretrainJob, interval: LossInterval) -> None:
    s = job.settings
    sums = interval.loss_sums.tolist()  # the one host sync of a logging interval
    seconds = max(time.monotonic() - interval.start - interval.paused, 1e-9)
    steps = sum(interval.steps)
    losses = {
        lang: sums[i] / n
        for i, (lang, n) in enumerate(zip(job.languages, interval.steps, strict=True))
        if n
    }
    lr = job.schedule.get_last_lr()[0]
    for lang, loss in losses.items():
        job.curve.record(
            job.step,
            lang,
            tokens=job.tokens,
            train_loss=loss,
            lr=lr,
            elapsed_s=round(job.elapsed, 3),
        )
    if job.first_train_loss is None:
        job.first_train_loss = sum(sums) / steps
    job.last_train_loss = sum(sums) / steps
    per_step = seconds / steps
    job.log(
        progress_line(
            step=job.step,
            total=s.total_steps,
            lang_losses=losses,
            lr=lr,
            tokens_per_second=steps * s.batch_size * s.seq_len * job.runtime.world_size / seconds,
            elapsed=job.elapsed,
            seconds_left=(s.total_steps - job.step) * per_step,
            mfu=job.flops_per_step / per_step / job.peak_flops if job.peak_flops else None,
        )
    )
    interval.reset()


def evaluate_and_select(job: PretrainJob) -> None:
    """Score every language on dev; keep the model if the selection language improved."""
    if not job.runtime.is_main:
        return
    scores = {
        lang: evaluate(job.model, job.dev[lang], lang, job.runtime.device, job.autocast)
        for lang in job.languages
    }
    lr = job.schedule.get_last_lr()[0]
    for lang, score in scores.items():
        job.curve.record(
            job.step,
            lang,
            tokens=job.tokens,
            dev_loss=score.loss,
            dev_ppl=score.perplexity,
            dev_acc=score.accuracy,
            lr=lr,
            elapsed_s=round(job.elapsed, 3),
        )
    chosen = scores[job.selection_language]
    improved = job.best is None or _finite(chosen.loss) < _finite(job.best["dev_loss"])
    if improved:
        save_pretrained(job.model, ckpt.best_dir(job.work_dir, job.step))
        job.best = {"step": job.step, "dev_loss": chosen.loss}
    details = ", ".join(
        f"{lang} ppl {score.perplexity:.2f} acc {score.accuracy:.3f} (unigram ppl "
        f"{job.baselines[lang].perplexity:.2f} acc {job.baselines[lang].accuracy:.3f})"
        for lang, score in scores.items()
    )
    mark = " (new)" if improved else ""
    job.log(f"eval step {job.step}: {details}; best step {job.best['step']}{mark}")


def _finite(loss: float) -> float:
    """A diverged (NaN) score never wins model selection, and any finite score beats it."""
    return loss if math.isfinite(loss) else math.inf


class _StopSignals:
    """SIGTERM / SIGUSR1 (SLURM's warning before preemption): checkpoint after the step, exit."""

    def __init__(self):
        self.signal: int | None = None
        self._scope = stop_signals_handled(self._handle)

    def _handle(self, signum, frame) -> None:
        self.signal = signum

    def __enter__(self):
        self._scope.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._scope.__exit__(*exc)
