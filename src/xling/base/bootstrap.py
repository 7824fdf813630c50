"""Bootstrap resamples shared by every stage that resamples: the draws of a test set (a function
of the seed and the set's name alone) and the resample files (a ``replicate`` column, then the
rescored columns), written atomically."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from xling.base.atomic import atomic_open

REPLICATE = "replicate"


def bootstrap_draws(seed: int, test_set: tuple[str, str], replicates: int, size: int) -> np.ndarray:
    """The resamples of one test set (a row of example indices each): a function of the seed and
    the test set alone, so adding a row, a pair or a task to the study leaves every other test
    set's draws as they were."""
    stream = zlib.crc32(" ".join(test_set).encode("utf-8"))
    return np.random.default_rng([seed, stream]).integers(0, size, size=(replicates, size))


def write_resamples(path: str | Path, frame: pd.DataFrame) -> None:
    """A resample file, written atomically (a killed job never leaves half of one)."""
    with atomic_open(path) as out:
        frame.to_csv(out, index=False)
    print(f"{path}: {len(frame)} rows")


def split_replicates(frame: pd.DataFrame) -> list[pd.DataFrame]:
    """One frame per replicate, without the replicate column, in replicate order."""
    if frame is None or REPLICATE not in frame or frame.empty:
        return []
    return [
        rows.drop(columns=REPLICATE).reset_index(drop=True)
        for _, rows in frame.groupby(REPLICATE, sort=True)
    ]
