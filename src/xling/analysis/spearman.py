"""Cross-lang gap against cross-lingual similarity: Muller et al. (2021), Table 4 and Figure 3.

The *cross-lang gap* of a target language (Hu et al., 2020) is the source's same-language test score
minus the target's test score, for models fine-tuned on the source without RANDOM-INIT (group
``ref``), each score the mean over seeds. The *cross-lingual similarity* of a target is the CKA per
layer between the source and the target representations of parallel sentences (``similarity.csv``),
mean over seeds; Table 4 averages it over all the layers in the file (0 = embeddings .. L), Figure 3
takes each layer alone. The correlation over target languages is Spearman's rank correlation,
computed by :func:`scipy.stats.spearmanr` (ties get average ranks). Its two-sided p-value is exact
(every pairing of the ranks, :func:`scipy.stats.permutation_test`) up to :data:`EXACT_UP_TO`
languages and scipy's t approximation above: at the demo's four targets the t approximation gives a
perfect order p = 0, where its exact p is 2/4! = 0.083 (R's ``cor.test`` is exact there too).

Expect a negative ρ: a target more similar to the source loses less. The paper prints positive
correlations (0.76, 0.74, 0.47 fine-tuned), so it reports a magnitude or a differently signed
variable; :mod:`xling.report.muller_tables` prints our signed ρ beside them and says so.

This module reads no file and imports no torch: the inputs are the frames of ``scores.csv`` and
``similarity.csv`` (columns in docs/muller.md).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import permutation_test, rankdata, spearmanr

MIN_LANGUAGES = 3
# Up to 9! = 362,880 pairings are enumerated (about a second); above, the t approximation: at 10
# languages it was off the exact p-value by at most 0.007 on random data (0.060 for 0.067), and the
# paper's 17 are closer still.
EXACT_UP_TO = 9
KINDS = ("finetuned", "pretrained")
REF = "ref"


class TooFewLanguages(ValueError):
    """Fewer than :data:`MIN_LANGUAGES` languages to correlate over."""


def spearman(x: Sequence[float], y: Sequence[float], what: str = "") -> tuple[float, float]:
    """Spearman's ρ (:func:`scipy.stats.spearmanr`) and its two-sided p-value, exact up to
    :data:`EXACT_UP_TO` points (see the module docstring).

    Raises :class:`TooFewLanguages` below three points (a rank correlation of two points is ±1 and
    has no p-value). Constant input has no defined correlation: ``(nan, nan)``.
    """
    x_arr, y_arr = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x_arr.shape != y_arr.shape or x_arr.ndim != 1:
        raise ValueError(f"spearman: x and y must be two sequences of one length ({what})")
    if len(x_arr) < MIN_LANGUAGES:
        raise TooFewLanguages(
            f"a Spearman correlation needs at least {MIN_LANGUAGES} languages, got "
            f"{len(x_arr)}{f' ({what})' if what else ''}: evaluate and compare more target "
            "languages"
        )
    if np.ptp(x_arr) == 0 or np.ptp(y_arr) == 0:
        return math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = spearmanr(x_arr, y_arr)
    rho, p_value = float(result.statistic), float(result.pvalue)
    if len(x_arr) <= EXACT_UP_TO:
        p_value = exact_p_value(x_arr, y_arr)
    return rho, p_value


def exact_p_value(x: np.ndarray, y: np.ndarray) -> float:
    """The two-sided exact p-value of Spearman's ρ (see :func:`_exact_p_value_of_ranks`)."""
    return _exact_p_value_of_ranks(tuple(rankdata(x)), tuple(rankdata(y)))


# The claims check asks for the same few rank patterns once per bootstrap resample.
@functools.lru_cache(maxsize=4096)
def _exact_p_value_of_ranks(x_ranks: tuple[float, ...], y_ranks: tuple[float, ...]) -> float:
    """The two-sided p-value of Spearman's ρ: the share of all pairings of ``x``'s ranks with
    ``y``'s whose |ρ| reaches the observed one (ties keep their average ranks, so the test is exact
    given the ties; scipy's own two-sided rule, twice the smaller tail, differs from it only with
    ties, whose null distribution need not be symmetric)."""
    y_centred = np.asarray(y_ranks) - np.mean(y_ranks)
    y_norm = np.sqrt((y_centred**2).sum())

    def absolute_rho(ranks: np.ndarray, axis: int = -1) -> np.ndarray:
        centred = ranks - ranks.mean(axis=axis, keepdims=True)
        norm = np.sqrt((centred**2).sum(axis=axis)) * y_norm
        return np.abs((centred * y_centred).sum(axis=axis) / norm)

    result = permutation_test(
        (np.asarray(x_ranks),),
        absolute_rho,
        permutation_type="pairings",
        n_resamples=np.inf,
        vectorized=True,
        alternative="greater",
    )
    return float(result.pvalue)


def cross_language_gap(
    scores: pd.DataFrame,
    task: str,
    source: str,
    *,
    group: str = REF,
    include_source: bool = False,
) -> pd.Series:
    """Per target language (the index, named ``target``): same-language minus target test score.

    ``scores`` has the columns of ``scores.csv``; rows of the ``transfer`` experiment, ``task``,
    ``source``, ``group`` and split ``test`` are used, each score the mean over seeds (in the
    file's units, fractions). ``include_source`` adds the source itself with a gap of 0.
    """
    rows = scores[
        (scores["experiment"] == "transfer")
        & (scores["task"] == task)
        & (scores["source"] == source)
        & (scores["group"].astype(str) == group)
        & (scores["split"] == "test")
    ]
    means = rows.groupby("evaluation", sort=False)["score"].mean()
    if source not in means.index:
        raise ValueError(
            f"no same-language test score for task {task!r}, source {source!r}, group {group!r}: "
            "the cross-lang gap needs the source evaluated on its own test set"
        )
    gap = means[source] - means.drop(source)
    if include_source:
        gap = pd.concat([pd.Series({source: 0.0}), gap])
    gap.index.name = "target"
    return gap.rename("gap")


def layer_similarity(
    similarity: pd.DataFrame,
    kind: str,
    source: str,
    *,
    task: str | None = None,
    group: str = REF,
    measure: str = "cka",
) -> pd.DataFrame:
    """Targets x layers, the mean over seeds of ``measure`` between ``source`` and each target.

    ``kind`` is ``finetuned`` (then ``task`` and ``group`` select the models) or ``pretrained``
    (one model: task and group are ignored).
    """
    if kind not in KINDS:
        raise ValueError(f"model kind {kind!r}: expected one of {KINDS}")
    mask = (similarity["model"] == kind) & (similarity["source"] == source)
    if kind == "finetuned":
        if task is None:
            raise ValueError("the similarity of fine-tuned models needs a task")
        mask &= (similarity["task"] == task) & (similarity["group"].astype(str) == group)
    rows = similarity[mask & similarity[measure].notna()]
    table = rows.pivot_table(index="target", columns="layer", values=measure, aggfunc="mean")
    return table.sort_index(axis=1)


def _aligned(gap: pd.Series, table: pd.DataFrame, source: str, include_source: bool):
    if include_source and source not in table.index and not table.empty:
        # the CKA of a representation with itself is 1 at every layer
        table = pd.concat([pd.DataFrame(1.0, index=[source], columns=table.columns), table])
    targets = [t for t in gap.index if t in table.index]
    return gap.loc[targets], table.loc[targets]


def gap_similarity_correlation(
    scores: pd.DataFrame,
    similarity: pd.DataFrame,
    *,
    source: str = "en",
    tasks: Sequence[str] | None = None,
    per_layer: bool = False,
    measure: str = "cka",
    include_source: bool = False,
    skip_too_few: bool = False,
) -> pd.DataFrame:
    """Spearman ρ between the cross-lang gap and the cross-lingual similarity over targets.

    One row per (kind, task) with the similarity averaged over layers (Table 4), or per (kind,
    task, layer) with ``per_layer`` (Figure 3); the kinds are :data:`KINDS`. Columns: ``kind``,
    ``task``, [``layer``], ``rho``, ``p_value``, ``n`` (languages), ``languages`` (space-separated
    codes). A target counts where both its gap and its similarity exist. Fewer than three
    languages raise :class:`TooFewLanguages` (and a task without a same-language score
    ValueError); with ``skip_too_few`` both give a row with ``rho`` and ``p_value`` NaN instead.
    ``tasks`` defaults to the tasks of the ``transfer`` experiment with this source.
    """
    if tasks is None:
        mask = (scores["experiment"] == "transfer") & (scores["source"] == source)
        tasks = list(dict.fromkeys(scores.loc[mask, "task"]))
    records = []
    for kind in KINDS:
        for task in tasks:
            try:
                gap = cross_language_gap(scores, task, source, include_source=include_source)
            except ValueError:
                if not skip_too_few:
                    raise
                gap = pd.Series(dtype=float)
            table = layer_similarity(similarity, kind, source, task=task, measure=measure)
            gap, table = _aligned(gap, table, source, include_source)
            if per_layer:
                columns = [(int(layer), table[layer]) for layer in table.columns]
            else:
                columns = [(None, table.mean(axis=1))]
            for layer, values in columns:
                what = f"{kind} {task}, source {source}" + (f", layer {layer}" if per_layer else "")
                record = {"kind": kind, "task": task} | ({"layer": layer} if per_layer else {})
                records.append(record | _correlation(gap, values, what, skip_too_few))
    columns = ["kind", "task", *(["layer"] if per_layer else []), "rho", "p_value", "n"]
    return pd.DataFrame(records, columns=[*columns, "languages"])


def _correlation(gap: pd.Series, similarity: pd.Series, what: str, skip_too_few: bool) -> dict:
    """``rho``, ``p_value``, ``n`` and ``languages`` of the targets with a similarity."""
    known = similarity.notna().to_numpy()
    x, y = gap[known], similarity[known]
    try:
        rho, p_value = spearman(x.to_numpy(), y.to_numpy(), what)
    except TooFewLanguages:
        if not skip_too_few:
            raise
        rho, p_value = math.nan, math.nan
    return {"rho": rho, "p_value": p_value, "n": len(x), "languages": " ".join(x.index)}
