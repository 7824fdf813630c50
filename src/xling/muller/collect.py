"""Muller et al.'s results as two tables: the selected runs' scores and the similarities.

For every (experiment, task, source, group) one grid point is kept, the one with the best
source-language dev score averaged over the seeds (ties: the first in grid order), and every seed
is reported at it: the paper selects "the best combination of hyper-parameters with a grid
search" on "the validation set of the source language" (A.1.1), reports one "best
hyper-parameters set for each task" (Table 3) and averages the scores "on 5 runs with different
seeds" (section 3); a best point per seed would report each seed's luckiest point and shrink the
spread. ``scores.csv`` and ``similarity.csv`` are the inputs of the report (columns in
docs/muller.md).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from xling.jobs.done import DONE

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


def _metrics(run: Mapping[str, Any]) -> dict:
    """A finished run's metrics, after checking that its ``done.json`` is this run's: the
    directory alone does not prove it (a copied or moved results folder)."""
    path = Path(run["dir"]) / DONE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the run did not finish; rerun its job")
    done = json.loads(path.read_text(encoding="utf-8"))
    fingerprint, metrics = done.get("fingerprint", {}), done["metrics"]
    found = {
        "group": fingerprint.get("group"),
        "seed": fingerprint.get("seed"),
        "hp_id": metrics.get("hp_id"),
    }
    wrong = {key: value for key, value in found.items() if value != run[key]}
    if wrong:
        expected = {key: run[key] for key in wrong}
        raise ValueError(
            f"{path} is another run's ({wrong}, this directory's run has {expected}), as when "
            "a run's folder is copied or moved by hand; delete the directory and rerun its job"
        )
    return metrics


def select_runs(runs: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], dict]]:
    """Every seed's run at the grid point with the best mean source dev score over the seeds, per
    (experiment, task, source, group), with its metrics; in the order of ``runs``."""
    finished = [(run, _metrics(run)) for run in runs]
    dev_scores: dict[tuple, dict[str, list[float]]] = {}
    for run, metrics in finished:
        points = dev_scores.setdefault(_setup_group(run), {})
        points.setdefault(run["hp_id"], []).append(metrics["dev"][run["source"]])
    best = {}
    for key, points in dev_scores.items():
        means = {hp: sum(scores) / len(scores) for hp, scores in points.items()}
        best[key] = max(means, key=lambda hp: means[hp])  # the first of equal means
    return [(run, metrics) for run, metrics in finished if run["hp_id"] == best[_setup_group(run)]]


def _setup_group(run: Mapping[str, Any]) -> tuple:
    return tuple(run[k] for k in ("experiment", "task", "source", "group"))


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
        path = Path(run["dir"]) / name
        measured = _read_csv(path)
        others = sorted({row["source"] for row in measured} - {run["source"]})
        if others:  # a run measured before each model compared its own source only
            raise ValueError(
                f"{path} has rows from source(s) {others}, not only from the model's own "
                f"source {run['source']!r}, and would mix models: delete {run['dir']} and rerun "
                "its job"
            )
        rows += [meta | row for row in measured]
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
