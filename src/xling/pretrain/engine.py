"""One pretraining job: set up, resume, train, and write the outputs.

Outputs (``docs/contracts.md`` section 4): the selected model directory, ``curve.csv`` and
``summary.json``. The model directory is written last and atomically; the resumable state lives in
``work_dir``, which is never a declared output. Rerunning the same job with the same ``work_dir``
continues from the last checkpoint and ends with the same weights as an uninterrupted run (bit for
bit on CPU, whose kernels are deterministic for a fixed thread count; on GPU with
``deterministic=True``). A rerun may change ``threads``: see ``PretrainSettings.resume_key``.

One trainer per work directory: process 0 holds an exclusive lock on it for the whole run
(:mod:`xling.worklock`), so a rerun started while a killed workflow's trainer still runs stops at
once instead of training a second copy into the same checkpoints.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch

from xling import finished, joblog
from xling.atomic import write_json
from xling.fileio import file_stamp
from xling.model import MLMEncoder, load_pretrained, save_pretrained
from xling.model.config import has_language_specific_parts
from xling.pretrain import checkpoint as ckpt
from xling.pretrain.data import NUM_SPECIAL, StreamSampler
from xling.pretrain.distributed import Runtime, barrier, broadcast_from_main, init_runtime, shutdown
from xling.pretrain.evaluation import dev_batches, unigram_baseline, unigram_counts
from xling.pretrain.flops import peak_flops, training_flops_per_step
from xling.pretrain.inputs import read_inputs
from xling.pretrain.loop import train_steps
from xling.pretrain.objective import autocast_for, resolve_precision
from xling.pretrain.optim import build_optimizer
from xling.pretrain.progress import Curve, LossInterval, Reporter, plot_curve
from xling.pretrain.settings import PretrainSettings
from xling.pretrain.summary import build_summary
from xling.vocab.tokenizer import UNK_ID
from xling.worklock import WorkDirBusyError, WorkDirLock


def pretrain(
    data_dir: str | Path,
    languages: Sequence[str],
    out_model_dir: str | Path,
    work_dir: str | Path,
    curve_csv: str | Path,
    summary_json: str | Path,
    settings: PretrainSettings,
    *,
    language_token_ids: Mapping[str, Sequence[int]] | None = None,
    tokenizer_dir: str | Path | None = None,
    log_file: str | Path | None = None,
    device: str | None = None,
    keep_work_dir: bool = False,
    figure: str | Path | None = None,
    figure_title: str = "",
    step_callback: Callable[[int], None] | None = None,
) -> dict:
    """Pretrain one masked LM on the streams of ``data_dir`` and write the selected model.

    ``data_dir`` is a vocab stage directory (``{lang}.{train,valid}.npy`` and ``tokenizer/``);
    ``languages`` are the model's languages (one for a monolingual model). ``language_token_ids``
    (the ids each language can produce) matters only with separate embeddings; see
    :func:`xling.pretrain.inputs.read_inputs` for where it comes from otherwise. Progress lines go
    to stdout and, if given, to ``log_file``. ``figure``: the curve drawn as png (titled
    ``figure_title``). Once every output is written, the checkpoints in ``work_dir`` make way for
    hard links to the outputs (:mod:`xling.finished`; all of it stays with ``keep_work_dir``): a
    failure before (a signal, the figure) leaves the checkpoints, so a rerun only writes the
    outputs, and a rerun after the outputs were deleted puts them back without training.
    ``step_callback(step)`` runs after every step (monitoring, tests).
    Under ``torchrun`` every process calls this function; process 0 evaluates and writes. Returns
    the summary (an empty dict on the other processes).
    """
    runtime = init_runtime(device)
    # Thread count and determinism are process-wide: give the caller its own back at the end.
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    lock = None
    try:
        lock = _lock_work_dir(work_dir, runtime)
        job = PretrainJob(
            data_dir,
            languages,
            work_dir,
            settings,
            runtime,
            log_file=log_file,
            language_token_ids=language_token_ids,
            tokenizer_dir=tokenizer_dir,
        )
        outputs = {"model": out_model_dir, "curve": curve_csv, "summary": summary_json}
        if figure is not None:
            outputs["figure"] = figure
        key = _finished_key(job, data_dir, figure_title if figure is not None else None)
        restored = runtime.is_main and finished.restore(work_dir, outputs, key, job.log)
        if broadcast_from_main(runtime, restored):
            return json.loads(Path(summary_json).read_text()) if runtime.is_main else {}
        train_steps(job, step_callback)
        summary = job.finish(out_model_dir, curve_csv, summary_json)
        if figure is not None and runtime.is_main:
            plot_curve(curve_csv, figure, title=figure_title or None)
        barrier(runtime)
        if lock is not None and not keep_work_dir:
            # Links to the outputs replace the checkpoints (xling.finished): a rerun that
            # Snakemake starts after deleting them puts them back instead of training again.
            finished.keep(work_dir, outputs, key)
            # Checkpoints first: a kill inside the clean-up must not leave one that names a best
            # model whose files are already gone.
            for checkpoint in ckpt.checkpoint_files(work_dir):
                checkpoint.unlink(missing_ok=True)
            lock.clear(keep=(finished.FOLDER,))
        return summary
    finally:
        if lock is not None:
            lock.release()
        torch.set_num_threads(threads)
        if torch.are_deterministic_algorithms_enabled() != deterministic:
            torch.use_deterministic_algorithms(deterministic)
        shutdown(runtime)


def _finished_key(job: PretrainJob, data_dir: str | Path, figure_title: str | None) -> dict | None:
    """What kept outputs must match to be put back (:mod:`xling.finished`; process 0 keeps and
    restores them, the other processes get None). The job key names the data by its sizes (a
    checkpoint must resume in a moved project); outputs come back only for the very files they
    were trained on."""
    if not job.runtime.is_main:
        return None
    data_files = sorted(path for path in Path(data_dir).rglob("*") if path.is_file())
    return {
        "job": job.job_key(),
        "data": {str(path.relative_to(data_dir)): file_stamp(path) for path in data_files},
        "code": finished.source_digest(),
        "figure_title": figure_title,
    }


def pretrain_in_folder(
    folder: str | Path,
    data_dir: str | Path,
    languages: Sequence[str],
    settings: PretrainSettings,
    **options,
) -> dict:
    """:func:`pretrain` with its outputs in one folder, as a study's pretraining job lays them out:
    ``model/``, ``.work/``, ``curve.csv`` and ``summary.json``. ``options``: :func:`pretrain`'s
    keyword arguments."""
    folder = Path(folder)
    outputs = (folder / "model", folder / ".work", folder / "curve.csv", folder / "summary.json")
    return pretrain(data_dir, languages, *outputs, settings, **options)


def _lock_work_dir(work_dir: str | Path, runtime: Runtime) -> WorkDirLock | None:
    """Process 0 locks ``work_dir``; every process of the job stops if it cannot.

    Only process 0 locks, because it alone writes the work directory (checkpoints, best models):
    its lock is what keeps two jobs apart. The other processes of the same job would contend for
    that same lock (on one node they exclude each other), and on other nodes ``flock`` over a
    network file system is only as good as that file system. They learn process 0's outcome
    instead, so that the whole job stops at once rather than waiting in its first collective.
    """
    lock, failure, refusal = None, None, None
    if runtime.is_main:
        lock = WorkDirLock(work_dir, "pretraining")
        try:
            lock.acquire()
        except Exception as error:
            failure, refusal = error, str(error)
    refusal = broadcast_from_main(runtime, refusal)
    if failure is not None:
        raise failure
    if refusal is not None:
        raise WorkDirBusyError(f"process 0 could not lock the work directory: {refusal}")
    return lock


class PretrainJob:
    """Everything one job holds: data, model, optimizer, and the state a checkpoint saves."""

    def __init__(
        self,
        data_dir: str | Path,
        languages: Sequence[str],
        work_dir: str | Path,
        settings: PretrainSettings,
        runtime: Runtime,
        *,
        log_file: str | Path | None = None,
        language_token_ids: Mapping[str, Sequence[int]] | None = None,
        tokenizer_dir: str | Path | None = None,
    ):
        s = self.settings = settings
        self.runtime, self.languages, self.work_dir = runtime, list(languages), Path(work_dir)
        self.log: Callable[[str], None] = lambda message: None
        if runtime.is_main:
            # The rule's log holds this attempt only: the earlier ones' lines come first.
            joblog.replay_earlier_attempts(self.work_dir)
            history = joblog.history_path(self.work_dir)
            self.log = Reporter(log_file, history=history)
        if s.threads:
            torch.set_num_threads(s.threads)
        if s.deterministic and runtime.device.type == "cuda":
            # Only GPU kernels need it; on CPU the call would import torch's compiler (seconds).
            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
            torch.use_deterministic_algorithms(True)
        self.selection_language = _selection_language(s.selection_language, self.languages)
        self.precision = resolve_precision(s.precision, runtime.device)
        self.autocast = autocast_for(self.precision, runtime.device)
        self.inputs = read_inputs(
            data_dir,
            self.languages,
            seq_len=s.seq_len,
            alpha=s.sampling_alpha,
            # Wu et al. 4.3, of the models with a separate part: "we only sample random words
            # within one language"; the others draw them from the whole vocabulary (section 3.1).
            language_specific=has_language_specific_parts(s.architecture),
            language_token_ids=language_token_ids,
            tokenizer_dir=tokenizer_dir,
            log=self.log,
        )
        self.model = self._build_model()
        self.optimizer, self.schedule = build_optimizer(
            self.model,
            lr=s.lr,
            betas=s.adam_betas,
            eps=s.adam_eps,
            weight_decay=s.weight_decay,
            warmup_steps=s.warmup_steps,
            warmup_init_lr=s.warmup_init_lr,
        )
        self.scaler = torch.amp.GradScaler(runtime.device.type, enabled=self.precision == "fp16")
        self.sampler = StreamSampler(
            self.inputs.train,
            self.inputs.probabilities,
            seq_len=s.seq_len,
            batch_size=s.batch_size,
            seed=s.seed,
            world_size=runtime.world_size,
            rank=runtime.rank,
        )
        # The state a checkpoint saves, besides model, optimizer, schedule and scaler.
        self.step, self.tokens, self.elapsed = 0, 0, 0.0
        self.consumed: dict[str, int] = {}
        self.curve = Curve()
        self.interval = LossInterval(len(self.languages), runtime.device)
        self.best: dict | None = None  # {"step", "dev_loss"} of the selected model so far
        self.first_train_loss: float | None = None
        self.last_train_loss: float | None = None
        # The last checkpoint written or resumed from, and its best model: both are kept with the
        # next checkpoint, as the fallback should that one be unreadable.
        self.checkpoint_file: Path | None = None
        self.checkpointed_best: Path | None = None
        self._resume()
        self._prepare_evaluation()
        self.flops_per_step = training_flops_per_step(
            self.model.config, s.batch_size, s.seq_len, s.mask_prob * s.seq_len
        )
        self.peak_flops = None
        if runtime.device.type == "cuda":
            self.peak_flops = peak_flops(torch.cuda.get_device_name(runtime.device), self.precision)
        self._describe()

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

        The number of processes is part of it: each process draws ``batch_size`` windows, so a
        rerun on other GPUs would go on with another global batch under the same schedule.
        """
        return {
            **self.settings.resume_key(),
            "world_size": self.runtime.world_size,
            "languages": self.languages,
            "vocab_size": self.inputs.vocab_size,
            "data": self.inputs.fingerprint(),
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
        ckpt.check_same_job(state, self.job_key(), path)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.schedule.load_state_dict(state["scheduler"])
        if state["scaler"] is not None:
            self.scaler.load_state_dict(state["scaler"])
        ckpt.restore_rng_state(state["rng"], self.runtime.device)
        self.step, self.tokens, self.elapsed = state["step"], state["tokens"], state["elapsed_s"]
        self.consumed = dict(state["consumed"])
        self.curve = Curve(state["curve"])
        self.interval.load_state_dict(state["interval"])
        self.best = state["best"]
        self.first_train_loss = state["first_train_loss"]
        self.last_train_loss = state["last_train_loss"]
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
            self.dev[lang] = dev_batches(
                self._own_tokens(self.inputs.valid[lang], lang),
                lang,
                seq_len=s.seq_len,
                max_tokens=s.dev_tokens,
                batch_size=s.eval_batch_size,
                eval_seed=s.eval_seed,
                replacement_ids=self.inputs.replacement_ids(lang),
                mask_prob=s.mask_prob,
                mask_token_rate=s.mask_token_rate,
                random_token_rate=s.random_token_rate,
            )
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
            f"{self.runtime.device}, {self.precision}; batch {s.batch_size} x {s.seq_len} per "
            f"process; {s.total_steps:,} steps; sampling {sampling}"
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
            "rng": ckpt.rng_state(self.runtime.device),
            "consumed": self.consumed,
            "tokens": self.tokens,
            "elapsed_s": self.elapsed,
            "curve": self.curve.to_list(),
            "interval": self.interval.state_dict(),
            "best": self.best,
            "first_train_loss": self.first_train_loss,
            "last_train_loss": self.last_train_loss,
        }
        path = ckpt.save_checkpoint(self.work_dir, state, previous=self.checkpoint_file)
        ckpt.prune_best_dirs(self.work_dir, keep=(self.checkpointed_best, self.best_dir()))
        self.checkpoint_file, self.checkpointed_best = path, self.best_dir()
        self.log(f"checkpoint step {self.step} -> {path}")

    def finish(self, out_model_dir, curve_csv, summary_json) -> dict:
        """Write curve, summary and, last, the selected model (process 0)."""
        if not self.runtime.is_main:
            return {}
        best_model = load_pretrained(self.best_dir())
        summary = build_summary(self, best_model)
        self.curve.write_csv(curve_csv)
        write_json(summary_json, summary)
        save_pretrained(best_model, out_model_dir, tokenizer_dir=self.inputs.tokenizer_dir)
        self.log(
            f"done: selected step {summary['best_step']} ({self.selection_language} dev ppl "
            f"{summary['best_dev_ppl']:.2f}, masked-token accuracy {summary['dev_acc']:.3f} vs "
            f"unigram {summary['unigram_acc']:.3f}) -> {out_model_dir}"
        )
        return summary


def _selection_language(requested: str, languages: list[str]) -> str:
    if requested in languages:
        return requested
    if len(languages) == 1:
        return languages[0]  # a monolingual model is selected on its own language
    raise ValueError(
        f"selection_language {requested!r} is not one of the model's languages {languages}; set "
        "the pretraining setting selection_language to one of them"
    )
