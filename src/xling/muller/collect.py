"""Muller et al.'s results as two tables: the selected runs' scores and the similarities.

For every (experiment, task, source, group, seed) the grid point with the best source-language
dev score is kept (ties: the first in grid order), as the paper selects "with a grid search" on
"the validation set of the source language" (A.1.1). ``scores.csv`` and ``similarity.csv`` are
the inputs of the report (columns in docs/muller.md).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from xling.finetune.done import DONE

SCORE_COLUMNS = (
    "experiment", "task", "source", "group", "seed", "evaluation", "lang", "split", "score",
    "hp_id",
)  # fmt: skip
SIMILARITY_COLUMNS = (
    "model", "task", "group", "seed", "source", "target", "layer", "cka", "cka_debiased",
)  # fmt: skip
# Files a run that measures similarity writes (xling.muller.runner).
SIMILARITY = "similarity.csv"
SIMILARITY_RESAMPLES = "similarity_resamples.csv"
RESAMPLE_COLUMNS = (
    "replicate", "model", "task", "group", "seed", "source", "target", "layer", "cka",
)  # fmt: skip


def _metrics(run_dir: str | Path) -> dict:
    path = Path(run_dir) / DONE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the run did not finish; rerun its job")
    return json.loads(path.read_text(encoding="utf-8"))["metrics"]


def select_runs(runs: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], dict]]:
    """The best grid point of every (experiment, task, source, group, seed), with its metrics."""
    best: dict[tuple, tuple[Mapping[str, Any], dict, float]] = {}
    for run in runs:
        metrics = _metrics(run["dir"])
        key = tuple(run[k] for k in ("experiment", "task", "source", "group", "seed"))
        dev = metrics["dev"][run["source"]]
        if key not in best or dev > best[key][2]:
            best[key] = (run, metrics, dev)
    return [(run, metrics) for run, metrics, _ in best.values()]


def score_rows(
    selected: Sequence[tuple[Mapping[str, Any], dict]],
    evaluations: Mapping[str, Mapping[str, str]],
) -> list[dict]:
    """One row per selected run and evaluation set, plus the source dev score."""
    rows = []
    for run, metrics in selected:
        setup = f"{run['experiment']}/{run['task']}/{run['source']}"
        base = {k: run[k] for k in ("experiment", "task", "source", "group", "seed")}
        source = run["source"]
        rows.append(
            base
            | {"evaluation": source, "lang": source, "split": "dev"}
            | {"score": metrics["dev"][source], "hp_id": run["hp_id"]}
        )
        for name, lang in evaluations[setup].items():
            rows.append(
                base
                | {"evaluation": name, "lang": lang, "split": "test"}
                | {"score": metrics["test"][name], "hp_id": run["hp_id"]}
            )
    return rows


def similarity_rows(
    selected: Sequence[tuple[Mapping[str, Any], dict]],
    pretrained: str | Path,
    name: str = SIMILARITY,
    columns: Sequence[str] = SIMILARITY_COLUMNS,
) -> list[dict]:
    """The pretrained model's rows, then those of each selected run that measured similarity
    (each run's file ``name``: ``similarity_resamples.csv`` for the resamples, with
    ``RESAMPLE_COLUMNS``)."""
    rows = []
    for row in _read_csv(pretrained):
        rows.append({"model": "pretrained", "task": "", "group": "ref", "seed": 0} | row)
    for run, _ in selected:
        if not run["similarity"]:
            continue
        meta = {"model": "finetuned", "task": run["task"], "group": run["group"]}
        meta["seed"] = run["seed"]
        rows += [meta | row for row in _read_csv(Path(run["dir"]) / name)]
    return [{column: row.get(column) for column in columns} for row in rows]


def similarity_resamples(
    selected: Sequence[tuple[Mapping[str, Any], dict]], pretrained_resamples: str | Path
) -> pd.DataFrame:
    """``similarity.csv`` on the bootstrap resamples of the parallel sentences (each run's
    ``similarity_resamples.csv`` and the pretrained model's), in replicate order."""
    rows = similarity_rows(selected, pretrained_resamples, SIMILARITY_RESAMPLES, RESAMPLE_COLUMNS)
    frame = pd.DataFrame(rows, columns=list(RESAMPLE_COLUMNS))
    frame = frame.astype({"replicate": int, "layer": int, "cka": float})
    return frame.sort_values("replicate", kind="stable").reset_index(drop=True)


def stale_similarity(selected: Sequence[tuple[Mapping[str, Any], dict]]) -> list[str]:
    """The runs' similarity files without resamples beside them (measured before runs kept
    them; the pretrained model's are an output of its own job)."""
    paths = [Path(run["dir"]) / SIMILARITY_RESAMPLES for run, _ in selected if run["similarity"]]
    return [str(path) for path in paths if not path.is_file()]


def _read_csv(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))
