"""Word alignments in the Pharaoh format: a line per sentence pair, ``i-j`` links separated by one
space, ``i`` and ``j`` 0-based word indices into the source and target words lines. A line may be
empty (a pair without links)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from xling.base.errors import DataFormatError
from xling.base.fileio import iter_lines

Link = tuple[int, int]
_LINK = re.compile(r"([0-9]+)-([0-9]+)")


def format_alignment(links: Iterable[Link]) -> str:
    """One sentence pair's links as one line."""
    return " ".join(f"{i}-{j}" for i, j in links) + "\n"


def read_alignments(path: str | Path) -> list[list[Link]]:
    """The links of every line, in file order (a final line end adds no sentence pair).

    Raises:
        DataFormatError: a link that is not ``i-j`` with non-negative integers (file and line).
    """
    alignments = []
    for number, line in iter_lines(path):
        links = []
        for link in line.split():
            match = _LINK.fullmatch(link)
            if match is None:
                raise DataFormatError(
                    path,
                    number,
                    f"{link!r} is not a word link",
                    "write 0-based 'source-target' index pairs such as 0-1, separated by spaces",
                )
            links.append((int(match[1]), int(match[2])))
        alignments.append(links)
    return alignments
