"""Every fine-tuning run of one pretrained model in one process (``finetune.runs_per_job: model``).

A Table 1 job of the demo did about 10 s of work after about 3 s of start-up (Python, torch and,
before :class:`xling.optim.EagerAdam`, ``torch._dynamo``, which torch's Adam imports on first
use); a model's runs in one process pay the start-up once. Each run writes what a job of its own
writes (``metrics.json`` and the predictions, through :func:`xling.finetune.run_finetune`), then
``done.json`` (:mod:`xling.finetune.done`): a job killed half-way reruns only the runs without one.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xling.atomic import write_json
from xling.fileio import file_stamp
from xling.finetune.done import done_digest, finished, mark_done
from xling.finetune.settings import FinetuneSettings

log = logging.getLogger(__name__)


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
    the digests of their ``done.json``, :func:`xling.finetune.done.done_digest`) last.

    A run is a mapping: ``task``, ``hp`` (the grid point), ``settings`` (the task's config
    section), ``seed``, ``source``, ``train`` (a path), ``dev`` and ``test`` (language -> path),
    ``out_dir``, ``work_dir``, ``pair``, ``variant``. The tokenizer is loaded once for all runs.
    """
    from xling.finetune import TaskData, run_finetune
    from xling.model import load_encoder_tokenizer

    tokenizer = load_encoder_tokenizer(model_dir)
    results = []
    for run in runs:
        out_dir = Path(run["out_dir"])
        fingerprint = run_fingerprint(run, model_dir)
        metrics = finished(out_dir, fingerprint)
        if metrics is None:
            started = time.perf_counter()
            settings = FinetuneSettings.from_config(
                run["task"], run["settings"], seed=run["seed"], source_lang=run["source"]
            )
            data = TaskData(
                train=Path(run["train"]),
                dev={lang: Path(path) for lang, path in run["dev"].items()},
                test={lang: Path(path) for lang, path in run["test"].items()},
            )
            metrics = run_finetune(
                run["task"],
                model_dir,
                data,
                run["hp"],
                out_dir,
                run["work_dir"],
                settings,
                threads=threads,
                pair=run["pair"],
                variant=run["variant"],
                tokenizer=tokenizer,
                on_done=functools.partial(mark_done, out_dir, fingerprint),
            )
            log.info("%s done in %.1f s", out_dir, time.perf_counter() - started)
        else:
            log.info("%s: done before, kept", out_dir)
        results.append(metrics)
    write_json(
        job_file,
        {
            "metrics": [str(Path(run["out_dir"]) / "metrics.json") for run in runs],
            "done": [done_digest(run["out_dir"]) for run in runs],
        },
    )
    return results
