"""The record a finished fine-tuning run leaves last in its directory, ``done.json``: its
fingerprint (what it was run with) and its metrics. A job that runs several runs in one process
checks it first, so that a job killed half-way reruns only the runs without one, or whose
fingerprint changed.
"""

from __future__ import annotations

import json
from pathlib import Path

from xling.acquire.download import digests
from xling.atomic import write_json

DONE = "done.json"


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
