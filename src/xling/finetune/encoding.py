"""Turning words and sentences into encoder input, and padding batches.

Layout follows XLM, whose pretrained models the paper fine-tuned: ``</s> tokens </s>`` for one
sentence and ``</s> premise </s> hypothesis </s>`` for a pair. XLM uses ``</s>`` as the sentence
start (``<s>`` is never seen in pretraining, docs/contracts.md section 3: every sentence is followed
by ``</s>``), so the boundary token has a trained embedding in every language, which matters when
language-specific embeddings are frozen. Position 0 is the "first token" of the XNLI head and the
ROOT of the parser.

Other encoders frame sentences differently: BERT writes ``[CLS] tokens [SEP]`` and
``[CLS] premise [SEP] hypothesis [SEP]``, a start token distinct from the separator. A tokenizer
says so with an optional ``start_id`` (:func:`sentence_start_id`); ours has ``start_id == eos_id``,
so its encodings are the XLM ones above, unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch


class Tokenizer(Protocol):
    """What fine-tuning needs from a tokenizer (``xling.vocab.SubwordTokenizer``,
    ``xling.model.hf.HFTokenizer``).

    ``eos_id`` ends a sentence and separates the two of a pair. A tokenizer may also have a
    ``start_id``, written at the start of the input (BERT's ``[CLS]``); without one the input
    starts with ``eos_id`` too (XLM). It is optional, not a protocol member, so that the small
    stand-ins tests write need not have it. (Not ``bos_id``: SubwordTokenizer's ``bos_id`` is
    ``<s>``, a token that XLM-style inputs never contain.)
    """

    pad_id: int
    unk_id: int
    eos_id: int

    def encode_words(self, words: list[str], lang: str) -> list[list[int]]: ...

    def encode_line(self, raw_line: str, lang: str) -> list[int]: ...


def sentence_start_id(tokenizer: Tokenizer) -> int:
    """The id that opens every input: the tokenizer's ``start_id`` if it has one, else
    ``eos_id``."""
    start = getattr(tokenizer, "start_id", None)
    return tokenizer.eos_id if start is None else start


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
    word_pieces: Sequence[Sequence[int]],
    *,
    boundary_id: int,
    unk_id: int,
    max_length: int,
    start_id: int | None = None,
) -> AlignedWords:
    """Concatenate per-word subword ids between two boundaries, keeping first-subword positions.

    The input opens with ``start_id`` (None: ``boundary_id``) and ends with ``boundary_id``.

    A word without any subword becomes ``[unk_id]`` (so every later label keeps its word). The
    input holds at most ``max_length`` tokens, boundaries included: a word is kept while its first
    subword fits (only that one feeds the heads), its other subwords as far as they fit, and the
    words after the limit are cut.
    """
    if max_length < 3:
        raise ValueError(
            f"max_length must leave room for a word between two boundaries: {max_length}"
        )
    input_ids = [boundary_id if start_id is None else start_id]
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
        pieces,
        boundary_id=tokenizer.eos_id,
        unk_id=tokenizer.unk_id,
        max_length=max_length,
        start_id=sentence_start_id(tokenizer),
    )


def encode_pair(
    first: Sequence[int],
    second: Sequence[int],
    *,
    boundary_id: int,
    max_length: int,
    start_id: int | None = None,
) -> list[int]:
    """``</s> first </s> second </s>``, truncating the longer side first to fit ``max_length``.

    ``start_id`` replaces the first ``</s>`` (BERT: ``[CLS] first [SEP] second [SEP]``).
    """
    budget = max_length - 3
    if budget < 2:
        raise ValueError(f"max_length {max_length} leaves no room for a sentence pair")
    first, second = list(first), list(second)
    while len(first) + len(second) > budget:
        if len(first) >= len(second):
            first.pop()
        else:
            second.pop()
    start = boundary_id if start_id is None else start_id
    return [start, *first, boundary_id, *second, boundary_id]


def pad(sequences: Sequence[Sequence[int]], value: int) -> torch.Tensor:
    """Right-pad integer sequences into a (batch, longest) LongTensor."""
    longest = max((len(s) for s in sequences), default=0)
    out = torch.full((len(sequences), max(longest, 1)), value, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        if sequence:
            out[row, : len(sequence)] = torch.as_tensor(sequence, dtype=torch.long)
    return out
