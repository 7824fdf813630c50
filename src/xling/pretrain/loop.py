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

import xling.pretrain.checkpoint as ckpt
from xling.jobs.signals import stop_signals_handled
from xling.model import MLMEncoder, save_pretrained
from xling.pretrain.data import MASK_ID, StreamBatch, prefetch, step_rng, step_seed
from xling.pretrain.distributed import Runtime
from xling.pretrain.evaluation import evaluate
from xling.pretrain.inputs import PretrainInputs
from xling.pretrain.masking import mask_tokens
from xling.pretrain.objective import MaskedLMObjective
from xling.pretrain.progress import LossInterval, progress_line
from xling.pretrain.settings import PretrainSettings

if TYPE_CHECKING:
    from xling.pretrain.trainer import Trainer

_MASKING = 1  # the masking stream of data.step_rng


def train_steps(trainer: Trainer, step_callback: Callable[[int], None] | None = None) -> None:
    """Run ``trainer`` from its current step to ``settings.total_steps``."""
    s, runtime, device = trainer.settings, trainer.runtime, trainer.runtime.device
    if trainer.step >= s.total_steps:
        return
    objective = _objective(trainer.model, runtime, compile_layers=s.compile_layers)
    trainer.model.train()
    index = {lang: i for i, lang in enumerate(trainer.languages)}
    interval = trainer.interval
    interval.restart_clock()
    tokens_per_step = s.batch_size * s.seq_len * runtime.world_size
    batches = trainer.sampler.iterate(trainer.step + 1, s.total_steps, trainer.consumed)
    prepare = functools.partial(_prepare, settings=s, runtime=runtime, inputs=trainer.inputs)
    batches = prefetch(batches, prepare) if device.type == "cuda" else map(prepare, batches)
    session_start = last_checkpoint = time.monotonic()
    elapsed_before = trainer.elapsed
    with _StopSignals() as stop:
        for batch, tensors in batches:
            input_ids, selected, targets = (t.to(device, non_blocking=True) for t in tensors)
            torch.manual_seed(step_seed(s.seed, batch.step, runtime.rank))  # dropout
            with trainer.autocast():
                loss = objective(input_ids, batch.lang, selected, targets)
            _update(trainer, loss)
            interval.add(index[batch.lang], loss.detach())
            step = trainer.step = batch.step
            trainer.consumed = batch.consumed
            trainer.tokens += tokens_per_step
            trainer.elapsed = elapsed_before + (time.monotonic() - session_start)
            if step == 1 or step % s.log_interval == 0 or step == s.total_steps:
                _log_progress(trainer, interval)
            pause_start = time.monotonic()
            if step % s.eval_interval == 0 or step == s.total_steps:
                evaluate_and_select(trainer)
            due = bool(s.checkpoint_steps) and step % s.checkpoint_steps == 0
            due = due or time.monotonic() - last_checkpoint >= 60 * s.checkpoint_minutes
            stopping = _stop_agreed(stop, runtime, step, every=s.log_interval)
            if due or step == s.total_steps or stopping:
                trainer.save_checkpoint()
                last_checkpoint = time.monotonic()
            interval.paused += time.monotonic() - pause_start
            if stopping:
                cause = f"signal {stop.signal}" if stop.signal else "another process's signal"
                raise SystemExit(
                    f"stopped by {cause} after checkpointing step {step}; "
                    "rerun the same job to resume"
                )
            if step_callback is not None:
                step_callback(step)


def _update(trainer: Trainer, loss: torch.Tensor) -> None:
    """Backward, clip, one optimizer and schedule step (through the fp16 loss scaler if on)."""
    trainer.scaler.scale(loss).backward()
    trainer.scaler.unscale_(trainer.optimizer)
    if trainer.settings.clip_grad_norm > 0:
        torch.nn.utils.clip_grad_norm_(trainer.model.parameters(), trainer.settings.clip_grad_norm)
    trainer.scaler.step(trainer.optimizer)
    trainer.scaler.update()
    trainer.optimizer.zero_grad(set_to_none=True)
    trainer.schedule.step()


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
    replacements = inputs.replacement_ids(batch.lang)
    masked = mask_tokens(batch.tokens, rng, replacements, mask_id=MASK_ID, **settings.masking())
    tensors = [torch.from_numpy(a) for a in (masked.input_ids, masked.selected, masked.targets)]
    if runtime.device.type == "cuda":
        tensors = [t.pin_memory() for t in tensors]
    return batch, tensors


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
            tokens_per_second=steps
            * s.batch_size
            * s.seq_len
            * trainer.runtime.world_size
            / seconds,
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
