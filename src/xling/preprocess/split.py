"""Seeded train / valid / test split of a tokenized corpus.

Rule: empty lines are dropped; among the remaining ``n`` lines, ``valid_size + test_size``
distinct positions are drawn uniformly without replacement with ``numpy.random.default_rng(seed)``
(the first ``valid_size`` drawn go to valid, the rest to test); every other line goes to train.
Each output keeps the corpus order. The split therefore depends only on the corpus content and
the seed (not on how many shards produced the corpus), and two passes over the file with memory
proportional to ``valid_size + test_size`` suffice for corpora of tens of GB.

XLM shuffles the whole corpus and cuts the last lines off for valid and test; held-out lines are
drawn from the same distribution here, but train keeps its order, which avoids a random-access
shuffle of a file of tens of GB (pretraining samples stream positions at random anyway).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xling.base.atomic import atomic_open
from xling.base.errors import EmptyCorpusError, InputFileError
from xling.base.fileio import StrPath, iter_lines


@dataclasses.dataclass(frozen=True)
class SplitSizes:
    """Sentences written to each split."""

    train: int
    valid: int
    test: int


def _as_paths(in_paths: StrPath | Sequence[StrPath]) -> list[Path]:
    if isinstance(in_paths, str | Path) or not isinstance(in_paths, Sequence):
        return [Path(in_paths)]  # type: ignore[arg-type]
    return [Path(path) for path in in_paths]


def split_corpus(
    in_paths: StrPath | Sequence[StrPath],
    train_path: StrPath,
    valid_path: StrPath,
    test_path: StrPath,
    *,
    valid_size: int,
    test_size: int,
    seed: int,
) -> SplitSizes:
    """Split a tokenized corpus (one file, or several read in order as one) into three files.

    Args:
        in_paths: the corpus; a list of files (such as tokenized shards, in order) is read as
            their concatenation, which saves writing the gathered file.
        train_path, valid_path, test_path: outputs, written atomically.
        valid_size, test_size: sentences held out for valid and test.
        seed: the seed of the draw (see the module docstring for the exact rule).

    Raises:
        EmptyCorpusError: no non-empty line.
        InputFileError: fewer than ``valid_size + test_size + 1`` non-empty lines, or bad UTF-8.
    """
    paths = _as_paths(in_paths)
    if valid_size < 0 or test_size < 0:
        raise ValueError("valid_size and test_size must be >= 0")
    name = paths[0] if len(paths) == 1 else f"{paths[0]} (+{len(paths) - 1} more files)"
    n_lines = sum(1 for path in paths for _, text in iter_lines(path) if text.strip())
    if n_lines == 0:
        raise EmptyCorpusError(name)
    held_out = valid_size + test_size
    if n_lines <= held_out:
        raise InputFileError(
            name,
            f"has {n_lines} non-empty lines, but valid_size + test_size = {held_out} would leave"
            " no training sentence",
            fix="lower the valid and test sizes in the config, or use a larger corpus",
        )
    drawn = np.random.default_rng(seed).choice(n_lines, size=held_out, replace=False)
    valid_positions = set(drawn[:valid_size].tolist())
    test_positions = set(drawn[valid_size:].tolist())

    sizes = {"train": 0, "valid": 0, "test": 0}
    with (
        atomic_open(train_path) as train,
        atomic_open(valid_path) as valid,
        atomic_open(test_path) as test,
    ):
        position = 0
        for path in paths:
            for _, text in iter_lines(path):
                if not text.strip():
                    continue
                if position in valid_positions:
                    target, split = valid, "valid"
                elif position in test_positions:
                    target, split = test, "test"
                else:
                    target, split = train, "train"
                target.write(text)
                target.write("\n")
                sizes[split] += 1
                position += 1
    return SplitSizes(**sizes)
