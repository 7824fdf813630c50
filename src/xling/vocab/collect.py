"""Collecting the pieces of training corpora, and laying out the final vocabulary.

While the training corpora are encoded, each new piece gets a provisional id (in order of
appearance), the ids go to a scratch file and their counts are kept. Once every language is
done, the vocabulary order is fixed: the five special tokens, then the other tokens grouped by
the set of languages that may emit them (larger sets first, then in language order) and by
decreasing training frequency within a group (ties by string). The scratch ids are then
rewritten with a lookup table, so every training corpus is segmented only once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from xling.base.fileio import iter_text
from xling.vocab.binarize import CachedWordIds, encode_lines
from xling.vocab.tokenizer import EOS_ID, SPECIAL_TOKENS


class PieceCollector:
    """Assigns provisional ids to pieces while corpora are encoded, then lays out the vocabulary."""

    def __init__(self) -> None:
        self.pieces: list[str] = list(SPECIAL_TOKENS)
        self._index = {piece: index for index, piece in enumerate(self.pieces)}
        self._members: dict[int, set[str]] = {}

    def _id(self, piece: str) -> int:
        index = self._index.get(piece)
        if index is None:
            index = self._index[piece] = len(self.pieces)
            self.pieces.append(piece)
        return index

    def encode(
        self,
        path: Path,
        segment_new_words: Callable[[Sequence[str]], list[tuple[str, ...]]],
        prefix: str,
        ids_path: Path,
    ) -> np.ndarray:
        """Encode a training corpus to provisional ids in ``ids_path``; return its id counts."""
        word_ids = CachedWordIds(segment_new_words, lambda piece: self._id(prefix + piece))
        counts = np.zeros(0, dtype=np.int64)
        with open(ids_path, "wb") as handle:
            for array in encode_lines(iter_text([path]), word_ids, EOS_ID):
                array.tofile(handle)
                chunk = np.bincount(array)
                if chunk.size > counts.size:
                    counts = np.pad(counts, (0, chunk.size - counts.size))
                counts[: chunk.size] += chunk
        return counts

    def mark(self, lang: str, pieces: Iterable[str]) -> None:
        """Record that ``lang`` may emit ``pieces`` (even if its training corpus never did)."""
        for piece in pieces:
            self._members.setdefault(self._id(piece), set()).add(lang)

    def layout(
        self, languages: Sequence[str], train_counts: Mapping[str, np.ndarray]
    ) -> tuple[list[int], dict[str, list[tuple[int, int]]]]:
        """Final order of provisional ids, and each language's ``[start, end)`` id ranges.

        Non-special tokens are grouped by the set of languages that may emit them (larger sets
        first, then in language order), and sorted by training frequency within a group.
        """
        size = len(self.pieces)
        total = np.zeros(size, dtype=np.int64)
        for lang, counts in train_counts.items():
            total[: counts.size] += counts
            for index in np.flatnonzero(counts).tolist():
                self._members.setdefault(index, set()).add(lang)
        position = {lang: index for index, lang in enumerate(languages)}

        special = len(SPECIAL_TOKENS)
        group = {
            index: tuple(sorted(position[lang] for lang in self._members[index]))
            for index in range(special, size)
        }
        ordinary = sorted(
            range(special, size),
            key=lambda i: (-len(group[i]), group[i], -int(total[i]), self.pieces[i]),
        )
        ranges: dict[str, list[tuple[int, int]]] = {lang: [] for lang in languages}
        start = special
        for end in range(special + 1, size + 1):
            if end == size or group[ordinary[end - special]] != group[ordinary[start - special]]:
                for member in group[ordinary[start - special]]:
                    ranges[languages[member]].append((start, end))
                start = end
        return [*range(special), *ordinary], ranges
