"""Wu, Conneau et al. (2020), Figures 5 and 8: the transfer of :mod:`xling.analysis.transfer` at
every layer i = 0..L of one source model, in one process, as one table.

A killed sweep resumes: each finished layer's metrics stay in the work directory (with the settings
and the stamps of the inputs they were computed from) until the table is written. The work directory
is locked, so a second sweep of the same table fails at once instead of sharing it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from xling.atomic import atomic_open, write_json
from xling.fileio import StrPath, file_stamp
from xling.finetune.items import TEST_ITEMS, ItemCounts, items_string, read_test_items
from xling.finetune.settings import FinetuneSettings
from xling.model.auto import model_stamp
from xling.model.config import EncoderConfig
from xling.worklock import WorkDirLock

# Which inputs and settings the layers in the work directory were computed for.
SETTINGS_STAMP = "settings.json"


def transfer_sweep(
    task: str,
    *,
    source_model: StrPath,
    source_files: Mapping[str, StrPath],
    target_model: StrPath,
    target_lang: str,
    target_test: StrPath,
    mappings: StrPath,
    evaluations: Mapping[str, bool],
    settings: Mapping,
    out_csv: StrPath,
    work_dir: StrPath,
    threads: int = 1,
) -> list[dict]:
    """Train and evaluate at every layer; write rows ``layer, evaluation, lang, mapped, score,
    test_items`` (the per-sentence counts behind the score: ``xling.finetune.items.items_string``).

    ``evaluations`` maps a name to whether the target's states are mapped (``maps[layer]`` of the
    ``mappings`` file, target -> source). ``settings`` is config ``analysis.contextual_transfer``
    plus ``task_settings`` (the task's ``tasks.<task>`` section) and ``seed``; the task layers
    train with its ``epochs``, ``batch_size`` and ``lr``. The source's own test score is the row
    ``source``.
    """
    work_dir = Path(work_dir)
    # the inputs too: a sweep killed, then rerun on a retrained model or new mappings, must not
    # keep the layers it had finished on the old ones
    inputs = {"source_model": source_model, "target_model": target_model}
    stamps = {name: model_stamp(path) for name, path in inputs.items()}
    files = {**source_files, "target_test": target_test, "mappings": mappings}
    stamps |= {name: file_stamp(path) for name, path in sorted(files.items())}
    key = {"task": task, "settings": dict(settings), "evaluations": dict(evaluations)}
    key["inputs"] = stamps
    with WorkDirLock(work_dir, f"contextual transfer sweep ({task})") as lock:
        _reset_if_stale(lock, key)
        rows = _sweep(task, source_model, source_files, target_model, target_lang, target_test,
                      mappings, evaluations, settings, work_dir, threads)  # fmt: skip
        with atomic_open(out_csv) as out:
            pd.DataFrame(rows).to_csv(out, index=False)
        # The stamp goes first: a kill inside the clean-up then leaves layers that a rerun
        # discards, never a stamp vouching for layers that lost their files.
        (lock.work_dir / SETTINGS_STAMP).unlink()
        lock.clear()
    return rows


def _sweep(
    task, source_model, source_files, target_model, target_lang, target_test, mappings,
    evaluations, settings, work_dir: Path, threads: int,
) -> list[dict]:  # fmt: skip
    from xling.analysis.transfer import TransferEvaluation, run_layer_transfer
    from xling.finetune import TaskData

    finetune = FinetuneSettings.from_config(
        task, {**settings["task_settings"], "epochs": settings["epochs"]}, seed=settings["seed"]
    )
    hp = {"batch_size": settings["batch_size"], "lr": settings["lr"]}
    data = TaskData(
        train=Path(source_files["train"]),
        dev={"en": Path(source_files["dev"])},
        test={"en": Path(source_files["test"])},
    )
    with np.load(mappings) as stored:
        maps = stored["maps"]
    depth = EncoderConfig.load(Path(source_model) / "config.json").layers
    rows = []
    for layer in range(depth + 1):
        done = work_dir / f"L{layer}" / "metrics.json"
        if done.exists():
            metrics = json.loads(done.read_text())
        else:
            metrics = run_layer_transfer(
                task,
                source_model,
                layer,
                data,
                work_dir / f"L{layer}",
                work_dir / f"L{layer}" / "state",
                finetune,
                evaluations={
                    name: TransferEvaluation(
                        target_model, target_lang, target_test, maps[layer] if mapped else None
                    )
                    for name, mapped in evaluations.items()
                },
                hp=hp,
                threads=threads,
                task_layers=settings["task_layers"],
            )
        # per test sentence, the counts behind each score (the claims check resamples them)
        items = read_test_items(work_dir / f"L{layer}" / TEST_ITEMS)
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


def _reset_if_stale(lock: WorkDirLock, key: dict) -> None:
    """Results of other settings or inputs are never reused: the work directory starts afresh,
    as it does when ``settings.json`` is missing (a kill inside an earlier reset may have left
    layers without it)."""
    stamp = lock.work_dir / SETTINGS_STAMP
    if not stamp.exists() or json.loads(stamp.read_text()) != json.loads(json.dumps(key)):
        lock.clear()
        write_json(stamp, key)
