"""Word vectors of Wu, Conneau et al. (2020), section 5.1.1, computed once per language and stored.

Contextual word vectors are the expensive part (N sentences through the model); they are written
to one ``.npz`` per language (``words``: the word types, most frequent first; ``layers``: float32,
layers x words x dim) that every pair's word-alignment job reads.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np

from xling.base.atomic import atomic_open
from xling.base.errors import InputFileError
from xling.base.fileio import StrPath, file_stamp, iter_lines


def corpus_sentences(path: StrPath, limit: int, seed: int) -> Iterator[list[str]]:
    """``limit`` non-empty lines of a tokenized corpus drawn uniformly without replacement (every
    line when it has no more), as word lists in corpus order.

    A draw, not the first lines: a Wikipedia corpus is in the dump's page order (its first 500k
    lines, Wu §5.1.1's count, would be the oldest articles' topics). Two passes: count, then read
    the drawn lines; memory: one flag a line.
    """
    total = _nonempty_lines(str(path), tuple(file_stamp(path)))
    if total > limit:
        drawn = np.random.default_rng(seed).choice(total, size=limit, replace=False)
        wanted = np.zeros(total, dtype=bool)
        wanted[drawn] = True
    index = 0
    for _, line in iter_lines(path):
        words = line.split()
        if not words:
            continue
        if total <= limit or wanted[index]:
            yield words
        index += 1


@functools.lru_cache(maxsize=8)
def _nonempty_lines(path: str, stamp: tuple) -> int:
    """Non-empty lines of a corpus, counted once per file version (``stamp``): a job draws the
    same sentences twice, for the vocabulary and for the vectors, from a corpus of up to GBs."""
    return sum(1 for _, line in iter_lines(path) if line.split())


def frequent_words(path: StrPath, sentences: int, limit: int, seed: int) -> list[str]:
    """The ``limit`` most frequent word types of the ``sentences`` sentences that
    :func:`corpus_sentences` draws with ``seed`` (ties: alphabetical), the vocabulary that
    contextual vectors are kept for (Wu §5.1.1: 200k)."""
    drawn = corpus_sentences(path, sentences, seed)
    counts = Counter(word for words in drawn for word in words)
    if not counts:
        raise InputFileError(path, "no word in the corpus", fix="check the preprocess stage")
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [word for word, _ in ranked[:limit]]


def save_word_vectors(path: StrPath, words: Sequence[str], layers: Sequence[np.ndarray]) -> None:
    """One ``.npz`` (atomically): ``words`` and a float32 (layers x words x dim) array."""
    stacked = np.stack([np.asarray(layer, dtype=np.float32) for layer in layers])
    with atomic_open(path, "wb", encoding=None) as handle:
        np.savez(handle, words=np.array(list(words), dtype=str), layers=stacked)


def load_word_vectors(path: StrPath) -> tuple[list[str], np.ndarray]:
    """``(words, layers)`` as :func:`save_word_vectors` wrote them."""
    with np.load(path, allow_pickle=False) as data:
        return [str(word) for word in data["words"]], data["layers"]
