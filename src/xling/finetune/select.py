"""The paper's reported score: the mean over the best ``k`` grid points, chosen on English dev.

Wu, Conneau et al. 2020, section 3.2: "We select the model and tune the hyperparameter with the
English dev set. We report the result on average of best two set of hyperparameters." Torch-free.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

REQUIRED_KEYS = ("task", "metric", "hp_id", "dev", "test")


def _load(path: Path) -> dict:
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path}:{error.lineno}: not valid JSON ({error.msg}); rerun its fine-tuning job"
        ) from None
    missing = [key for key in REQUIRED_KEYS if key not in metrics]
    if missing:
        raise ValueError(f"{path}: metrics.json lacks {missing}; rerun its fine-tuning job")
    return metrics


def _mean_by_language(runs: Sequence[dict], split: str) -> dict[str, float]:
    """Per language present in every run, the mean score."""
    common = set.intersection(*(set(run[split]) for run in runs))
    return {lang: sum(run[split][lang] for run in runs) / len(runs) for lang in sorted(common)}


def select_best(metrics_paths: Sequence[str | Path], k: int = 2, source_lang: str = "en") -> dict:
    """Rank grid points by their ``source_lang`` dev score and average the best ``k``.

    Each ``metrics.json`` is one grid point's result (its own epoch already chosen on English dev).
    Ties go to the smaller ``hp_id`` so the choice is reproducible. Returns ``{"metric",
    "best_hp_ids", "dev", "test"}`` with dev/test means per language; writes nothing.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if len(metrics_paths) < k:
        raise ValueError(
            f"{len(metrics_paths)} grid point(s) but the best {k} are to be averaged: add grid "
            "points or lower k (the paper averages the best 2)"
        )
    runs = []
    for path in map(Path, metrics_paths):
        metrics = _load(path)
        if source_lang not in metrics["dev"]:
            raise ValueError(
                f"{path}: no {source_lang} dev score, which selection needs "
                f"(dev has {sorted(metrics['dev'])})"
            )
        runs.append((path, metrics))
    for key in ("task", "metric"):
        values = {metrics[key] for _, metrics in runs}
        if len(values) > 1:
            raise ValueError(
                f"metrics files mix {key}s {sorted(values)}: {[str(p) for p, _ in runs]}"
            )
    ids = [metrics["hp_id"] for _, metrics in runs]
    if len(set(ids)) != len(ids):
        raise ValueError(f"a grid point appears twice among {ids}")
    ranked = sorted(runs, key=lambda run: (-run[1]["dev"][source_lang], run[1]["hp_id"]))
    best = [metrics for _, metrics in ranked[:k]]
    return {
        "metric": best[0]["metric"],
        "best_hp_ids": [metrics["hp_id"] for metrics in best],
        "dev": _mean_by_language(best, "dev"),
        "test": _mean_by_language(best, "test"),
    }
