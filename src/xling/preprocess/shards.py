"""Scatter / gather: cut a corpus into N line-balanced shards, and join shard outputs in order.

Each shard is tokenized by its own job; gathering the outputs in shard order rebuilds exactly the
file a single job would have written, so nothing downstream (in particular the seeded split)
depends on the number of shards.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Sequence

from xling.base.atomic import atomic_open
from xling.base.errors import EmptyCorpusError
from xling.base.fileio import StrPath, count_lines, decode_line


def shard_line_ranges(n_lines: int, n_shards: int) -> list[tuple[int, int]]:
    """``[start, end)`` line ranges of ``n_shards`` contiguous shards whose sizes differ by <= 1."""
    if n_shards < 1:
        raise ValueError(f"the number of shards must be at least 1, not {n_shards}")
    bounds = [n_lines * index // n_shards for index in range(n_shards + 1)]
    return list(itertools.pairwise(bounds))


def split_into_shards(in_path: StrPath, shard_paths: Sequence[StrPath]) -> list[int]:
    """Write the lines of ``in_path`` into ``len(shard_paths)`` shards, in order; return sizes.

    Shards are contiguous and balanced by line count (sizes differ by at most one line; a shard
    is empty when there are fewer lines than shards). Every line is checked to be UTF-8 here, so
    an error names the line of the original file rather than a line of a shard. Each shard is
    written atomically and ends with a newline.

    Raises:
        EmptyCorpusError: ``in_path`` has no line.
        InputFileError: a line is not valid UTF-8.
    """
    n_lines = count_lines(in_path)
    if n_lines == 0:
        raise EmptyCorpusError(in_path)
    ranges = shard_line_ranges(n_lines, len(shard_paths))
    sizes = []
    with open(in_path, "rb") as source:
        line_number = 0
        for shard_path, (start, end) in zip(shard_paths, ranges, strict=True):
            with atomic_open(shard_path, "wb") as shard:
                for _ in range(end - start):
                    raw = source.readline()
                    line_number += 1
                    body = raw.rstrip(b"\n")
                    decode_line(body, in_path, line_number)
                    shard.write(body + b"\n")
            sizes.append(end - start)
    return sizes


def concatenate_files(in_paths: Sequence[StrPath], out_path: StrPath) -> None:
    """Concatenate files in the given order into ``out_path`` (atomic).

    A file whose last line lacks its ``\\n`` gets one, so lines never merge across files.
    """
    with atomic_open(out_path, "wb") as out:
        for path in in_paths:
            with open(path, "rb") as source:
                shutil.copyfileobj(source, out, 1 << 22)
                if source.tell() > 0:
                    source.seek(-1, 2)
                    if source.read(1) != b"\n":
                        out.write(b"\n")
