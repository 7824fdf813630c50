"""A pretraining job in progress: data, model, optimizer and the state a checkpoint saves.

The trainer resumes from the newest readable checkpoint in the work directory
(:mod:`xling.pretrain.checkpoint`) and saves its state there; the step loop
(:mod:`xling.pretrain.loop`) moves it on. Under ``torchrun`` every process holds one; process 0
alone chooses the checkpoint, writes the work directory, evaluates and logs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

import xling.pretrain.checkpoint as ckpt
from xling.jobs.checkpoint import restore_rng_state, rng_state
from xling.model import MLMEncoder
from xling.model.config import has_language_specific_parts
from xling.model.precision import capability_name, device_capability, native_precision
from xling.pretrain.batching import plan_batches
from xling.pretrain.data import NUM_SPECIAL, StreamSampler
from xling.pretrain.distributed import Runtime, broadcast_from_main, gather_from_all
from xling.pretrain.evaluation import dev_batches, unigram_baseline, unigram_counts
from xling.pretrain.flops import peak_flops, training_flops_per_step
from xling.pretrain.inputs import read_inputs
from xling.pretrain.job import PretrainJob
from xling.pretrain.objective import autocast_for, resolve_precision
from xling.pretrain.optim import build_optimizer
from xling.pretrain.progress import AttemptLog, Curve, LossInterval
from xling.pretrain.settings import PretrainSettings
from xling.vocab.tokenizer import UNK_ID


class Trainer:
    """Everything one job holds: data, model, optimizer, and the state a checkpoint saves."""

    def __init__(
        self,
        job: PretrainJob,
        runtime: Runtime,
        log: Callable[[str], None],
        started: float | None = None,
    ):
        """Read the job's data, build its model and optimizer, resume from its work directory
        and prepare its evaluation; ``log`` takes the progress lines (process 0's, else none).
        ``started``: when this attempt's process started (seconds since the epoch; None: now),
        which its resume time counts from (:class:`xling.pretrain.progress.AttemptLog`)."""
        s = self.settings = job.settings
        self.runtime, self.log = runtime, log
        self.started = time.time() if started is None else started
        self.languages, self.work_dir = list(job.languages), Path(job.work_dir)
        _configure_torch(s, runtime)
        self.selection_language = _selection_language(s.selection_language, self.languages)
        self.plan = plan_batches(s.world_size, s.batch_size, runtime.world_size)
        self.hardware = _hardware(s.precision, runtime, log)
        self.precision, self.gpu = self.hardware.precision, self.hardware.gpu
        self.autocast = autocast_for(self.precision, runtime.device)
        self.inputs = read_inputs(
            job.data_dir,
            self.languages,
            seq_len=s.seq_len,
            alpha=s.sampling_alpha,
            # Wu et al. 4.3, of the models with a separate part: "we only sample random words
            # within one language"; the others draw them from the whole vocabulary (section 3.1).
            language_specific=has_language_specific_parts(s.architecture),
            language_token_ids=job.language_token_ids,
            tokenizer_dir=job.tokenizer_dir,
            log=log,
        )
        self.model = self._build_model()
        self.optimizer, self.schedule = build_optimizer(self.model, **s.optimizer_options())
        self.scaler = torch.amp.GradScaler(runtime.device.type, enabled=self.precision == "fp16")
        self.sampler = StreamSampler(
            self.inputs.train,
            self.inputs.probabilities,
            seq_len=s.seq_len,
            seed=s.seed,
            plan=self.plan,
            rank=runtime.rank,
        )
        self._start_state()
        self._resume()
        self._prepare_evaluation()
        self.flops_per_step = training_flops_per_step(
            self.model.config, self.plan.per_process, s.seq_len, s.mask_prob * s.seq_len
        )
        self.peak_flops = None
        if runtime.device.type == "cuda":
            self.peak_flops = peak_flops(torch.cuda.get_device_name(runtime.device), self.precision)
        self._describe()

    def _start_state(self) -> None:
        """Step 0 of the state a checkpoint saves besides model, optimizer, schedule and scaler."""
        self.step, self.tokens, self.elapsed = 0, 0, 0.0
        self.consumed: dict[str, int] = {}
        self.curve = Curve()
        self.interval = LossInterval(len(self.languages), self.runtime.device)
        self.best: dict | None = None  # {"step", "dev_loss"} of the selected model so far
        self.first_train_loss: float | None = None
        self.last_train_loss: float | None = None
        # The last checkpoint written or resumed from, and its best model: both are kept with the
        # next checkpoint, as the fallback should that one be unreadable.
        self.checkpoint_file: Path | None = None
        self.checkpointed_best: Path | None = None
        self.attempts = AttemptLog(self.started)

    # ------------------------------------------------------------------ setup
    def _build_model(self) -> MLMEncoder:
        torch.manual_seed(self.settings.seed)
        config = self.settings.encoder_config(self.inputs.vocab_size, self.languages)
        model = MLMEncoder(config)
        if config.sep_embeddings:
            specials = np.arange(NUM_SPECIAL)  # </s> and <unk> are targets in every language
            for lang, ids in self.inputs.language_ids.items():
                model.set_language_vocabulary(lang, np.union1d(specials, ids))
        return model.to(self.runtime.device)

    def job_key(self) -> dict:
        """What a checkpoint must match to be resumed by this job.

        The global batch is part of it (``PretrainSettings.resume_key``), not the number of
        processes: a rerun on other GPUs splits the same global batch otherwise
        (:mod:`xling.pretrain.batching`). The precision trained in and the GPUs' compute
        capability are, since they change the arithmetic; not the GPUs' names, which differ
        between models of one capability (:func:`xling.pretrain.checkpoint.check_same_job`).
        """
        return {
            **self.settings.resume_key(),
            "languages": self.languages,
            "vocab_size": self.inputs.vocab_size,
            "data": self.inputs.fingerprint(),
            "precision": self.precision,
            "compute_capability": self.hardware.compute_capability,
        }

    def best_dir(self) -> Path | None:
        return ckpt.best_dir(self.work_dir, self.best["step"]) if self.best else None

    def _resume(self) -> None:
        # Process 0 picks the checkpoint and the others load the same file: were one of them to
        # fall back alone (a read error of its own), the processes would resume at other steps.
        loaded = ckpt.load_checkpoint(self.work_dir, self.log) if self.runtime.is_main else None
        chosen = broadcast_from_main(self.runtime, loaded and str(loaded[1]))
        if not self.runtime.is_main and chosen is not None:
            loaded = ckpt.read_checkpoint(Path(chosen)), Path(chosen)
        if loaded is None:
            if self.runtime.is_main:
                ckpt.prune_best_dirs(self.work_dir, keep=())  # orphans of a run killed early
            return
        state, path = loaded
        ckpt.check_same_job(state, self.job_key(), path, gpu=self.gpu)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.schedule.load_state_dict(state["scheduler"])
        if state["scaler"] is not None:
            self.scaler.load_state_dict(state["scaler"])
        restore_rng_state(state["rng"], self.runtime.device)
        self.step, self.tokens, self.elapsed = state["step"], state["tokens"], state["elapsed_s"]
        self.consumed = dict(state["consumed"])
        self.curve = Curve(state["curve"])
        self.interval.load_state_dict(state["interval"])
        self.best = state["best"]
        self.first_train_loss = state["first_train_loss"]
        self.last_train_loss = state["last_train_loss"]
        self.attempts = AttemptLog(self.started, _earlier_attempts(state, path), self.step)
        if self.best is not None and not self.best_dir().exists():
            raise RuntimeError(
                f"{path} names the best model {self.best_dir()}, which is gone; delete "
                f"{self.work_dir} to restart this job"
            )
        if self.runtime.is_main:
            ckpt.remove_best_dirs_after(self.work_dir, self.step)
        self.checkpoint_file, self.checkpointed_best = path, self.best_dir()
        self.log(f"resumed from {path} at step {self.step} ({self.tokens:,} tokens)")

    def _prepare_evaluation(self) -> None:
        """Fixed dev batches and unigram baselines (process 0 only: it alone evaluates)."""
        self.dev, self.baselines = {}, {}
        if not self.runtime.is_main:
            return
        s = self.settings
        for lang in self.languages:
            own = self._own_tokens(self.inputs.valid[lang], lang)
            self.dev[lang] = dev_batches(own, lang, self.inputs.replacement_ids(lang), s)
            counts = unigram_counts(self.inputs.train[lang], self.inputs.vocab_size)
            self.baselines[lang] = unigram_baseline(counts, self.dev[lang])

    def _own_tokens(self, ids: np.ndarray, lang: str) -> np.ndarray:
        """``ids`` with the tokens a language-specific softmax cannot score read as ``<unk>``.

        A dev text may hold a character that only the other language's training text had (the
        vocabulary's union gives it that language's id); its logit is masked, so one such target
        made the dev loss infinite at every evaluation and froze model selection at the first.
        """
        if not self.model.config.sep_embeddings:
            return ids
        foreign = ~self.model.vocab_mask(lang).cpu().numpy()[ids]
        if not foreign.any():
            return ids
        self.log(
            f"{lang} dev: {int(foreign.sum())} tokens outside {lang}'s vocabulary read as <unk>"
        )
        return np.where(foreign, UNK_ID, ids).astype(ids.dtype)

    def _describe(self) -> None:
        s, model = self.settings, self.model
        sampling = ", ".join(
            f"{lang} {self.inputs.sentences[lang]:,} sentences p={p:.3f}"
            for lang, p in self.inputs.probabilities.items()
        )
        self.log(
            f"pretraining {'-'.join(self.languages)}: {model.num_parameters():,} parameters "
            f"({model.num_parameters(language_specific=True):,} language-specific), vocabulary "
            f"{self.inputs.vocab_size:,}, {self.runtime.world_size} process(es) on "
            f"{self.gpu or self.runtime.device}, {self.precision}; "
            f"{self.plan.describe(s.micro_batch)}, of {s.seq_len} tokens; {s.total_steps:,} "
            f"steps; sampling {sampling}"
        )

    # ------------------------------------------------------------------ state and outputs
    def save_checkpoint(self) -> None:
        if not self.runtime.is_main:
            return
        state = {
            "job": self.job_key(),
            "step": self.step,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.schedule.state_dict(),
            "scaler": self.scaler.state_dict() if self.scaler.is_enabled() else None,
            "rng": rng_state(self.runtime.device),
            "consumed": self.consumed,
            "tokens": self.tokens,
            "elapsed_s": self.elapsed,
            "curve": self.curve.to_list(),
            "interval": self.interval.state_dict(),
            "best": self.best,
            "first_train_loss": self.first_train_loss,
            "last_train_loss": self.last_train_loss,
            "attempts": self.attempts.records(self.step),
        }
        path = ckpt.save_checkpoint(self.work_dir, state, previous=self.checkpoint_file)
        ckpt.prune_best_dirs(self.work_dir, keep=(self.checkpointed_best, self.best_dir()))
        self.checkpoint_file, self.checkpointed_best = path, self.best_dir()
        self.log(f"checkpoint step {self.step} -> {path}")

    # ------------------------------------------------------------------ attempts
    def step_trained(self) -> None:
        """After each step: the first of this attempt ends its resume time (on a GPU once its
        kernels ran, not when they were queued)."""
        if self.attempts.resume_seconds is None:
            if self.runtime.device.type == "cuda":
                torch.cuda.synchronize(self.runtime.device)
            self.attempts.trained()

    def record_stop(self, ended: str, requested_at: float) -> None:
        """This attempt stops (``ended``: how, ``requested_at``: when it was asked to); call
        :meth:`save_checkpoint`, then :meth:`stop_recorded`."""
        self.attempts.stop(ended, requested_at)

    def stop_recorded(self) -> str:
        """Keep the stopped attempt's record with its checkpoint written (process 0) and say so;
        returns how long the stop took, for the log."""
        record = self.attempts.records(self.step)[-1]
        if self.runtime.is_main:
            ckpt.write_stop_record(self.work_dir, record)
        return f"{record['stop_seconds']:.1f} s from the stop request to the checkpoint written"

    def peak_memory_gib(self) -> list[float | None]:
        """Every process's peak of allocated GPU memory so far, GiB (None on a CPU); every process
        must call it (a collective)."""
        device, peak = self.runtime.device, None
        if device.type == "cuda":
            peak = round(torch.cuda.max_memory_allocated(device) / 2**30, 3)
        return gather_from_all(self.runtime, peak)


class StopVotes:
    """The processes of a distributed job vote on stopping without making the host wait for the
    GPU, nor a GPU for the host.

    Each process casts its reading of its :class:`xling.jobs.signals.StopRequest` after a step:
    numbers, reduced to their maximum over the processes by an asynchronous all-reduce. The vote
    is counted after the next step, when the reduction is long done: the host never waits for the
    GPU's queue to drain (as reading a device value the moment it is reduced would make it, every
    step), and the GPU has the next step queued while the host counts. Every process counts the
    same vote after the same step, so all stop at one step.
    """

    def __init__(self, device):
        self.device = device
        self._pending: tuple | None = None  # (wait for the result, its values, the caster's note)

    def cast(self, values: list[float], note=None) -> None:
        """Cast ``values`` (``note``: what the caster keeps with it, returned by :meth:`count`)."""
        flags = torch.tensor(values, dtype=torch.float64)
        if self.device.type != "cuda":
            work = dist.all_reduce(flags, op=dist.ReduceOp.MAX, async_op=True)
            self._pending = (work.wait, flags, note)
            return
        flags = flags.pin_memory().to(self.device, non_blocking=True)
        work = dist.all_reduce(flags, op=dist.ReduceOp.MAX, async_op=True)
        work.wait()  # NCCL: the device's stream waits for the reduction, not the host
        result = torch.empty(flags.shape, dtype=flags.dtype, pin_memory=True)
        result.copy_(flags, non_blocking=True)
        copied = torch.cuda.Event()
        copied.record()
        self._pending = (copied.synchronize, result, note)

    def count(self) -> tuple[list[float], object] | None:
        """The maximum over the processes of the last vote cast and its note (waiting for the
        reduction if need be); None when no vote is pending."""
        if self._pending is None:
            return None
        wait, values, note = self._pending
        self._pending = None
        wait()
        return values.tolist(), note


def _configure_torch(settings: PretrainSettings, runtime: Runtime) -> None:
    """The process-wide thread count and, on GPU, deterministic kernels, as the settings ask (the
    caller gives its own back at the end)."""
    if settings.threads:
        torch.set_num_threads(settings.threads)
    if settings.deterministic and runtime.device.type == "cuda":
        # Only GPU kernels need it; on CPU the call would import torch's compiler (seconds).
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)


def _earlier_attempts(state: dict, path: Path) -> list[dict]:
    """The attempts before this one, as the checkpoint at ``path`` keeps them, the last completed
    by its stop record if it stopped there (:func:`xling.pretrain.checkpoint.write_stop_record`)."""
    earlier = [dict(record) for record in state.get("attempts", [])]
    stopped = ckpt.read_stop_record(path.parent, state["step"])
    if earlier and stopped is not None and stopped["ended"] == earlier[-1]["ended"]:
        earlier[-1] = stopped
    return earlier


@dataclass(frozen=True)
class Hardware:
    """The precision a job trains in and its processes' GPUs, in rank order (none on CPUs): name,
    compute capability ("8.0") and memory (GiB)."""

    precision: str
    names: list[str]
    capabilities: list[tuple[int, int]]
    memory_gib: list[float]

    @property
    def gpu(self) -> str | None:
        """The GPUs' models, " + " between those of a mixed job; None on CPUs."""
        return " + ".join(sorted(set(self.names))) or None

    @property
    def compute_capability(self) -> str | None:
        """The GPUs' compute capabilities, " + " between those of a mixed job; None on CPUs."""
        return " + ".join(capability_name(c) for c in sorted(set(self.capabilities))) or None

    def summary(self) -> dict:
        """``summary.json``'s ``hardware``, without the peak memory that only the end knows."""
        return {
            "gpus": list(self.names) or None,
            "compute_capabilities": [capability_name(c) for c in self.capabilities] or None,
            "memory_gib": min(self.memory_gib) if self.memory_gib else None,
        }


def _hardware(requested: str, runtime: Runtime, log: Callable[[str], None]) -> Hardware:
    """The precision the job trains in and its GPUs, the same on every process: ``auto``
    resolves for the least capable GPU of the job."""
    device = runtime.device
    own = None
    if device.type == "cuda":
        memory = torch.cuda.get_device_properties(device).total_memory / 2**30
        own = (device_capability(device), torch.cuda.get_device_name(device), round(memory, 1))
    found = gather_from_all(runtime, own)
    if any(item is None for item in found):
        return Hardware(resolve_precision(requested, torch.device("cpu")), [], [], [])
    lowest, weakest, _ = min(found)
    precision = native_precision(lowest) if requested == "auto" else requested
    if precision == "bf16" and native_precision(lowest) != "bf16":
        log(
            f"warning: pretrain.precision is bf16, which {weakest} (compute capability "
            f"{lowest[0]}.{lowest[1]}) only emulates, far slower than fp16: set it to auto"
        )
    capabilities, names, memory = ([item[i] for item in found] for i in range(3))
    return Hardware(precision, names, capabilities, memory)


def _selection_language(requested: str, languages: list[str]) -> str:
    if requested in languages:
        return requested
    if len(languages) == 1:
        return languages[0]  # a monolingual model is selected on its own language
    raise ValueError(
        f"selection_language {requested!r} is not one of the model's languages {languages}; set "
        "the pretraining setting selection_language to one of them"
    )
