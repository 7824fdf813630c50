"""BPE merges in subword-nmt's codes format, and the subword pieces that merges can emit.

A codes file is the header ``#version: 0.2`` and then one merge a line, ``left right``, in merge
order; the end of a word is marked by ``</w>`` on its last symbol (``e r</w>``). Pieces are
written as subword-nmt writes them: a piece that does not end its word carries ``@@``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xling.base.atomic import atomic_open
from xling.base.errors import InputFileError
from xling.base.fileio import StrPath, iter_lines

CODES_HEADER = "#version: 0.2"
END_OF_WORD = "</w>"
SEPARATOR = "@@"

Merge = tuple[str, str]


def write_codes(path: StrPath, merges: Sequence[Merge]) -> None:
    """Write ``merges`` as a subword-nmt (0.2) codes file, atomically."""
    for index, (left, right) in enumerate(merges):
        if not left or not right or any(part.split() != [part] for part in (left, right)):
            raise ValueError(f"merge {index} ({left!r}, {right!r}) is empty or has whitespace")
    with atomic_open(path) as out:
        out.write(CODES_HEADER + "\n")
        for left, right in merges:
            out.write(f"{left} {right}\n")


def read_codes(path: StrPath) -> list[Merge]:
    """Read a subword-nmt codes file (version 0.2) into a list of merges, in file order.

    Raises:
        InputFileError: no ``#version: 0.2`` header, or a line that is not two symbols.
    """
    merges: list[Merge] = []
    header_seen = False
    for number, text in iter_lines(path):
        if number == 1:
            header_seen = True
            if text.strip() != CODES_HEADER:
                raise InputFileError(
                    path,
                    f"expected the header {CODES_HEADER!r}, found {text[:40]!r}",
                    line=1,
                    fix="learn the codes with subword-nmt >= 0.3 or with xling.vocab.learn_bpe",
                )
            continue
        parts = text.strip("\r\n ").split(" ")
        if len(parts) != 2 or not all(parts):
            raise InputFileError(
                path,
                f"a merge line must be two symbols separated by one space, found {text[:80]!r}",
                line=number,
                fix="regenerate the codes file; it was truncated or edited",
            )
        merges.append((parts[0], parts[1]))
    if not header_seen:
        raise InputFileError(path, "empty codes file", fix="regenerate the codes file")
    return merges


def unique_merges(merges: Iterable[Merge]) -> list[Merge]:
    """Merges without repeats, keeping the first (subword-nmt ranks a repeat by its first line)."""
    return list(dict.fromkeys(merges))


def emittable_pieces(merges: Iterable[Merge], alphabet: Iterable[str]) -> set[str]:
    """Every piece that BPE with ``merges`` can output for words over ``alphabet``.

    A character may end up alone inside a word (``c@@``) or at its end (``c``); a merged symbol
    is either word-internal (``ab@@``) or word-final (``ab</w>`` -> ``ab``). Merged symbols with
    a character outside ``alphabet`` are left out.
    """
    chars = set(alphabet)
    pieces = {piece for char in chars for piece in (char, char + SEPARATOR)}
    for left, right in merges:
        symbol = left + right
        word_final = symbol.endswith(END_OF_WORD)
        text = symbol.removesuffix(END_OF_WORD)
        if set(text) <= chars:
            pieces.add(text if word_final else text + SEPARATOR)
    return pieces
