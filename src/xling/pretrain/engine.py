"""One pretraining job: set up, resume, train, and write the outputs.

Outputs (``docs/contracts.md`` section 4): the selected model directory, ``curve.csv`` and
``summary.json``. The model directory is written last and atomically; the resumable state lives in
``work_dir``, which is never a declared output. Rerunning the same job with the same ``work_dir``
continues from the last checkpoint and ends with the same weights as an uninterrupted run (bit for
bit on CPU, whose kernels are deterministic for a fixed thread count; on GPU with
``deterministic=True``). A rerun may change ``threads``: see ``PretrainSettings.resume_key``.

The work directory's life (the lock, the history over attempts, restoring and keeping a finished
job's outputs, the clean-up) is :mod:`xling.jobs.lifecycle`'s. One trainer per work directory:
process 0 holds an exclusive lock on it for the whole run, so a rerun started while a killed
workflow's trainer still runs stops at once instead of training a second copy into the same
checkpoints.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

import xling.pretrain.checkpoint as ckpt
from xling.base import digest
from xling.base.atomic import write_json
from xling.base.fileio import StrPath, file_stamp
from xling.jobs import joblog
from xling.jobs.lifecycle import JobLifecycle
from xling.model import load_pretrained, save_pretrained
from xling.pretrain.distributed import barrier, broadcast_from_main, init_runtime, shutdown
from xling.pretrain.job import PretrainJob
from xling.pretrain.loop import train_steps
from xling.pretrain.progress import Reporter, plot_curve
from xling.pretrain.settings import PretrainSettings
from xling.pretrain.summary import build_summary
from xling.pretrain.trainer import Trainer


def pretrain(
    job: PretrainJob,
    *,
    device: str | None = None,
    keep_work_dir: bool = False,
    step_callback: Callable[[int], None] | None = None,
    started: float | None = None,
) -> dict:
    """Pretrain one masked LM (:class:`PretrainJob`) and write the selected model.

    Once every output is written, the checkpoints in the work directory make way for hard links
    to the outputs (:mod:`xling.jobs.finished`; all of it stays with ``keep_work_dir``): a failure
    before (a signal, the figure) leaves the checkpoints, so a rerun only writes the outputs, and a
    rerun after the outputs were deleted puts them back without training. ``device`` None picks
    the GPU of this process if there is one. ``step_callback(step)`` runs after every step
    (monitoring, tests). ``started``: when the process of this attempt started (seconds since the
    epoch; None: now), which the summary's resume times count from. Under ``torchrun`` every
    process calls this function; process 0 evaluates and writes. Returns the summary (an empty
    dict on the other processes).
    """
    runtime = init_runtime(device)
    # Thread count and determinism are process-wide: give the caller its own back at the end.
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    log: Callable[[str], None] = _silent
    if runtime.is_main:  # progress lines also go to the job's history (xling.jobs.joblog)
        log = Reporter(job.log_file, history=joblog.history_path(job.work_dir))
    life = JobLifecycle(
        job.work_dir, "pretraining", log=log, record=None,
        owner=runtime.is_main, agree=functools.partial(broadcast_from_main, runtime),
    )  # fmt: skip
    try:
        with life:
            trainer = Trainer(job, runtime, log, started)
            if life.restore(job.outputs(), _finished_key(trainer, job)):
                return json.loads(Path(job.summary_json).read_text()) if runtime.is_main else {}
            train_steps(trainer, step_callback)
            summary = _write_outputs(trainer, job, trainer.peak_memory_gib())
            barrier(runtime)
            if not keep_work_dir:
                # Checkpoints first: a kill inside the clean-up must not leave one that names a
                # best model whose files are already gone.
                life.clean_up(first=ckpt.checkpoint_files(job.work_dir))
            return summary
    finally:
        torch.set_num_threads(threads)
        if torch.are_deterministic_algorithms_enabled() != deterministic:
            torch.use_deterministic_algorithms(deterministic)
        shutdown(runtime)


def pretrain_in_folder(
    folder: StrPath,
    data_dir: StrPath,
    languages: Sequence[str],
    settings: PretrainSettings,
    *,
    device: str | None = None,
    keep_work_dir: bool = False,
    step_callback: Callable[[int], None] | None = None,
    **job_fields,
) -> dict:
    """:func:`pretrain` with its outputs in one folder, as a study's pretraining job lays them out
    (:meth:`PretrainJob.in_folder`). ``job_fields``: the job's other fields (``log_file``,
    ``figure``...)."""
    job = PretrainJob.in_folder(folder, data_dir, languages, settings, **job_fields)
    return pretrain(job, device=device, keep_work_dir=keep_work_dir, step_callback=step_callback)


def _silent(message: str) -> None:
    """The log of the processes other than process 0: it alone reports."""


def _finished_key(trainer: Trainer, job: PretrainJob) -> dict | None:
    """What kept outputs must match to be put back (:mod:`xling.jobs.finished`; process 0 keeps and
    restores them, the other processes get None). The job key names the data by its sizes (a
    checkpoint must resume in a moved project); outputs come back only for the very files they
    were trained on. Not the GPUs: finished outputs come back on any, and the precision as the
    config asks for it (a rerun on other GPUs must not train days again for the same outputs)."""
    if not trainer.runtime.is_main:
        return None
    data_dir = Path(job.data_dir)
    data_files = sorted(path for path in data_dir.rglob("*") if path.is_file())
    key = {k: v for k, v in trainer.job_key().items() if k not in ckpt.HARDWARE_KEYS}
    return {
        "job": {**key, "precision": trainer.settings.precision},
        "data": {str(path.relative_to(data_dir)): file_stamp(path) for path in data_files},
        "code": digest.source_digest(),
        "figure_title": job.figure_title if job.figure is not None else None,
    }


def _write_outputs(trainer: Trainer, job: PretrainJob, peak_memory_gib: list) -> dict:
    """Write curve, summary, the selected model (last of the contract's outputs) and the figure
    (process 0); returns the summary (an empty dict on the other processes)."""
    if not trainer.runtime.is_main:
        return {}
    best_model = load_pretrained(trainer.best_dir())
    summary = build_summary(trainer, best_model, peak_memory_gib)
    trainer.curve.write_csv(job.curve_csv)
    write_json(job.summary_json, summary)
    save_pretrained(best_model, job.out_model_dir, tokenizer_dir=trainer.inputs.tokenizer_dir)
    trainer.log(
        f"done: selected step {summary['best_step']} ({trainer.selection_language} dev ppl "
        f"{summary['best_dev_ppl']:.2f}, masked-token accuracy {summary['dev_acc']:.3f} vs "
        f"unigram {summary['unigram_acc']:.3f}) -> {job.out_model_dir}"
    )
    if job.figure is not None:
        plot_curve(job.curve_csv, job.figure, title=job.figure_title or None)
    return summary
