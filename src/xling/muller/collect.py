"""Muller et al.'s results as two tables: the selected runs' scores and the similarities.

For every (experiment, task, source, group) one grid point is kept, the one with the best
source-language dev score averaged over the seeds (ties: the first in grid order), and every seed
is reported at it: the paper selects "the best combination of hyper-parameters with a grid
search" on "the validation set of the source language" (A.1.1), reports one "best
hyper-parameters set for each task" (Table 3), runs "the same optimization procedure for the model
with and w/o RANDOM-INIT" (footnote 1: so a point per group) and averages the scores "on 5 runs
with different seeds" (section 3); a best point per seed would report each seed's luckiest point
and shrink the spread. :func:`best_grid_points` is that rule, the one the claims check
(:mod:`xling.report.claims.muller`) applies too. ``scores.csv`` and ``similarity.csv`` are the
inputs of the report (columns in docs/muller.md).
"""

from __future__ import annotations

import csv
import json
import math
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
    "cka_length_controlled",
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


# What one grid point is selected for: the runs of every seed of a setup and RANDOM-INIT group.
SELECTION_KEYS = ("experiment", "task", "source", "group")


def best_grid_points(dev: pd.DataFrame) -> dict[tuple, Any]:
    """The selection rule: (experiment, task, source, group) -> the grid point (``hp_id``) whose
    source-language dev score, averaged over the seeds, is the best; ties go to the point that
    comes first in ``dev``'s rows (grid order), and an undefined dev score ranks last.

    ``dev`` has one row per run: the columns of :data:`SELECTION_KEYS`, ``hp_id`` and ``score``
    (the run's source dev score). :func:`select_runs` and the claims check's scores both use it,
    so the report and the claims read the same point."""
    if dev.empty:
        return {}
    keys = list(SELECTION_KEYS)
    means = dev.groupby([*keys, "hp_id"], sort=False, dropna=False)["score"].mean()
    best = means.fillna(-math.inf).groupby(level=keys, sort=False, dropna=False).idxmax()
    return {tuple(key): index[-1] for key, index in best.items()}


def select_runs(runs: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], dict]]:
    """Every seed's run at the grid point of :func:`best_grid_points`, per (experiment, task,
    source, group), with its metrics; in the order of ``runs``."""
    finished = [(run, _metrics(run)) for run in runs]
    dev = pd.DataFrame(
        [
            {**{key: run[key] for key in SELECTION_KEYS}, "hp_id": run["hp_id"]}
            | {"score": metrics["dev"][run["source"]]}
            for run, metrics in finished
        ]
    )
    best = best_grid_points(dev)
    return [(run, metrics) for run, metrics in finished if run["hp_id"] == best[_setup_group(run)]]


def _setup_group(run: Mapping[str, Any]) -> tuple:
    return tuple(run[key] for key in SELECTION_KEYS)


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
    """The pretrained model's rows and the length control's (``pretrained`` lists both; a row of
    its ``model`` column ``length`` is the control's, one without is the pretrained model's;
    task empty, group ``ref``, seed 0 for both), then those of each selected run that measured
    similarity (each run's file ``name``: ``similarity_resamples.csv`` for the resamples, with
    ``RESAMPLE_COLUMNS``)."""
    rows = []
    for row in _read_csv(pretrained):
        model = row.pop("model", None) or "pretrained"
        rows.append({"model": model, "task": "", "group": "ref", "seed": 0} | row)
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
