"""Cross-lingual similarity (Muller et al. 2021, section 2.2): per layer, each sentence the mean of
its token vectors without special tokens, then linear CKA between the source language's sentences
and their translations, in float64, with the debiased estimator beside it; and the same CKA on
bootstrap resamples of the parallel sentences, so that the claims check can tell a difference
between two curves from the luck of the sentences.

Two controls for sentence length, which a mean-pooled state encodes (docs/muller.md): the CKA with
what each side's sentence lengths predict taken out (``cka_length_controlled``,
:func:`xling.analysis.cka.length_controlled_cka`), and the length control itself, rows of model
:data:`LENGTH` whose every layer is the CKA of the two sides' lengths alone
(:func:`xling.analysis.cka.length_feature`). :class:`SimilaritySettings` also offers what Muller
et al.'s released code computes instead (``measure: rbf_windows``, ``pooling: framed_twice``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from xling.analysis.cka import (
    LENGTH,
    debiased_linear_cka,
    length_controlled_cka,
    length_feature,
    linear_cka,
    parallel_draws,
    rbf_cka,
    resampled_cka_rows,
    windowed_cka,
)
from xling.analysis.representations import framing, mean_pooled_layers, sentence_capacity

LINEAR = "linear"  # the paper's formula (A.2): linear CKA over all the sentences
RBF_WINDOWS = "rbf_windows"  # the released code: RBF-kernel CKA, the mean over windows
MEASURES = (LINEAR, RBF_WINDOWS)
SUBWORDS = "subwords"  # the paper: the mean over the sentence's subwords, no special token
FRAMED_TWICE = "framed_twice"  # the released code: framing tokens in the mean (see pooling)
POOLINGS = (SUBWORDS, FRAMED_TWICE)


@dataclass(frozen=True)
class SimilaritySettings:
    """How the similarity is measured (config ``muller.similarity``): the paper's reading by
    default, or what Muller et al.'s released ``measure_similarity.py`` computes.

    ``measure``: ``linear`` (linear CKA of all the sentences, the formula of the paper's appendix)
    or ``rbf_windows`` (the released code: RBF-kernel CKA, kernel width the median distance,
    :func:`xling.analysis.cka.rbf_cka`, averaged over ``windows`` runs of the sentences,
    :func:`xling.analysis.cka.windowed_cka`). ``pooling``: ``subwords`` (the mean over the
    sentence's subword tokens, its framing left out: "after excluding special tokens") or
    ``framed_twice`` (the released code: its text carries ``[CLS]`` and ``[SEP]`` and the tokenizer
    adds them again, and the first and last position are dropped from the mean, so the inner
    ``[CLS]`` and ``[SEP]`` are pooled with the subwords; here the sentence is framed twice by the
    model's own framing and the inner pair is pooled).
    """

    measure: str = LINEAR
    windows: int = 4
    pooling: str = SUBWORDS

    def __post_init__(self) -> None:
        if self.measure not in MEASURES:
            raise ValueError(f"similarity measure {self.measure!r}: expected one of {MEASURES}")
        if self.pooling not in POOLINGS:
            raise ValueError(f"similarity pooling {self.pooling!r}: expected one of {POOLINGS}")
        if isinstance(self.windows, bool) or not isinstance(self.windows, int) or self.windows < 1:
            raise ValueError(f"similarity windows {self.windows!r}: expected a positive integer")

    @classmethod
    def from_config(cls, section: Mapping | None) -> SimilaritySettings:
        """The settings of ``section`` (``muller.similarity`` or the part of it named here);
        a key left out keeps its default."""
        section = section or {}
        return cls(**{f.name: section[f.name] for f in fields(cls) if f.name in section})

    def changed(self) -> dict:
        """The settings that differ from the paper's reading (a fingerprint's, so that a run
        measured the paper's way keeps the fingerprint it had before these settings existed):
        ``measure`` with its ``windows``, ``pooling``; empty for the paper's."""
        changed = {}
        if self.measure != LINEAR:
            changed |= {"measure": self.measure, "windows": self.windows}
        if self.pooling != SUBWORDS:
            changed["pooling"] = self.pooling
        return changed

    def cka(self) -> Callable[[np.ndarray, np.ndarray], float]:
        """The (biased) CKA of two sides' states."""
        if self.measure == LINEAR:
            return linear_cka
        return functools.partial(windowed_cka, windows=self.windows, measure=rbf_cka)

    @property
    def debiased_available(self) -> bool:
        """The debiased estimator is linear CKA's: with another measure, ``cka_debiased`` stays
        empty rather than hold a number of another measure."""
        return self.measure == LINEAR


class Pooled(NamedTuple):
    """Per language, its parallel sentences' mean-pooled states (one (sentences x width) array a
    layer, L0 = the embeddings) and each sentence's length: the tokens its mean is taken over."""

    states: dict[str, list[np.ndarray]]
    lengths: dict[str, np.ndarray]


def parallel_ids(
    tokenizer, words: Mapping[str, Sequence[Sequence[str]]], limit: int
) -> dict[str, list[list[int]]]:
    """Subword ids per language of the first ``limit`` sentences that every language has.

    ``words[lang][i]`` is sentence i as words; all languages must list the same sentences.
    Sentences that yield no subword in some language are dropped in all of them.
    """
    counts = {lang: len(sentences) for lang, sentences in words.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"parallel sentence files differ in length: {counts}")
    ids: dict[str, list[list[int]]] = {lang: [] for lang in words}
    for index in range(next(iter(counts.values()))):
        encoded = {
            lang: [
                i for piece in tokenizer.encode_words(list(words[lang][index]), lang) for i in piece
            ]
            for lang in words
        }
        if all(encoded.values()):
            for lang, sentence in encoded.items():
                ids[lang].append(sentence)
        if len(ids[next(iter(ids))]) == limit:
            break
    return ids


def pooled_parallel(
    encoder, tokenizer, ids: Mapping[str, Sequence[Sequence[int]]], pooling: str = SUBWORDS
) -> Pooled:
    """Per language, its parallel sentences' mean-pooled states and lengths (:class:`Pooled`),
    pooled as ``pooling`` says (:class:`SimilaritySettings`)."""
    if pooling not in POOLINGS:
        raise ValueError(f"similarity pooling {pooling!r}: expected one of {POOLINGS}")
    if len(next(iter(ids.values()))) < 4:
        raise ValueError("fewer than 4 parallel sentences: CKA needs at least 4")
    specials = framing(tokenizer)  # [CLS]/[SEP] or </s> framing, excluded from the means
    capacity = sentence_capacity(encoder)
    encoder.eval()
    states, lengths = {}, {}
    for lang, sentences in ids.items():
        pooled = pooled_sentences(sentences, pooling, specials)
        states[lang] = mean_pooled_layers(encoder, pooled, lang, **specials)
        lengths[lang] = np.minimum([len(sentence) for sentence in pooled], capacity)
    return Pooled(states, lengths)


def pooled_sentences(
    sentences: Sequence[Sequence[int]], pooling: str, specials: Mapping[str, int | None]
) -> list[list[int]]:
    """The ids whose states a sentence's mean takes, as :func:`mean_pooled_layers` is given them
    (it frames them and pools them all): the sentence's subwords, or with ``framed_twice`` the
    subwords inside a framing of their own, which the encoder's framing then frames again
    (``[CLS] [CLS] ids [SEP] [SEP]``, the inner pair pooled). A sentence longer than the model's
    positions loses its inner end token with its last subwords, as the released code's cut keeps
    the inner ``[CLS]`` and drops the inner ``[SEP]``."""
    if pooling == SUBWORDS:
        return [list(sentence) for sentence in sentences]
    start = specials["eos_id"] if specials.get("start_id") is None else specials["start_id"]
    return [[start, *sentence, specials["eos_id"]] for sentence in sentences]


def _comparisons(states: Mapping[str, list], sources: Sequence[str]):
    for source in sources:
        for target in states:
            if target == source:
                continue
            for layer, (x, y) in enumerate(zip(states[source], states[target], strict=True)):
                yield {"source": source, "target": target, "layer": layer}, x, y


def _length_comparisons(pooled: Pooled, sources: Sequence[str]):
    """The length control's comparisons: per (source, target) and layer, the two sides'
    :func:`length_feature`, one pair of arrays for every layer of a pair (computed once)."""
    layers = len(next(iter(pooled.states.values())))
    for source in sources:
        for target in pooled.states:
            if target == source:
                continue
            x = length_feature(pooled.lengths[source])
            y = length_feature(pooled.lengths[target])
            for layer in range(layers):
                yield {"model": LENGTH, "source": source, "target": target, "layer": layer}, x, y


def similarity_rows(
    pooled: Pooled,
    sources: Sequence[str],
    debiased: bool,
    settings: SimilaritySettings = SimilaritySettings(),
    *,
    control: bool = False,
) -> list:
    """Rows ``source, target, layer, cka, cka_debiased, cka_length_controlled, n_sentences`` for
    each source and every other language of :func:`pooled_parallel`'s states; with ``control``,
    then the length control's rows (``model`` :data:`LENGTH`, the same numbers at every layer,
    ``cka_length_controlled`` empty: nothing is left of a length once its length is out).
    ``cka_debiased`` is empty unless ``debiased`` and the measure is linear."""
    measure = settings.cka()
    debiased = debiased and settings.debiased_available
    rows = []
    for row, x, y in _comparisons(pooled.states, sources):
        row["cka"] = measure(x, y)
        row["cka_debiased"] = debiased_linear_cka(x, y) if debiased else None
        lengths = pooled.lengths[row["source"]], pooled.lengths[row["target"]]
        row["cka_length_controlled"] = length_controlled_cka(x, y, *lengths, measure=measure)
        row["n_sentences"] = len(x)
        rows.append(row)
    if control:
        done: dict[tuple[int, int], tuple] = {}  # a pair's features serve all its layers
        for keys, x, y in _length_comparisons(pooled, sources):
            if (id(x), id(y)) not in done:
                biased = measure(x, y)
                done[id(x), id(y)] = (biased, debiased_linear_cka(x, y) if debiased else None)
            biased, unbiased = done[id(x), id(y)]
            rows.append(
                keys
                | {"cka": biased, "cka_debiased": unbiased, "cka_length_controlled": None}
                | {"n_sentences": len(x)}
            )
    return rows


RESAMPLE_COLUMNS = ["replicate", "source", "target", "layer", "cka"]
PARALLEL_SET = "muller"  # the name that seeds the resamples of the parallel sentences


def similarity_resample_rows(
    pooled: Pooled,
    sources: Sequence[str],
    replicates: int,
    seed: int,
    settings: SimilaritySettings = SimilaritySettings(),
    *,
    control: bool = False,
) -> list[dict]:
    """The (biased) CKA of :func:`similarity_rows` on ``replicates`` bootstrap resamples of the
    parallel sentences, rows ``replicate, source, target, layer, cka`` (and with ``control`` the
    length control's, ``model`` :data:`LENGTH`), for the claims check (``xling.report.claims``).
    One draw (seeded by ``seed``) serves every language, model and layer, as sentence i is one
    sentence in every language: two curves are compared on the same sentences."""
    sentences = len(next(iter(pooled.states.values()))[0])
    draws = parallel_draws(seed, PARALLEL_SET, replicates, sentences)
    comparisons = _comparisons(pooled.states, sources)
    if control:
        comparisons = [*comparisons, *_length_comparisons(pooled, sources)]
    measure = None if settings.measure == LINEAR else settings.cka()
    return resampled_cka_rows(comparisons, draws, measure)


def write_similarity(
    table: str | Path,
    resamples: str | Path,
    pooled: Pooled,
    sources: Sequence[str],
    debiased: bool,
    replicates: int,
    seed: int,
    settings: SimilaritySettings = SimilaritySettings(),
    *,
    control: bool = False,
) -> list[dict]:
    """Write the similarity rows to ``table`` and their ``replicates`` resamples to ``resamples``
    (a header alone with ``report.resamples: 0``); returns the rows. ``control`` adds the length
    control's rows to both, with a ``model`` column (:data:`LENGTH`; empty for the model's own
    rows): the pretrained model's job writes it, once for all models, as it is a number of the
    sentences and the tokenizer alone.

    Why so many parameters: two output paths, the states, and what to compute on them, as the
    similarity job's script and the Muller runner both hold them (config keys of three sections).
    """
    from xling.analysis.loading import write_rows_csv
    from xling.base.bootstrap import write_resamples

    rows = similarity_rows(pooled, sources, debiased, settings, control=control)
    resampled = similarity_resample_rows(
        pooled, sources, replicates, seed, settings, control=control
    )
    columns = [*RESAMPLE_COLUMNS, *(["model"] if control else [])]
    write_resamples(resamples, pd.DataFrame(resampled, columns=columns))
    write_rows_csv(table, rows)
    return rows
