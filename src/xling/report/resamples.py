"""Table 1, Wu's Figures 4 to 6 and 8 and Muller et al.'s scores rescored on bootstrap resamples
of their test sets: how much a difference between two rows owes to the particular test sentences
(or test words); and Wu's Figure 7, whose CKA the similarity jobs compute on resamples of the
parallel sentences (``xling.analysis.similarity``), gathered here.

Two models tested on one test set differ by their skill and by which sentences happen to be in
it; with one seed, the point estimates alone cannot tell the two apart (a 600-pair XNLI test set
near chance moves an accuracy by about 2 points). Each resample draws the examples of every test
set with replacement, the *same* draw for every row that reads that test set (a paired bootstrap:
Koehn 2004; Dror et al. 2018), and rescores each cell from its runs' per-example counts
(``xling.contracts.items``), so that the claims check can ask how often a comparison holds
(``xling.report.claims``). Deterministic for a seed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from xling.base.bootstrap import REPLICATE, bootstrap_draws, split_replicates
from xling.contracts.items import HIT, MISS, TEST_ITEMS, UNSCORED, ItemCounts, read_test_items
from xling.report.table1 import KEY, score_column, target_columns


def _counts(items: ItemCounts) -> tuple[np.ndarray, np.ndarray]:
    array = np.asarray(items, dtype=np.float64).reshape(-1, 2)
    return array[:, 0], array[:, 1]


def _shared_draws(
    draws: dict[tuple[str, str], np.ndarray],
    seed: int,
    test_set: tuple[str, str],
    replicates: int,
    size: int,
    where: str,
    fix: str,
) -> np.ndarray:
    """The draws of ``test_set``, made on first use and shared by every row that reads it; a row
    that scores it with another number of examples is an error naming ``where`` and ``fix``."""
    known = draws.get(test_set)
    if known is None:
        known = draws[test_set] = bootstrap_draws(seed, test_set, replicates, size)
    elif known.shape[1] != size:
        raise ValueError(
            f"{where}: its {test_set[1]} {test_set[0]} test set has {size} examples, another "
            f"row's {known.shape[1]}: they must score one test file; {fix}"
        )
    return known


def resampled_scores(runs: Sequence[ItemCounts], draws: np.ndarray) -> np.ndarray:
    """The mean over ``runs`` (the best grid points of one cell) of each run's score on each row
    of ``draws`` (replicates x examples, indices into the test set), as a fraction."""
    scores = np.zeros(len(draws))
    for items in runs:
        numerators, denominators = _counts(items)
        top, bottom = numerators[draws].sum(axis=1), denominators[draws].sum(axis=1)
        scores += np.divide(top, bottom, out=np.zeros_like(top), where=bottom > 0)
    return scores / len(runs)


def table1_resamples(
    cells: Sequence[Mapping[str, str]],
    runs: Sequence[Sequence[ItemCounts]],
    pairs: Sequence[str],
    replicates: int,
    seed: int,
) -> pd.DataFrame:
    """Table 1's score cells (x 100) on ``replicates`` resamples of the test sets.

    ``cells[i]`` names a cell (variant, pair, task, target); ``runs[i]`` holds, per grid point
    averaged in that cell, its per-example counts on the target's test set. Cells of one task and
    target read one test set and share each draw. Returns one row per (replicate, variant) with
    the columns of ``tables/table1.csv`` that hold target scores (no averages, no paper numbers).
    """
    if replicates < 1:
        raise ValueError(f"report.resamples must be at least 1 to resample, got {replicates}")
    labels = dict(target_columns(pairs))
    draws: dict[tuple[str, str], np.ndarray] = {}
    sizes: dict[tuple[str, str], tuple[int, str]] = {}
    columns: dict[tuple[str, str], np.ndarray] = {}
    for cell, cell_runs in zip(cells, runs, strict=True):
        name = f"{cell['variant']} {cell['pair']} {cell['task']}"
        if not cell_runs:
            raise ValueError(f"Table 1 cell {name}: no fine-tuning run to resample")
        test_set = (cell["task"], cell["target"])
        for items in cell_runs:
            n = len(items)
            if n == 0:
                raise ValueError(f"Table 1 cell {name}: its {cell['target']} test set is empty")
            known = sizes.setdefault(test_set, (n, name))
            if known[0] != n:
                raise ValueError(
                    f"Table 1 cells {known[1]} and {name} read the {cell['task']} "
                    f"{cell['target']} test set with {known[0]} and {n} examples; they must "
                    "score one test file: rerun the fine-tuning of the older one"
                )
        if test_set not in draws:
            draws[test_set] = bootstrap_draws(seed, test_set, replicates, sizes[test_set][0])

        column = score_column(cell["task"], labels[cell["pair"]])
        columns[(cell["variant"], column)] = 100.0 * resampled_scores(cell_runs, draws[test_set])
    variants = list(dict.fromkeys(variant for variant, _ in columns))
    names = list(dict.fromkeys(column for _, column in columns))
    rows = []
    for replicate in range(replicates):
        for variant in variants:
            row = {REPLICATE: replicate, KEY: variant}
            for column in names:
                values = columns.get((variant, column))
                row[column] = None if values is None else round(float(values[replicate]), 6)
            rows.append(row)
    return pd.DataFrame(rows, columns=[REPLICATE, KEY, *names])


def _by_replicate(frames: Sequence[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    """One frame of per-row resamples, replicate by replicate (rows in their order within each)."""
    if not frames:
        return pd.DataFrame(columns=list(columns))
    frame = pd.concat(frames, ignore_index=True).sort_values(REPLICATE, kind="stable")
    return frame[list(columns)].reset_index(drop=True)


def hits_resamples(
    tables: Mapping[str, pd.DataFrame],
    test_set: str,
    keys: Sequence[str],
    scores: Mapping[str, str],
    replicates: int,
    seed: int,
    rule: str,
) -> pd.DataFrame:
    """Rows of per-pair analysis tables rescored on ``replicates`` resamples of their test items.

    ``tables`` maps a pair to its table; ``scores`` maps each score column to the column of hit
    marks it is the mean of (``xling.contracts.items.hits_string``: one mark per test item, in
    the test set's order). Each resample draws a pair's test items with replacement, the same draw
    for every row and score of that pair (a paired bootstrap), and scores a row over the drawn
    items it scored. ``test_set`` names the test sets in the draws' seed, ``rule`` the job that
    writes the tables (for the fix an error names). Returns one row per (replicate, pair, table
    row): ``replicate, pair``, the ``keys`` and the score columns.
    """
    if replicates < 1:
        raise ValueError(f"report.resamples must be at least 1 to resample, got {replicates}")
    columns = [REPLICATE, "pair", *keys, *scores]
    frames = []
    for pair, table in tables.items():
        marks = {}
        for score, column in scores.items():
            if column not in table:
                raise ValueError(
                    f"the {test_set} table of {pair} has no {column} column: it was written "
                    f"before the per-item hits were kept; rerun it (snakemake --forcerun {rule})"
                )
            marks[score] = [str(value) for value in table[column]]
        every = [value for values in marks.values() for value in values]
        sizes = {len(value) for value in every}
        if len(sizes) != 1 or set("".join(every)) - {HIT, MISS, UNSCORED}:
            raise ValueError(
                f"the {test_set} table of {pair}: every {'/'.join(scores.values())} value must "
                f"have one of {HIT!r}, {MISS!r}, {UNSCORED!r} per test item, as many in every "
                f"row; rerun it (snakemake --forcerun {rule})"
            )
        draws = bootstrap_draws(seed, (test_set, pair), replicates, sizes.pop())
        for position, (_, row) in enumerate(table.iterrows()):
            frame = pd.DataFrame({REPLICATE: np.arange(replicates), "pair": pair})
            for key in keys:
                frame[key] = row[key]
            for score, values in marks.items():
                items = [(int(c == HIT), int(c != UNSCORED)) for c in values[position]]
                frame[score] = resampled_scores([items], draws)
            frames.append(frame)
    return _by_replicate(frames, columns)


# What identifies a row of Figure 4's and Figure 6's tables, and each score -> its hit marks.
FIGURE4_KEYS, FIGURE4_SCORES = ["method", "layer", "mapped"], {"p_at_1": "hits"}
FIGURE6_KEYS = ["layer", "direction"]
FIGURE6_SCORES = {
    "p_at_1": "hits", "p_at_1_unmapped": "hits_unmapped", "p_at_1_random": "hits_random",
}  # fmt: skip
# The columns of each resample file (also written, header only, where a run has no resamples).
FIGURE4_COLUMNS = [REPLICATE, "pair", *FIGURE4_KEYS, *FIGURE4_SCORES]
FIGURE6_COLUMNS = [REPLICATE, "pair", *FIGURE6_KEYS, *FIGURE6_SCORES]
CKA_RETRIEVAL_COLUMNS = [REPLICATE, "pair", "pearson_r", "p_value", "layers"]


def figure4_resamples(
    tables: Mapping[str, pd.DataFrame], replicates: int, seed: int
) -> pd.DataFrame:
    """Wu's Figure 4 (word translation P@1) on resamples of each pair's MUSE test words: every
    row of ``analysis/words/<pair>.csv`` (embeddings, fastText, each layer; mapped or not)."""
    return hits_resamples(
        tables, "muse", FIGURE4_KEYS, FIGURE4_SCORES, replicates, seed, "word_alignment"
    )


def figure6_resamples(
    tables: Mapping[str, pd.DataFrame], replicates: int, seed: int
) -> pd.DataFrame:
    """Wu's Figure 6 (Tatoeba retrieval P@1, mapped and not) on resamples of each pair's Tatoeba
    sentences; both directions of a pair read the same sentences, so they share each draw."""
    return hits_resamples(
        tables, "tatoeba", FIGURE6_KEYS, FIGURE6_SCORES, replicates, seed, "sentence_retrieval"
    )


def figure7_resamples(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Wu's Figure 7 (``xling.report.wu_figures.figure7_grid``) on each resample of the parallel
    sentences, from the similarity jobs' resample tables (``replicate, encoder, layer, cka`` per
    pair, ``analysis/similarity/resamples/``): Figure 7's columns after a ``replicate`` column,
    its ``cka`` rows only (``measure`` is ``cka`` in every row, so that one filter reads Figure 7
    and its resamples alike; the length control among the encoders). No rows where a pair has
    none (``report.resamples: 0``)."""
    from xling.report.wu_figures import figure7_grid

    by_pair = {pair: split_replicates(table) for pair, table in tables.items()}
    counts = {pair: len(replicates) for pair, replicates in by_pair.items()}
    if not by_pair or min(counts.values()) == 0:
        return pd.DataFrame(columns=FIGURE7_COLUMNS)
    if len(set(counts.values())) > 1:
        raise ValueError(
            f"the pairs' CKA resamples differ in number ({counts}): rerun their similarity jobs "
            "with one report.resamples"
        )
    frames = [
        figure7_grid({pair: replicates[i] for pair, replicates in by_pair.items()}).assign(
            **{REPLICATE: i}
        )
        for i in range(next(iter(counts.values())))
    ]
    return _by_replicate(frames, [REPLICATE, *frames[0].columns.drop(REPLICATE)])


# then L0.. and AVER, as Figure 7's csv; its measure always `cka` (the resamples are the CKA's)
FIGURE7_COLUMNS = [REPLICATE, "pair", "measure", "encoder"]


def cka_retrieval_resamples(
    similarity: Mapping[str, pd.DataFrame],
    figure6: pd.DataFrame,
    similarity_resamples: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """The CKA-retrieval correlation (``xling.report.wu_figures.cka_retrieval_correlation``) of
    each resample of :func:`figure6_resamples` (the Tatoeba sentences) and, where given, of the
    CKA's own resamples of the parallel sentences (``similarity_resamples``, per pair as the
    similarity jobs write them; replicate i beside replicate i, independent draws of two sets);
    without them the CKA stays the run's."""
    from xling.report.wu_figures import cka_retrieval_correlation

    cka_replicates = {
        pair: split_replicates(table) for pair, table in (similarity_resamples or {}).items()
    }
    frames = []
    for replicate, rows in figure6.groupby(REPLICATE, sort=True):
        retrieval = {pair: table for pair, table in rows.groupby("pair", sort=False)}
        cka = {
            pair: cka_replicates[pair][replicate]
            if len(cka_replicates.get(pair, [])) > replicate
            else table
            for pair, table in similarity.items()
        }
        correlation = cka_retrieval_correlation(cka, retrieval)
        frames.append(correlation.assign(**{REPLICATE: replicate}))
    if not frames:
        return pd.DataFrame(columns=CKA_RETRIEVAL_COLUMNS)
    return pd.concat(frames, ignore_index=True)[CKA_RETRIEVAL_COLUMNS]


TRANSFER_COLUMNS = [REPLICATE, "kind", "pair", "task", "layer", "line", "lang", "mapped", "score"]


def transfer_resamples(
    tables: Mapping[tuple[str, str, str], pd.DataFrame], replicates: int, seed: int
) -> pd.DataFrame:
    """The contextual transfer sweeps behind Wu's Figures 5 and 8 on resamples of their test sets.

    ``tables`` maps (kind, pair, task) to a sweep's table (``xling.analysis.transfer_sweep``),
    whose ``test_items`` column holds each row's per-sentence counts. Every row that reads one test
    set (a task and a language: the English test of every sweep of a task, a target's test in
    every layer and kind) shares each draw. Returns :func:`xling.report.wu_figures.transfer_table`'s
    rows per replicate (``TRANSFER_COLUMNS``), ``score`` rescored from the drawn sentences.
    """
    from xling.contracts.items import parse_items_string
    from xling.report.wu_figures import transfer_table

    if replicates < 1:
        raise ValueError(f"report.resamples must be at least 1 to resample, got {replicates}")
    data = transfer_table(tables)
    if "test_items" not in data:
        raise ValueError(
            "the contextual transfer tables have no test_items column: they were written before "
            "the per-sentence counts were kept; rerun them (snakemake --forcerun "
            "contextual_transfer)"
        )
    draws: dict[tuple[str, str], np.ndarray] = {}
    frames = []
    for _, row in data.iterrows():
        where = f"{row['kind']} {row['pair']} {row['task']} transfer, layer {row['layer']}"
        items = parse_items_string(row["test_items"], f"{where} ({row['line']})")
        test_set = (str(row["task"]), str(row["lang"]))
        fix = "rerun the older sweep (snakemake --forcerun contextual_transfer)"
        drawn = _shared_draws(draws, seed, test_set, replicates, len(items), where, fix)
        frame = pd.DataFrame({REPLICATE: np.arange(replicates)})
        for column in TRANSFER_COLUMNS[1:-1]:
            frame[column] = row[column]
        frame["score"] = resampled_scores([items], drawn)
        frames.append(frame)
    return _by_replicate(frames, TRANSFER_COLUMNS)


def muller_score_resamples(
    selected: Sequence[tuple[Mapping, dict]],
    evaluations: Mapping[str, Mapping[str, str]],
    replicates: int,
    seed: int,
) -> pd.DataFrame:
    """Muller et al.'s ``scores.csv`` on ``replicates`` resamples of the test sets.

    ``selected`` and ``evaluations`` are what ``xling.muller.collect.score_rows`` takes: the
    selected run of every (experiment, task, source, group, seed), whose folder holds its
    ``test_items.json``. Test rows are rescored from the drawn sentences, the same draw for every
    run that reads one test set (one experiment, task and evaluation name; the claims compare
    runs within an experiment, and an evaluation name may stand for other files in the two);
    dev rows, which choose the grid point, stay as they are. Returns ``scores.csv``'s columns
    with ``replicate`` first.
    """
    from xling.muller.collect import SCORE_COLUMNS, score_rows

    if replicates < 1:
        raise ValueError(f"report.resamples must be at least 1 to resample, got {replicates}")
    columns = [REPLICATE, *SCORE_COLUMNS]
    keys = ("experiment", "task", "source", "group", "seed")
    counts = {
        tuple(run[k] for k in keys): read_test_items(Path(run["dir"]) / TEST_ITEMS)
        for run, _ in selected
    }
    draws: dict[tuple[str, str], np.ndarray] = {}
    frames = []
    for row in score_rows(selected, evaluations):
        frame = pd.DataFrame({REPLICATE: np.arange(replicates)}).assign(**row)
        if row["split"] == "test":
            items = counts[tuple(row[k] for k in keys)][row["evaluation"]]
            test_set = (f"muller {row['experiment']} {row['task']}", str(row["evaluation"]))
            where = f"Muller {row['experiment']} run, group {row['group']}, seed {row['seed']}"
            fix = "rerun the older runs' jobs"
            drawn = _shared_draws(draws, seed, test_set, replicates, len(items), where, fix)
            frame["score"] = resampled_scores([items], drawn)
        frames.append(frame)
    return _by_replicate(frames, columns)


def resamples_or_header(
    replicates: int, stale: Sequence[str], columns: Sequence[str], compute
) -> pd.DataFrame:
    """``compute()`` (a resample frame) where ``report.resamples`` is on and no input is in
    ``stale`` (written before its per-item counts were kept); else a frame of ``columns`` and no
    rows, from which the claims check falls back to the run's numbers alone."""
    if replicates and not stale:
        return compute()
    if stale:
        print(f"no resamples: {', '.join(stale)} predate the per-item counts (rerun their jobs)")
    return pd.DataFrame(columns=list(columns))


def missing_column(tables: Mapping[str, pd.DataFrame], column: str) -> list[str]:
    """The inputs (path -> table) without ``column``: written before their per-item counts were
    kept, so :func:`resamples_or_header` writes no resamples for them."""
    return [path for path, table in tables.items() if column not in table]


def cell_runs(
    selected_paths: Sequence[str | Path], cells: Sequence[Mapping[str, str]]
) -> list[list[ItemCounts]] | None:
    """Per cell, the target's per-example counts of each grid point averaged in it: the runs
    ``selected.json`` names, each in its folder beside it. None where a run has no
    ``test_items.json`` (fine-tuned before runs kept them): the claims check then compares the
    point estimates only, rather than making a study refit every grid point."""
    runs = []
    for path, cell in zip(selected_paths, cells, strict=True):
        path = Path(path)
        selected = json.loads(path.read_text(encoding="utf-8"))
        items = []
        for hp in selected["best_hp_ids"]:
            counts = path.parent / hp / TEST_ITEMS
            if not counts.is_file():
                return None
            by_lang = read_test_items(counts)
            if cell["target"] not in by_lang:
                raise ValueError(
                    f"{counts}: no {cell['target']} test counts; rerun the run's fine-tuning job"
                )
            items.append(by_lang[cell["target"]])
        runs.append(items)
    return runs
