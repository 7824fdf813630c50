"""Turning words and sentences into encoder input, and padding batches.

Layout follows XLM, whose pretrained models the paper fine-tuned: ``</s> tokens </s>`` for one
sentence and ``</s> premise </s> hypothesis </s>`` for a pair. XLM uses ``</s>`` as the sentence
start (``<s>`` is never seen in pretraining, docs/contracts.md section 3: every sentence is followed
by ``</s>``), so the boundary token has a trained embedding in every language, which matters when
language-specific embeddings are frozen. Position 0 is the "first token" of the XNLI head and the
ROOT of the parser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch


class Tokenizer(Protocol):
    """What fine-tuning needs from ``xling.vocab.SubwordTokenizer``."""

    pad_id: int
    unk_id: int
    eos_id: int

    def encode_words(self, words: list[str], lang: str) -> list[list[int]]: ...

    def encode_line(self, raw_line: str, lang: str) -> list[int]: ...


@dataclass(frozen=True)
class AlignedWords:
    """Subword ids of one sentence and where each word's first subword sits.

    ``first_subword[i]`` indexes ``input_ids`` for word ``i``; only the first ``len(first_subword)``
    words fit within the length limit (the others were cut).
    """

    input_ids: list[int]
    first_subword: list[int]

    @property
    def kept_words(self) -> int:
        return len(self.first_subword)


def align_first_subwords(
    word_pieces: Sequence[Sequence[int]], *, boundary_id: int, unk_id: int, max_length: int
) -> AlignedWords:
    """Concatenate per-word subword ids between two boundaries, keeping first-subword positions.

    A word without any subword becomes ``[unk_id]`` (so every later label keeps its word). The
    input holds at most ``max_length`` tokens, boundaries included: a word is kept while its first
    subword fits (only that one feeds the heads), its other subwords as far as they fit, and the
    words after the limit are cut.
    """
    if max_length < 3:
        raise ValueError(
            f"max_length must leave room for a word between two boundaries: {max_length}"
        )
    input_ids = [boundary_id]
    first_subword = []
    for pieces in word_pieces:
        room = max_length - 1 - len(input_ids)
        if room < 1:
            break
        first_subword.append(len(input_ids))
        input_ids.extend((list(pieces) or [unk_id])[:room])
    input_ids.append(boundary_id)
    return AlignedWords(input_ids, first_subword)


def encode_words(
    tokenizer: Tokenizer, words: list[str], lang: str, max_length: int, where: str
) -> AlignedWords:
    """Tokenize gold words with the tokenizer and align their first subwords (see above).

    ``where`` (``file:line``) names the sentence in the error raised when the tokenizer breaks its
    contract of one id list per word.
    """
    pieces = tokenizer.encode_words(words, lang)
    if len(pieces) != len(words):
        raise ValueError(
            f"{where}: the tokenizer returned {len(pieces)} id lists for {len(words)} words; "
            "encode_words must return exactly one list per word"
        )
    return align_first_subwords(
        pieces, boundary_id=tokenizer.eos_id, unk_id=tokenizer.unk_id, max_length=max_length
    )


def encode_pair(
    first: Sequence[int], second: Sequence[int], *, boundary_id: int, max_length: int
) -> list[int]:
    """``</s> first </s> second </s>``, truncating the longer side first to fit ``max_length``."""
    budget = max_length - 3
    if budget < 2:
        raise ValueError(f"max_length {max_length} leaves no room for a sentence pair")
    first, second = list(first), list(second)
    while len(first) + len(second) > budget:
        if len(first) >= len(second):
            first.pop()
        else:
            second.pop()
    return [boundary_id, *first, boundary_id, *second, boundary_id]


def pad(sequences: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    """Right-pad integer sequences into a (batch, longest) LongTensor."""
    longest = max((len(s) for s in sequences), default=0)
    out = torch.full((len(sequences), max(longest, 1)), value, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        if sequence:
            out[row, : len(sequence)] = torch.as_tensor(sequence, dtype=torch.long)
    return out
