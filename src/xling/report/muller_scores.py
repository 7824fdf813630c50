"""Muller et al. (2021): ``scores.csv`` and ``similarity.csv`` read and checked, the cells the
report's tables and figures are made of (:mod:`xling.report.muller_tables`,
:mod:`xling.report.muller_figures`), and the rule outputs both are written to
(:func:`named_outputs`).

How a cell is computed (means over seeds, spreads, Δ): :mod:`xling.report.muller_tables`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from xling.base.errors import InputFileError
from xling.muller.collect import SCORE_COLUMNS, SIMILARITY_COLUMNS
from xling.papers import muller2021 as paper

REF = paper.REF
# hp_id, cka_debiased and cka_length_controlled may be absent: tables written before those
# columns existed still read.
_OPTIONAL_CKA = ("cka_debiased", "cka_length_controlled")
_REQUIRED_SCORE = tuple(column for column in SCORE_COLUMNS if column != "hp_id")
_REQUIRED_SIMILARITY = tuple(column for column in SIMILARITY_COLUMNS if column not in _OPTIONAL_CKA)
# Every other column is text (a group such as `1` or `1-2` is a name, not a number).
_SCORE_TEXT = tuple(column for column in SCORE_COLUMNS if column not in ("seed", "score"))
_SIMILARITY_NUMBERS = ("seed", "layer", "cka", *_OPTIONAL_CKA)
_SIMILARITY_TEXT = tuple(c for c in SIMILARITY_COLUMNS if c not in _SIMILARITY_NUMBERS)


def _checked(frame: pd.DataFrame, required: Sequence[str], text: Sequence[str], where: str):
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise InputFileError(
            where,
            f"missing column(s) {', '.join(missing)}",
            fix=f"write the columns {', '.join(required)} (docs/muller.md)",
        )
    frame = frame.copy()
    for column in text:
        if column in frame.columns:
            frame[column] = frame[column].fillna("").astype(str)
    frame["seed"] = pd.to_numeric(frame["seed"]).astype(int)
    return frame


def prepare_scores(frame: pd.DataFrame, where: str = "scores.csv") -> pd.DataFrame:
    """Check the columns of ``scores.csv`` and give every text column (``group`` too) str type."""
    frame = _checked(frame, _REQUIRED_SCORE, _SCORE_TEXT, where)
    frame["score"] = pd.to_numeric(frame["score"]).astype(float)
    return frame


def prepare_similarity(frame: pd.DataFrame, where: str = "similarity.csv") -> pd.DataFrame:
    """Check the columns of ``similarity.csv``; ``cka_debiased`` and ``cka_length_controlled``
    may be missing or empty. Rows of model ``length`` (the length control) are kept: the tables
    and figures pick their models by name."""
    frame = _checked(frame, _REQUIRED_SIMILARITY, _SIMILARITY_TEXT, where)
    frame["layer"] = pd.to_numeric(frame["layer"]).astype(int)
    frame["cka"] = pd.to_numeric(frame["cka"]).astype("float64")
    for column in _OPTIONAL_CKA:
        if column not in frame.columns:
            frame[column] = np.nan
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def read_scores(path: str | Path) -> pd.DataFrame:
    text = {column: str for column in _SCORE_TEXT}
    return prepare_scores(pd.read_csv(path, dtype=text, keep_default_na=False), str(path))


def read_similarity(path: str | Path) -> pd.DataFrame:
    text = {column: str for column in _SIMILARITY_TEXT}
    empty = {column: [""] for column in _OPTIONAL_CKA}
    frame = pd.read_csv(path, dtype=text, keep_default_na=False, na_values=empty)
    return prepare_similarity(frame, str(path))


def read_inputs(scores: str | Path, similarity: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``scores.csv`` and ``similarity.csv`` read and checked: what the tables and figures read."""
    return read_scores(scores), read_similarity(similarity)


def named_outputs(
    outputs: Mapping[str, str | Path], names: Sequence[str], kinds: Sequence[str]
) -> dict[str, tuple[str | Path, ...]]:
    """Name -> its paths, one per kind, for each of ``names`` whose first kind is in ``outputs``
    (``figure1_png``: Figure 1 is drawn), in the order of ``names``; a name with its first kind but
    not every other raises ValueError, naming what is missing."""
    first, *others = kinds
    chosen = [name for name in names if f"{name}_{first}" in outputs]
    for name in chosen:
        missing = [f"{name}_{kind}" for kind in others if f"{name}_{kind}" not in outputs]
        if missing:
            raise ValueError(f"outputs name {name}_{first} but not {', '.join(missing)}")
    return {name: tuple(outputs[f"{name}_{kind}"] for kind in kinds) for name in chosen}


@dataclass(frozen=True)
class Cell:
    """One number of ours in a table, with its spread over seeds; None where not computed."""

    value: float | None = None
    spread: float | None = None


def optional_float(value) -> float | None:
    """A float, or None for a missing or NaN value (a cell this run did not compute)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


class Runs:
    """Scores (x100) of one experiment, task and source: per (group, split) an array of seeds x
    evaluation sets (duplicate rows of a seed averaged; NaN where a seed lacks a set)."""

    def __init__(self, scores: pd.DataFrame, experiment: str, task: str, source: str):
        rows = scores[
            (scores["experiment"] == experiment)
            & (scores["task"] == task)
            & (scores["source"] == source)
        ]
        self.langs = dict(zip(rows["evaluation"], rows["lang"], strict=True))
        self.arrays: dict[tuple[str, str], tuple[dict[str, int], np.ndarray]] = {}
        if rows.empty:
            return
        keys = ["group", "split", "seed", "evaluation"]
        wide = rows.groupby(keys, sort=False)["score"].mean().unstack("evaluation") * 100
        for (group, split), part in wide.groupby(level=[0, 1], sort=False):
            part = part.dropna(axis=1, how="all")
            columns = {evaluation: i for i, evaluation in enumerate(part.columns)}
            self.arrays[(group, split)] = (columns, part.to_numpy(dtype=float))

    def groups(self) -> list[str]:
        return list(dict.fromkeys(group for group, _ in self.arrays))

    def evaluations(self, group: str = REF, split: str = "test") -> list[str]:
        return list(self.arrays.get((group, split), ({}, None))[0])

    def _seeds(self, group: str, evaluations: Iterable[str], split: str) -> np.ndarray:
        """Seeds x the given evaluations this group has (in the given order)."""
        columns, values = self.arrays.get((group, split), ({}, np.empty((0, 0))))
        chosen = [columns[e] for e in dict.fromkeys(evaluations) if e in columns]
        return values[:, chosen]

    def has(self, group: str, evaluation: str, split: str = "test") -> bool:
        return evaluation in self.arrays.get((group, split), ({}, None))[0]

    def absolute(self, group: str, evaluations: Iterable[str], split: str = "test") -> Cell:
        """Mean over evaluations of the seed-means; spread over seeds of the per-seed means."""
        values = self._seeds(group, evaluations, split)
        if values.size == 0:
            return Cell()
        value = float(np.mean(np.nanmean(values, axis=0)))
        complete = values[~np.isnan(values).any(axis=1)].mean(axis=1)
        spread = float(np.std(complete, ddof=1)) if len(complete) >= 2 else None
        return Cell(value, spread)

    def delta(self, group: str, evaluations: Iterable[str], split: str = "test") -> Cell:
        """RANDOM-INIT minus Ref over the evaluations both computed."""
        common = [e for e in evaluations if self.has(group, e, split) and self.has(REF, e, split)]
        if not common:
            return Cell()
        init, base = self.absolute(group, common, split), self.absolute(REF, common, split)
        return Cell(init.value - base.value, init.spread)


def language_order(codes: Iterable[str]) -> list[str]:
    """Paper languages in the paper's order (Appendix A.1.2), then the others alphabetically."""
    codes = set(codes)
    known = [code for code in paper.LANGUAGES if code in codes]
    return known + sorted(codes - set(known))
