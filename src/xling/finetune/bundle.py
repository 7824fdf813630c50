"""Several fine-tuning runs of one pretrained model in one process, one after the other: every
run of the model (``finetune.runs_per_job: model``, the demo's), or N grid points of one task
(``finetune.runs_per_job: N``, runs too small to fill a GPU sharing one job on a cluster).

A Table 1 job of the demo did about 10 s of work after about 3 s of start-up (Python, torch and,
before :class:`xling.model.optim.EagerAdam`, ``torch._dynamo``, which torch's Adam imports on first
use); runs in one process pay the start-up once. Each run writes what a job of its own
writes (``metrics.json`` and the predictions, through :func:`xling.finetune.run_finetune`), then
``done.json`` (:mod:`xling.jobs.done`): a job killed half-way reruns only the runs without one,
and resumes the one it was in after its last epoch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xling.base.fileio import file_stamp
from xling.finetune.settings import FinetuneSettings
from xling.jobs.done import run_once, write_job_file

if TYPE_CHECKING:
    from xling.finetune.run import FinetuneJob


def run_fingerprint(run: Mapping[str, Any], model_dir: str | Path) -> dict:
    """What a finished run must have been run with to be kept: task, grid point, settings, seed,
    the model's weights and the input files' stamps."""
    from xling.model import model_stamp

    files = {"train": run["train"], **{f"dev_{k}": v for k, v in run["dev"].items()}}
    files |= {f"test_{lang}": path for lang, path in run["test"].items()}
    return {
        "task": run["task"],
        "hp": dict(run["hp"]),
        "settings": dict(run["settings"]),
        "seed": run["seed"],
        "model": model_stamp(model_dir),
        "files": {key: file_stamp(path) for key, path in sorted(files.items())},
    }


def run_model_job(
    model_dir: str | Path,
    runs: Sequence[Mapping[str, Any]],
    job_file: str | Path,
    *,
    threads: int = 1,
) -> list[dict]:
    """Run ``runs`` in order on ``model_dir``; write ``job_file`` (the runs' metrics files and
    the digests of their ``done.json``, :func:`xling.jobs.done.done_digest`) last.

    A run is a mapping: ``task``, ``hp`` (the grid point), ``settings`` (the task's config
    section), ``seed``, ``source``, ``train`` (a path), ``dev`` and ``test`` (language -> path),
    ``out_dir``, ``work_dir``, ``pair``, ``variant``. The tokenizer is loaded once for all runs.
    """
    from xling import finetune
    from xling.model import load_encoder_tokenizer

    tokenizer = load_encoder_tokenizer(model_dir)
    results = []
    for run in runs:

        def train(on_done, run=run):
            job = _finetune_job(run, model_dir)
            return finetune.run_finetune(job, threads=threads, tokenizer=tokenizer, on_done=on_done)

        results.append(run_once(Path(run["out_dir"]), run_fingerprint(run, model_dir), train))
    metrics = [str(Path(run["out_dir"]) / "metrics.json") for run in runs]
    write_job_file(job_file, {"metrics": metrics}, [run["out_dir"] for run in runs])
    return results


def _finetune_job(run: Mapping[str, Any], model_dir: str | Path) -> FinetuneJob:
    """The :class:`xling.finetune.run.FinetuneJob` of one run."""
    from xling.finetune.run import FinetuneJob, TaskData

    settings = FinetuneSettings.from_config(
        run["task"], run["settings"], seed=run["seed"], source_lang=run["source"]
    )
    data = TaskData(
        train=Path(run["train"]),
        dev={lang: Path(path) for lang, path in run["dev"].items()},
        test={lang: Path(path) for lang, path in run["test"].items()},
    )
    return FinetuneJob(
        run["task"],
        model_dir,
        data,
        run["hp"],
        run["out_dir"],
        run["work_dir"],
        settings,
        pair=run["pair"],
        variant=run["variant"],
    )
