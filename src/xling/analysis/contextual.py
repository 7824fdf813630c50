"""Word vectors of a monolingual encoder for aligning word embeddings (Wu §5.1.1).

* Non-contextual (:func:`single_subword_embeddings`): the input embedding rows of the vocabulary
  entries that are a whole word by themselves ("we only keep words containing only one subword").
* Contextual (:func:`contextual_word_vectors`): at each layer L0..Ln, a word's vector is the mean
  over its occurrences in a corpus of the mean of its subword states in that occurrence.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from xling.analysis.representations import encode_framed, framing, sentence_capacity
from xling.model import MLMEncoder
from xling.vocab import SubwordTokenizer
from xling.vocab.codes import SEPARATOR


def single_subword_embeddings(
    model: MLMEncoder, tokenizer: SubwordTokenizer, lang: str
) -> tuple[list[str], np.ndarray]:
    """Words that are one vocabulary entry of ``lang``, with their input embedding rows.

    Kept: the entries ``lang`` can emit that end a word (no ``@@``), special tokens excluded, in
    vocabulary order; words are the entries without their ``{lang}:`` prefix. With separate
    embeddings the rows come from ``lang``'s own matrix. The matrix keeps the model's dtype.
    """
    _check_vocabulary_size(model, tokenizer)
    ids = [
        int(i)
        for i in np.sort(tokenizer.language_token_ids(lang))
        if not tokenizer.vocab[i].endswith(SEPARATOR)
    ]
    words = [tokenizer.decode([i]) for i in ids]
    weight = model.embeddings_for(lang).tokens.weight
    return words, weight[torch.as_tensor(ids, dtype=torch.long)].detach().cpu().numpy()


def contextual_word_vectors(
    model: MLMEncoder,
    tokenizer: SubwordTokenizer,
    sentences: Iterable[Sequence[str]],
    lang: str,
    *,
    words: Iterable[str] | None = None,
    batch_size: int = 64,
    max_sentences: int | None = None,
) -> tuple[list[str], list[np.ndarray]]:
    """Averaged contextual vectors of the word types of a corpus, one matrix per layer L0..Ln.

    ``sentences`` are lists of words as the corpus gives them (a tokenized line through
    ``str.split()``); each word goes through ``tokenizer.encode_tokenized_words`` (the corpus is
    already through the text pipeline, as the model saw it in pretraining) and a word type is the
    word as given. A sentence is encoded as :func:`~xling.analysis.representations.encode_framed`
    frames it (``</s> ids </s>``; the ``</s>`` never enter an average). Sentences longer than the
    model's positions are cut before the first word whose subwords no longer fit, so every counted
    occurrence has all its subwords; a sentence whose first word does not fit is skipped.

    For each layer and word type: the mean over occurrences of (the mean of the word's subword
    states in that occurrence), accumulated as float64 sums and counts (memory: types x layers x
    dim, never occurrences). Words whose subwords are all ``<unk>`` are not counted (they would all
    share one vector); they stay in the sentence as context, as do words outside ``words``.

    Args:
        words: only these word types are averaged; the others are still encoded as context, so a
            word's vectors do not depend on ``words``. Words that never occur are not returned.
        max_sentences: use the first N sentences that have at least one word.

    Returns:
        ``(vocabulary, layers)``: the word types by decreasing number of occurrences, then
        alphabetically (``vocabulary[:n]`` are the n most frequent), and for each layer a float64
        (len(vocabulary) x dim) matrix with rows in that order.
    """
    _check_vocabulary_size(model, tokenizer)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    model.eval()
    wanted = None if words is None else set(words)
    sums = _WordSums(model.config.layers + 1, model.config.dim, len(wanted or ()) or 1024)
    capacity = sentence_capacity(model)
    batch = _Batch()
    used = 0

    def counted(word: str, word_ids: list[int]) -> bool:
        return (wanted is None or word in wanted) and any(i != tokenizer.unk_id for i in word_ids)

    for sentence in sentences:
        if max_sentences is not None and used >= max_sentences:
            break
        if not sentence:
            continue
        used += 1
        pieces = _cut(
            [list(ids) for ids in tokenizer.encode_tokenized_words(sentence, lang)], capacity
        )
        batch.add(sentence, pieces, counted, sums)
        if len(batch.sentence_ids) == batch_size:
            batch.flush(model, tokenizer, lang, sums)
    batch.flush(model, tokenizer, lang, sums)
    return sums.averages()


def word_occurrence_vectors(
    model: MLMEncoder,
    tokenizer: SubwordTokenizer,
    sentences: Sequence[Sequence[str]],
    lang: str,
    occurrences: Sequence[tuple[int, int]],
    *,
    units: Sequence[Sequence[tuple[int, int]]] | None = None,
    batch_size: int = 64,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per layer, the vector of each ``(sentence index, word index)`` occurrence: the mean of the
    word's subword states in that sentence (Wu §5.1.2's "parallel contextual words").

    With ``units`` (per sentence, disjoint token spans ``[start, end)`` in order; see
    :mod:`xling.analysis.goldunits`), an occurrence's second index names a unit instead of a token,
    and its vector is the mean of the subword states of all the unit's tokens. Tokens outside every
    unit are context only.

    Returns a boolean array saying which occurrences got a vector (a word cut off by the model's
    positions, or made only of ``<unk>``, gets none) and, per layer L0..Ln, a float64 (found x dim)
    matrix in the order of ``occurrences``. Framing and averaging are those of
    :func:`contextual_word_vectors`: each occurrence is a word type of its own.
    """
    _check_vocabulary_size(model, tokenizer)
    model.eval()
    keys = [f"{sentence}:{word}" for sentence, word in occurrences]
    wanted = set(keys)
    sums = _WordSums(model.config.layers + 1, model.config.dim, len(wanted) or 1)
    capacity = sentence_capacity(model)
    batch = _Batch()

    def counted(key: str, word_ids: list[int]) -> bool:
        return key in wanted and any(i != tokenizer.unk_id for i in word_ids)

    needed = sorted({sentence for sentence, _ in occurrences})
    for index in needed:
        words = sentences[index]
        token_pieces = [list(ids) for ids in tokenizer.encode_tokenized_words(words, lang)]
        if units is None:
            names, pieces = [str(word) for word in range(len(words))], token_pieces
        else:
            names, pieces = _group_units(token_pieces, units[index])
        pieces = _cut(pieces, capacity)
        batch.add([f"{index}:{name}" for name in names], pieces, counted, sums)
        if len(batch.sentence_ids) == batch_size:
            batch.flush(model, tokenizer, lang, sums)
    batch.flush(model, tokenizer, lang, sums)
    found = np.array([key in sums.index for key in keys], dtype=bool)
    rows = torch.as_tensor([sums.index[key] for key in keys if key in sums.index], dtype=torch.long)
    return found, [layer[rows].numpy() for layer in sums.sums]


def _group_units(
    token_pieces: list[list[int]], units: Sequence[tuple[int, int]]
) -> tuple[list[str], list[list[int]]]:
    """A sentence's subwords regrouped as its units (named by their index) and, between them,
    the remaining tokens one by one (named ``c`` and the token index: never counted)."""
    names, pieces, token = [], [], 0
    for number, (start, end) in enumerate([*units, (len(token_pieces), len(token_pieces))]):
        if start < token or end < start or end > len(token_pieces):
            raise ValueError(
                f"unit {start}-{end} of a sentence of {len(token_pieces)} tokens overlaps the one "
                "before it or leaves the sentence; units must be disjoint token spans in order"
            )
        names += [f"c{t}" for t in range(token, start)]
        pieces += token_pieces[token:start]
        if number < len(units):
            names.append(str(number))
            pieces.append([i for ids in token_pieces[start:end] for i in ids])
        token = end
    return names, pieces


def _cut(pieces: list[list[int]], capacity: int) -> list[list[int]]:
    """The longest prefix of whole words whose subwords fit in ``capacity`` tokens."""
    total = 0
    for kept, word_ids in enumerate(pieces):
        total += len(word_ids)
        if total > capacity:
            return pieces[:kept]
    return pieces


@dataclass
class _WordSums:
    """Per layer and word type, the sum of occurrence vectors (float64, on the CPU) and counts."""

    layers: int
    dim: int
    initial_capacity: int
    index: dict[str, int] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sums = torch.zeros(self.layers, self.initial_capacity, self.dim, dtype=torch.float64)

    def count(self, word: str) -> int:
        """The row of ``word``, one more occurrence counted."""
        row = self.index.setdefault(word, len(self.index))
        if row == len(self.counts):
            self.counts.append(0)
            if row == self.sums.shape[1]:  # doubling keeps the copies linear in the vocabulary
                self.sums = torch.cat([self.sums, torch.zeros_like(self.sums)], dim=1)
        self.counts[row] += 1
        return row

    def averages(self) -> tuple[list[str], list[np.ndarray]]:
        vocabulary = sorted(self.index, key=lambda word: (-self.counts[self.index[word]], word))
        rows = torch.as_tensor([self.index[word] for word in vocabulary], dtype=torch.long)
        counts = torch.as_tensor(self.counts, dtype=torch.float64)[rows].unsqueeze(-1)
        return vocabulary, [(layer[rows] / counts).numpy() for layer in self.sums]


@dataclass
class _Batch:
    """Sentences waiting to be encoded, with the word row and the weight 1/len(word) of each of
    their subwords (row -1: context only)."""

    sentence_ids: list[list[int]] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)

    def add(self, words: Sequence[str], pieces: list[list[int]], counted, sums: _WordSums) -> None:
        ids, rows, weights = [], [], []
        for word, word_ids in zip(words, pieces, strict=False):  # pieces may be cut short
            row = sums.count(word) if counted(word, word_ids) else -1
            ids += word_ids
            rows += [row] * len(word_ids)
            weights += [1.0 / len(word_ids)] * len(word_ids)
        if any(row >= 0 for row in rows):  # a sentence with nothing to count costs no forward
            self.sentence_ids.append(ids)
            self.rows += rows
            self.weights += weights

    def flush(self, model: MLMEncoder, tokenizer: SubwordTokenizer, lang: str, sums: _WordSums):
        if not self.sentence_ids:
            return
        hidden, content = encode_framed(model, self.sentence_ids, lang, **framing(tokenizer))
        rows = torch.as_tensor(self.rows, dtype=torch.long)
        counted = rows >= 0
        weights = torch.as_tensor(self.weights, dtype=torch.float64)[counted].unsqueeze(-1)
        for layer, states in enumerate(hidden):
            values = states[content].cpu().to(torch.float64)[counted] * weights
            sums.sums[layer].index_add_(0, rows[counted], values)
        self.sentence_ids, self.rows, self.weights = [], [], []


def _check_vocabulary_size(model: MLMEncoder, tokenizer: SubwordTokenizer) -> None:
    if model.config.vocab_size != tokenizer.vocab_size:
        raise ValueError(
            f"the model has {model.config.vocab_size} token embeddings and the tokenizer "
            f"{tokenizer.vocab_size} tokens: use the tokenizer saved with the model"
        )
