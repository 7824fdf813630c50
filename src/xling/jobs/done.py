"""The record a finished fine-tuning run leaves last in its directory, ``done.json``: its
fingerprint (what it was run with) and its metrics. A job that runs several runs in one process
(:mod:`xling.finetune.bundle`, :mod:`xling.muller.runner`) checks it first, so that a job killed
half-way reruns only the runs without one, or whose fingerprint changed; its job file, written
last, lists the runs and the digests of their records.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from xling.base.atomic import write_json
from xling.base.digest import digests

DONE = "done.json"
log = logging.getLogger(__name__)


def finished(run_dir: str | Path, fingerprint: dict) -> dict | None:
    """The metrics of a run already done in ``run_dir`` with this fingerprint, else None.

    A ``done.json`` of another fingerprint is deleted: the run is about to be redone, and if that
    is killed after it rewrote some outputs, a return to the old settings must not take the mix
    of old record and new outputs for the old run.
    """
    done = Path(run_dir) / DONE
    if not done.exists():
        return None
    record = json.loads(done.read_text(encoding="utf-8"))
    if record.get("fingerprint") == fingerprint:
        return record["metrics"]
    done.unlink()
    return None


def mark_done(run_dir: str | Path, fingerprint: dict, metrics: dict) -> None:
    """Write ``run_dir/done.json``; call it after every other output of the run."""
    write_json(Path(run_dir) / DONE, {"fingerprint": fingerprint, "metrics": metrics})


def done_digest(run_dir: str | Path) -> str:
    """sha256 of ``run_dir/done.json``, for the job file that lists a job's runs.

    Why a job file carries it: Snakemake (9.18 on) reruns a consumer of a file whose mtime is
    newer only if its content changed, and a list of run paths stays the same when the runs are
    redone (new pretrained model, new settings). Without the digests, a workflow killed between a
    fine-tuning job and its consumer would, on resuming, keep the consumer's stale output.
    """
    return digests(Path(run_dir) / DONE)["sha256"]


def run_once(
    run_dir: str | Path, fingerprint: dict, run: Callable[[Callable[[dict], None]], dict]
) -> dict:
    """The metrics of the run in ``run_dir``: its record's, when it was done with this
    fingerprint, else those of ``run(on_done)``, which calls ``on_done(metrics)`` once every other
    output is written (that writes the record)."""
    metrics = finished(run_dir, fingerprint)
    if metrics is not None:
        log.info("%s: done before, kept", run_dir)
        return metrics
    started = time.perf_counter()
    metrics = run(functools.partial(mark_done, run_dir, fingerprint))
    log.info("%s done in %.1f s", run_dir, time.perf_counter() - started)
    return metrics


def write_job_file(
    job_file: str | os.PathLike, listed: Mapping[str, list], run_dirs: Sequence[str | Path]
) -> None:
    """The job's declared output, last: ``listed`` and the digests of its runs' records
    (``"done"``, :func:`done_digest`)."""
    write_json(job_file, {**listed, "done": [done_digest(run_dir) for run_dir in run_dirs]})
