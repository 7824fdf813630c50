"""fastText word vectors, the baseline of the word-alignment analysis (Wu §5.1.1: "we use the
first 200k embeddings of fastText").

The ``.vec`` text format: a header line ``count dim``, then one word a line, ``word v1 .. vdim``
separated by single spaces (fastText ends each line with a space too), most frequent words first.
The paper study reads the published vectors; the demo study trains its own on its corpus.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xling.atomic import atomic_open
from xling.errors import DataFormatError, InputFileError
from xling.fileio import StrPath, iter_lines

# fastText's dictionary counts every line end as this word; it is not a word of the text.
FASTTEXT_LINE_END = "</s>"
_LINE_FIX = "each line after the header is a word without spaces and then its {dim} numbers"


def read_vec(path: StrPath, limit: int | None = 200_000) -> tuple[list[str], np.ndarray]:
    """The first ``limit`` words of a ``.vec`` file (all when None) and their float32 vectors.

    Raises:
        InputFileError: a missing file, or one that ends before the header's count (or ``limit``).
        DataFormatError: a wrong header, a line with a wrong number of values or a non-number.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be at least 0, got {limit}")
    if not Path(path).is_file():
        raise InputFileError(path, "no such file", fix="download or train the fastText vectors")
    lines = iter_lines(path)
    count, dim = _read_header(path, next(lines, (1, "")))
    wanted = count if limit is None else min(count, limit)
    words: list[str] = []
    matrix = np.empty((wanted, dim), dtype=np.float32)
    for row, (number, text) in zip(range(wanted), lines, strict=False):
        word, *values = text.rstrip().split(" ")
        if not word or len(values) != dim:
            reason = "an empty word" if not word else f"{len(values)} values instead of {dim}"
            raise DataFormatError(path, number, reason, _LINE_FIX.format(dim=dim))
        try:
            matrix[row] = np.asarray(values, dtype=np.float32)
        except ValueError:
            bad = next(v for v in values if not _is_float(v))
            raise DataFormatError(
                path, number, f"{bad!r} is not a number", _LINE_FIX.format(dim=dim)
            ) from None
        if not np.isfinite(matrix[row]).all():
            raise DataFormatError(path, number, "a value is not finite", "regenerate the file")
        words.append(word)
    if len(words) < wanted:
        raise InputFileError(
            path,
            f"the header announces {count} words but the file has {len(words)}",
            fix="the file is truncated: download or train it again",
        )
    return words, matrix


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


def train_fasttext(
    corpus_path: StrPath,
    out_vec_path: StrPath,
    *,
    dim: int,
    epochs: int,
    min_count: int,
    seed: int,
    threads: int,
    max_words: int,
) -> int:
    """Train skipgram vectors on a tokenized corpus (one sentence a line) and write the
    ``max_words`` most frequent words to ``out_vec_path`` in the ``.vec`` format, atomically.

    Other hyperparameters are fastText's defaults (those of ``fasttext skipgram``: window 5, 5
    negatives, character n-grams of 3-6). A word's vector is fastText's word vector (its own row
    plus its n-grams, as fastText's ``.vec`` output has it); fastText's line-end token ``</s>``
    is left out. Values are written with 9 significant digits, so they read back exactly.

    Reproducibility: ``seed`` fixes the initialisation and each thread's sampling. With
    ``threads=1`` a run is bit-identical to another on the same build; with more threads the
    lock-free (Hogwild) updates interleave differently from run to run, so the vectors differ
    (not their quality).

    Returns:
        The number of words written.
    """
    import fasttext  # only the rules that train vectors need the package
    import fasttext_pybind

    # fasttext 0.9.3's train_unsupervised() does not accept `seed` (its C++ arguments do), so the
    # arguments are set here and training is called as train_unsupervised() calls it.
    args = fasttext_pybind.args()
    args.input = str(corpus_path)
    args.output = ""
    args.saveOutput = False
    args.model = fasttext_pybind.model_name.skipgram
    args.dim, args.epoch, args.minCount = dim, epochs, min_count
    args.seed, args.thread, args.verbose = seed, threads, 0
    model = fasttext.FastText._FastText(args=args)
    try:
        fasttext_pybind.train(model.f, args)
    except ValueError as error:  # "Empty vocabulary...", "... cannot be opened for training!"
        raise InputFileError(
            corpus_path,
            f"fastText cannot train on it ({error})",
            fix="check that the corpus exists and has words seen at least min_count times",
        ) from None
    words = [w for w in model.get_words() if w != FASTTEXT_LINE_END]
    words = words[:max_words]
    with atomic_open(out_vec_path) as out:
        out.write(f"{len(words)} {dim}\n")
        for word in words:
            values = " ".join(f"{v:.9g}" for v in model.get_word_vector(word).tolist())
            out.write(f"{word} {values}\n")
    return len(words)
