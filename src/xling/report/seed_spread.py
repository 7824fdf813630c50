"""How far apart Table 1's rows lie against the spread of several runs (e.g. the demo's seeds).

``python -m xling.report.seed_spread A/tables/table1.csv B/tables/table1.csv`` prints, for each
score column of Table 1 (``XNLI fr`` ... ``Parsing Δ``), how many pairs of rows differ in their
mean over the runs by more than their combined spread, and the range of a row's spread. The rule
is the claims check's (:mod:`xling.report.claims`): a difference counts only when it exceeds the
standard deviation of the difference, the two rows' standard deviations over the runs (n - 1 in
the denominator) added in quadrature. With two seeds a row's spread is its two scores' distance
over sqrt(2).
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from xling.report.compare import ours_columns
from xling.report.table1 import KEY


@dataclass(frozen=True)
class ColumnSpread:
    column: str
    apart: int  # pairs of rows whose means differ by more than their combined spread
    pairs: int  # pairs of rows with a score in every run
    spread_low: float  # smallest and largest standard deviation of a row over the runs
    spread_high: float


def read_table1(path: str | Path) -> pd.DataFrame:
    """One run's Table 1 csv, indexed by variant; errors name the file and the fix."""
    path = Path(path)
    try:
        frame = pd.read_csv(path)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path}: no such file; run the study's table1 target first"
        ) from None
    if KEY not in frame.columns or not ours_columns(frame):
        raise ValueError(
            f"{path}: not a Table 1 csv written by xling.report.table1 (needs a {KEY!r} column "
            "and score columns such as 'XNLI fr')"
        )
    return frame.set_index(KEY)


def spreads(runs: Sequence[pd.DataFrame]) -> list[ColumnSpread]:
    """Per score column, how many pairs of rows lie apart beyond their spread over ``runs``."""
    if len(runs) < 2:
        raise ValueError("a spread needs at least two runs")
    rows = list(runs[0].index)
    result = []
    for column in ours_columns(runs[0]):
        scores = pd.concat([run[column] for run in runs], axis=1).dropna()
        mean, deviation = scores.mean(axis=1), scores.std(axis=1, ddof=1)
        kept = [row for row in rows if row in scores.index]
        apart = sum(
            abs(mean[a] - mean[b]) > math.hypot(deviation[a], deviation[b])
            for a, b in itertools.combinations(kept, 2)
        )
        pairs = len(kept) * (len(kept) - 1) // 2
        low, high = (deviation.min(), deviation.max()) if kept else (math.nan, math.nan)
        result.append(ColumnSpread(column, int(apart), pairs, float(low), float(high)))
    return result


def _same_rows(frames: Sequence[pd.DataFrame], paths: Sequence[str]) -> None:
    first = list(frames[0].index)
    for frame, path in zip(frames[1:], paths[1:], strict=True):
        if list(frame.index) != first:
            raise ValueError(
                f"{path}: its rows ({', '.join(map(str, frame.index))}) are not those of "
                f"{paths[0]} ({', '.join(map(str, first))}); compare runs of one config"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", help="tables/table1.csv of each run (two or more)")
    args = parser.parse_args(argv)
    if len(args.tables) < 2:
        parser.error("give the table1.csv of at least two runs")
    frames = [read_table1(path) for path in args.tables]
    _same_rows(frames, args.tables)
    for item in spreads(frames):
        print(
            f"{item.column}: {item.apart} of {item.pairs} pairs of rows apart beyond their spread"
            f" (a row's spread {item.spread_low:.1f} to {item.spread_high:.1f} points)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
