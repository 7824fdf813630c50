"""fastText word vectors, the baseline of the word-alignment analysis (Wu §5.1.1: "we use the
first 200k embeddings of fastText").

The ``.vec`` text format: a header line ``count dim``, then one word a line, ``word v1 .. vdim``
separated by single spaces (fastText ends each line with a space too), most frequent words first.
The paper study reads the published vectors; the demo study trains its own on its corpus.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xling.base.atomic import atomic_open
from xling.base.errors import DataFormatError, InputFileError
from xling.base.fileio import StrPath, decode_line, raw_lines

# fastText's dictionary counts every line end as this word; it is not a word of the text.
FASTTEXT_LINE_END = "</s>"
_LINE_FIX = "each line after the header is a word without spaces and then its {dim} numbers"


def read_vec(path: StrPath, limit: int | None = 200_000) -> tuple[list[str], np.ndarray]:
    """The first ``limit`` words of a ``.vec`` file (all when None) and their float32 vectors.

    Raises:
        InputFileError: a missing file, or one that ends before the header's count (or ``limit``).
        DataFormatError: a wrong header, a line with a wrong number of values or a non-number.
    """
    words, matrix, _ = _parse_vec(path, limit, skip_malformed=False)
    return words, matrix


# The published vectors hold a few lines MUSE's reader skips; more than this share of the lines
# read (and more than the few lines) is no such file.
MAX_SKIPPED_SHARE, MAX_SKIPPED_FEW = 0.01, 10


def read_published_vec(path: StrPath, limit: int) -> tuple[list[str], np.ndarray, list[int]]:
    """The first ``limit`` well-formed words of a published ``.vec`` file, as MUSE reads them.

    MUSE's ``load_embeddings`` decodes with ``errors='ignore'`` and skips, with a warning, a line
    whose vector has the wrong dimension; the published files are known to have such lines (a word
    cut by a character the writer took for a separator). Stopping at the first of them would make
    the paper study unusable on the real files, so they are skipped here too, and their line
    numbers returned for the log. More than ``MAX_SKIPPED_SHARE`` of the lines read (and more than
    ``MAX_SKIPPED_FEW``) is not a published file with a few flaws but a wrong or damaged one, and
    stops with an error.
    """
    words, matrix, skipped = _parse_vec(path, limit, skip_malformed=True)
    read = len(words) + len(skipped)
    if skipped and (len(skipped) > max(MAX_SKIPPED_FEW, MAX_SKIPPED_SHARE * read) or not words):
        raise DataFormatError(
            path,
            skipped[0],
            f"{len(skipped)} of the first {read} lines are malformed (lines {_line_list(skipped)})",
            _LINE_FIX.format(dim=matrix.shape[1]) + "; download the file again",
        )
    return words, matrix, skipped


def _line_list(numbers: list[int], shown: int = 5) -> str:
    more = f" and {len(numbers) - shown} more" if len(numbers) > shown else ""
    return ", ".join(map(str, numbers[:shown])) + more


def _parse_vec(
    path: StrPath, limit: int | None, *, skip_malformed: bool
) -> tuple[list[str], np.ndarray, list[int]]:
    """Words, vectors and the line numbers skipped (only with ``skip_malformed``)."""
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be at least 0, got {limit}")
    if not Path(path).is_file():
        raise InputFileError(path, "no such file", fix="download or train the fastText vectors")
    with open(path, "rb") as handle:
        lines = raw_lines(handle)
        number, raw = next(lines, (1, b""))
        count, dim = _read_header(path, (number, decode_line(raw, path, number)))
        wanted = count if limit is None else min(count, limit)
        words: list[str] = []
        skipped: list[int] = []
        matrix = np.empty((wanted, dim), dtype=np.float32)
        lines_read = 0
        for number, raw in lines:
            if lines_read == count:
                if raw.strip():
                    raise InputFileError(
                        path,
                        f"line {number} follows the {count} words its header announces",
                        fix="the header's count is wrong: download or train the file again",
                    )
                break
            if len(words) == wanted:
                break
            lines_read += 1
            try:
                words.append(_parse_line(path, number, raw, dim, matrix[len(words)]))
            except (DataFormatError, InputFileError):
                if not skip_malformed:
                    raise
                skipped.append(number)
        if len(words) < wanted and lines_read < count:
            raise InputFileError(
                path,
                f"the header announces {count} words but the file has {lines_read}"
                + (f", {len(skipped)} of them malformed" if skipped else ""),
                fix="the file is truncated: download or train it again",
            )
        return words, matrix[: len(words)], skipped


def _parse_line(path: StrPath, number: int, raw: bytes, dim: int, row: np.ndarray) -> str:
    """The line's word; its values are written into ``row``."""
    word, *values = decode_line(raw, path, number).rstrip().split(" ")
    if not word or len(values) != dim:
        reason = "an empty word" if not word else f"{len(values)} values instead of {dim}"
        raise DataFormatError(path, number, reason, _LINE_FIX.format(dim=dim))
    try:
        row[:] = np.asarray(values, dtype=np.float32)
    except ValueError:
        bad = next(v for v in values if not _is_float(v))
        raise DataFormatError(
            path, number, f"{bad!r} is not a number", _LINE_FIX.format(dim=dim)
        ) from None
    if not np.isfinite(row).all():
        raise DataFormatError(path, number, "a value is not finite", "regenerate the file")
    return word


def _read_header(path: StrPath, first: tuple[int, str]) -> tuple[int, int]:
    number, text = first
    fields = text.split()
    if len(fields) == 2 and all(field.isdigit() for field in fields) and int(fields[1]) > 0:
        return int(fields[0]), int(fields[1])
    raise DataFormatError(
        path,
        number,
        f"the header {text[:60]!r} is not `count dim`",
        "a .vec file starts with the number of words and the dimension (e.g. `200000 300`); "
        "a file without that line is a GloVe-style text file: add it",
    )


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def write_vec(path: StrPath, words: list[str], matrix: np.ndarray) -> None:
    """The ``.vec`` format, atomically; 9 significant digits: float32 values read back exactly."""
    with atomic_open(path) as out:
        out.write(f"{len(words)} {matrix.shape[1]}\n")
        for word, row in zip(words, matrix, strict=True):
            out.write(f"{word} {' '.join(f'{v:.9g}' for v in row.tolist())}\n")


def keep_first_words(in_path: StrPath, out_path: StrPath, limit: int) -> tuple[int, list[int]]:
    """The first ``limit`` words of a published ``.vec`` file (fastText sorts by frequency), read as
    :func:`read_published_vec` reads them; returns how many were kept and the lines skipped.

    fastText's line-end token ``</s>`` (among the first rows of the published vectors) is left
    out, as the demo's own training leaves it out: it is no word of the text and would take one
    of the ``limit`` places."""
    words, matrix, skipped = read_published_vec(in_path, limit=limit + 1)
    rows = [row for row, word in enumerate(words) if word != FASTTEXT_LINE_END][:limit]
    write_vec(out_path, [words[row] for row in rows], matrix[rows])
    return len(rows), skipped
