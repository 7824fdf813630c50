"""Wu, Conneau et al. (2020), Figures 5 and 8: the transfer of :mod:`xling.analysis.transfer` at
every layer i = 0..L of one source model, in one process, as one table.

A killed sweep resumes: each finished layer's metrics stay in the work directory (with the settings
and the stamps of the inputs they were computed from) until the table is written. The work directory
is locked, so a second sweep of the same table fails at once instead of sharing it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from xling.base.atomic import atomic_open, write_json
from xling.base.fileio import StrPath, file_stamp
from xling.contracts.items import TEST_ITEMS, ItemCounts, items_string, read_test_items
from xling.finetune.settings import FinetuneSettings
from xling.jobs.lifecycle import JobLifecycle
from xling.model.auto import model_stamp
from xling.model.config import EncoderConfig

# Which inputs and settings the layers in the work directory were computed for.
SETTINGS_STAMP = "settings.json"


@dataclass(frozen=True)
class TransferSweepJob:
    """The transfer at every layer of ``source_model``, written as one table to ``out_csv``.

    ``source_files`` are the source language's ``train``, ``dev`` and ``test`` files; the target
    is ``target_test`` in ``target_lang``, encoded by ``target_model``. ``evaluations`` maps a name
    to whether the target's states are mapped (``maps[layer]`` of the ``mappings`` file, target ->
    source). ``settings`` is config ``analysis.contextual_transfer`` plus ``task_settings`` (the
    task's ``tasks.<task>`` section) and ``seed``; the task layers train with its ``epochs``,
    ``batch_size`` and ``lr``. ``work_dir`` keeps the finished layers until the table is written.
    """

    task: str
    source_model: StrPath
    source_files: Mapping[str, StrPath]
    target_model: StrPath
    target_lang: str
    target_test: StrPath
    mappings: StrPath
    evaluations: Mapping[str, bool]
    settings: Mapping
    out_csv: StrPath
    work_dir: StrPath


def transfer_sweep(job: TransferSweepJob, *, threads: int = 1) -> list[dict]:
    """Train and evaluate at every layer; write rows ``layer, evaluation, lang, mapped, score,
    test_items`` (the per-sentence counts behind the score: ``xling.contracts.items.items_string``).
    The source's own test score is the row ``source``.
    """
    work_dir = Path(job.work_dir)
    # the inputs too: a sweep killed, then rerun on a retrained model or new mappings, must not
    # keep the layers it had finished on the old ones
    inputs = {"source_model": job.source_model, "target_model": job.target_model}
    stamps = {name: model_stamp(path) for name, path in inputs.items()}
    files = {**job.source_files, "target_test": job.target_test, "mappings": job.mappings}
    stamps |= {name: file_stamp(path) for name, path in sorted(files.items())}
    key = {"task": job.task, "settings": dict(job.settings)}
    key |= {"evaluations": dict(job.evaluations), "inputs": stamps}
    sweep = f"contextual transfer sweep ({job.task})"
    with JobLifecycle(work_dir, sweep, record=None) as life:
        _reset_if_stale(life, key)
        rows = _sweep(job, threads)
        with atomic_open(job.out_csv) as out:
            pd.DataFrame(rows).to_csv(out, index=False)
        # The stamp goes first: a kill inside the clean-up then leaves layers that a rerun
        # discards, never a stamp vouching for layers that lost their files.
        life.clean_up(first=[work_dir / SETTINGS_STAMP])
    return rows


def _sweep(job: TransferSweepJob, threads: int) -> list[dict]:
    from xling.analysis.transfer import LayerTransferJob, TransferEvaluation, run_layer_transfer
    from xling.finetune.data import TaskData

    settings, work_dir = job.settings, Path(job.work_dir)
    finetune = FinetuneSettings.from_config(
        job.task, {**settings["task_settings"], "epochs": settings["epochs"]}, seed=settings["seed"]
    )
    hp = {"batch_size": settings["batch_size"], "lr": settings["lr"]}
    data = TaskData(
        train=Path(job.source_files["train"]),
        dev={"en": Path(job.source_files["dev"])},
        test={"en": Path(job.source_files["test"])},
    )
    with np.load(job.mappings) as stored:
        maps = stored["maps"]
    depth = EncoderConfig.load(Path(job.source_model) / "config.json").layers
    rows = []
    for layer in range(depth + 1):
        layer_dir = work_dir / f"L{layer}"
        done = layer_dir / "metrics.json"
        if done.exists():
            metrics = json.loads(done.read_text())
        else:
            target = (job.target_model, job.target_lang, job.target_test)
            evaluations = {
                name: TransferEvaluation(*target, maps[layer] if mapped else None)
                for name, mapped in job.evaluations.items()
            }
            layer_job = LayerTransferJob(
                job.task, job.source_model, layer, data, layer_dir, layer_dir / "state", finetune,
                evaluations=evaluations, hp=hp, task_layers=settings["task_layers"],
            )  # fmt: skip
            metrics = run_layer_transfer(layer_job, threads=threads)
        # per test sentence, the counts behind each score (the claims check resamples them)
        items = read_test_items(layer_dir / TEST_ITEMS)
        rows.append(_row(layer, "source", "en", False, metrics["test"]["en"], items["en"]))
        for name, result in metrics["evaluations"].items():
            rows.append(
                _row(layer, name, result["lang"], result["mapped"], result["test"], items[name])
            )
    return rows


def _row(
    layer: int, evaluation: str, lang: str, mapped: bool, score: float, items: ItemCounts
) -> dict:
    return {"layer": layer, "evaluation": evaluation, "lang": lang, "mapped": mapped} | {
        "score": score,
        "test_items": items_string(items),
    }


def _reset_if_stale(life: JobLifecycle, key: dict) -> None:
    """Results of other settings or inputs are never reused: the work directory starts afresh,
    as it does when ``settings.json`` is missing (a kill inside an earlier reset may have left
    layers without it)."""
    stamp = life.work_dir / SETTINGS_STAMP
    if not stamp.exists() or json.loads(stamp.read_text()) != json.loads(json.dumps(key)):
        life.clear()
        write_json(stamp, key)
