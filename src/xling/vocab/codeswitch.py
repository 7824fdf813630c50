"""Code-switched training text: extra anchors from a bilingual dictionary (Wu, Conneau et al. 4.2).

The paper's rule: each training word found in the dictionary is left as it is 70% of the time
and replaced by one of its translations 30% of the time, changing at most 15% of the words of a
batch; translations are drawn in proportion to their quality weight.

Here the corpus is code-switched once, before BPE, and a "batch" is a block of consecutive
training sentences holding at least ``batch_words`` words (the last block may be smaller). In
each block every dictionary word is selected with probability ``replace_prob``; if more than
``floor(max_changed_share * words in block)`` are selected, a uniform random subset of that size
is kept, so the cap never favours the start of a block. A selected word is replaced by a
translation drawn with probability proportional to its weight (MUSE has no weights: uniform).

Dictionary lookup is exact first, then lowercased (MUSE dictionaries are lowercase). A
translation equal to the word itself is ignored (it would change nothing yet use the budget).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from xling.base.atomic import atomic_open
from xling.base.errors import SettingsError
from xling.base.fileio import StrPath, iter_lines
from xling.contracts.muse import read_muse


class BilingualDictionary:
    """Word -> weighted translations, read from a MUSE-format file."""

    def __init__(self, entries: Mapping[str, Mapping[str, float]]) -> None:
        self._entries: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
        for word, translations in entries.items():
            if translations:
                weights = np.cumsum(np.array(list(translations.values()), dtype=np.float64))
                self._entries[word] = (tuple(translations), weights)

    @classmethod
    def load(cls, path: StrPath, *, reverse: bool = False) -> BilingualDictionary:
        """Read a MUSE dictionary (:func:`xling.contracts.muse.read_muse`); ``reverse=True``
        maps target -> source.

        Raises:
            InputFileError: a line that does not parse, a weight that is not a positive number,
                or no usable entry in the file.
        """
        return cls(read_muse(path, reverse=reverse))

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, word: str) -> tuple[tuple[str, ...], np.ndarray] | None:
        """``(translations, cumulative weights)`` of ``word`` (or of its lowercase), or None."""
        entry = self._entries.get(word)
        if entry is None:
            entry = self._entries.get(word.lower())
        return entry


@dataclasses.dataclass(frozen=True)
class CodeSwitchSettings:
    """How the ``codeswitch`` scheme builds its training text.

    Attributes:
        dictionaries: direction ``"{src}-{tgt}"`` -> dictionary file whose first column is in
            ``src``. A language whose own direction is missing uses the opposite direction's
            file reversed; a language with neither is not code-switched.
        batch_words: words per block over which the share cap applies (see module docstring).
        replace_prob: probability of replacing a dictionary word (paper: 0.3).
        max_changed_share: at most this share of a block's words change (paper: 0.15).
    """

    dictionaries: Mapping[str, StrPath]
    batch_words: int
    replace_prob: float = 0.3
    max_changed_share: float = 0.15

    def __post_init__(self) -> None:
        if not self.dictionaries:
            raise SettingsError("the codeswitch scheme needs at least one dictionary file")
        if self.batch_words < 1:
            raise SettingsError(f"codeswitch batch_words must be >= 1, not {self.batch_words}")
        for name in ("replace_prob", "max_changed_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise SettingsError(f"codeswitch {name} must be within [0, 1]")

    def dictionary_for(self, lang: str, languages: Sequence[str]) -> BilingualDictionary | None:
        """The dictionary that translates ``lang``'s words into the other language, if any."""
        for other in languages:
            if other == lang:
                continue
            if f"{lang}-{other}" in self.dictionaries:
                return BilingualDictionary.load(self.dictionaries[f"{lang}-{other}"])
            if f"{other}-{lang}" in self.dictionaries:
                return BilingualDictionary.load(self.dictionaries[f"{other}-{lang}"], reverse=True)
        return None


@dataclasses.dataclass(frozen=True)
class CodeSwitchStats:
    """What code-switching did to one corpus."""

    words: int
    dictionary_words: int
    replaced: int
    batches: int
    max_batch_share: float

    def to_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


def codeswitch_file(
    in_path: StrPath,
    out_path: StrPath,
    dictionary: BilingualDictionary,
    *,
    replace_prob: float,
    max_changed_share: float,
    batch_words: int,
    seed: int,
) -> CodeSwitchStats:
    """Write a code-switched copy of a tokenized corpus (line-aligned, atomic, streaming)."""
    rng = np.random.default_rng(seed)
    totals = {"words": 0, "dictionary_words": 0, "replaced": 0, "batches": 0}
    max_share = 0.0
    block: list[list[str]] = []
    block_words = 0
    with atomic_open(out_path) as out:

        def flush() -> None:
            nonlocal max_share
            counts = _switch_block(block, dictionary, rng, replace_prob, max_changed_share)
            for key, value in zip(("words", "dictionary_words", "replaced"), counts, strict=True):
                totals[key] += value
            totals["batches"] += 1
            if counts[0]:
                max_share = max(max_share, counts[2] / counts[0])
            out.writelines(" ".join(words) + "\n" for words in block)

        for _, text in iter_lines(in_path):
            words = text.split()
            block.append(words)
            block_words += len(words)
            if block_words >= batch_words:
                flush()
                block, block_words = [], 0
        if block:
            flush()
    return CodeSwitchStats(**totals, max_batch_share=max_share)


def _switch_block(
    block: list[list[str]],
    dictionary: BilingualDictionary,
    rng: np.random.Generator,
    replace_prob: float,
    max_changed_share: float,
) -> tuple[int, int, int]:
    """Replace words of one block in place; return (words, dictionary words, replaced)."""
    candidates = []
    n_words = 0
    for line_index, words in enumerate(block):
        n_words += len(words)
        for word_index, word in enumerate(words):
            entry = dictionary.lookup(word)
            if entry is not None:
                candidates.append((line_index, word_index, entry))
    selected = np.flatnonzero(rng.random(len(candidates)) < replace_prob)
    cap = math.floor(max_changed_share * n_words)
    if selected.size > cap:
        selected = np.sort(rng.choice(selected, size=cap, replace=False))
    draws = rng.random(selected.size)
    for candidate, draw in zip(selected.tolist(), draws.tolist(), strict=True):
        line_index, word_index, (translations, cumulative) = candidates[candidate]
        choice = int(np.searchsorted(cumulative, draw * cumulative[-1], side="right"))
        block[line_index][word_index] = translations[min(choice, len(translations) - 1)]
    return n_words, len(candidates), int(selected.size)
