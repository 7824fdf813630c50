"""CKA per layer between the representations of parallel sentences (Wu §5.2, Figure 7).

Two encoders are compared for a pair: the trained model (both sides through it) and the paper's
lower bound, a randomly initialised encoder of the same architecture that encodes the non-English
side only ("Random encoder is only used by non-English sentences", Figure 7). Figure 7 adds two
controls for sentence length, which a mean-pooled state encodes (docs/deviations.md): the CKA of
the sentences' lengths alone, and each encoder's CKA with the length taken out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from xling.analysis.cka import (
    LENGTH,
    cka,
    length_controlled_cka,
    length_feature,
    resampled_cka_rows,
)
from xling.analysis.representations import framing, mean_pooled_layers, sentence_capacity
from xling.model import MLMEncoder
from xling.model.random_init import random_like


def parallel_ids(
    tokenizer, source_lines: Sequence[str], target_lines: Sequence[str], languages, limit: int
) -> tuple[list[list[int]], list[list[int]]]:
    """The first ``limit`` line pairs where both sides have subword tokens, as id lists."""
    if len(source_lines) != len(target_lines):
        raise ValueError(
            f"parallel files differ in length: {len(source_lines)} vs {len(target_lines)} lines"
        )
    source_lang, target_lang = languages
    source_ids, target_ids = [], []
    for source, target in zip(source_lines, target_lines, strict=True):
        if not source.strip() or not target.strip():
            continue
        source_ids.append(tokenizer.encode_tokenized(source, source_lang))
        target_ids.append(tokenizer.encode_tokenized(target, target_lang))
        if len(source_ids) == limit:
            break
    return source_ids, target_ids


def layerwise_cka(
    source_model: MLMEncoder,
    target_model: MLMEncoder,
    source_ids,
    target_ids,
    languages,
    special_ids: dict[str, int],
    debiased: bool = False,
) -> list[dict[str, float]]:
    """Per layer, ``cka`` (the biased linear CKA) and, with ``debiased``, ``cka_debiased`` beside
    it (:func:`xling.analysis.cka.debiased_linear_cka`)."""
    source_lang, target_lang = languages
    source_layers = mean_pooled_layers(source_model, source_ids, source_lang, **special_ids)
    target_layers = mean_pooled_layers(target_model, target_ids, target_lang, **special_ids)
    scores = []
    for x, y in zip(source_layers, target_layers, strict=True):
        score = {"cka": cka(x, y)}
        if debiased:
            score["cka_debiased"] = cka(x, y, debiased=True)
        scores.append(score)
    return scores


def cka_rows(
    model: MLMEncoder,
    tokenizer,
    source_lines: Sequence[str],
    target_lines: Sequence[str],
    languages: Sequence[str],
    sentences: int,
    debiased: bool,
    seed: int,
) -> list[dict]:
    """Rows ``encoder, layer, cka, n_sentences`` for the trained and the random encoder, ``cka``
    the biased CKA; ``debiased`` (config ``analysis.cka.debiased``) adds ``cka_debiased`` after
    ``cka``, as Figure 7's tables have it (:func:`figure7_rows`)."""
    source_ids, target_ids = parallel_ids(
        tokenizer, source_lines, target_lines, languages, sentences
    )
    if len(source_ids) < 4:
        raise ValueError(f"only {len(source_ids)} usable parallel sentences; CKA needs at least 4")
    special_ids = framing(tokenizer)
    random_encoder = random_like(model, seed)
    rows = []
    for name, target_model in (("trained", model), ("random", random_encoder)):
        scores = layerwise_cka(
            model, target_model, source_ids, target_ids, languages, special_ids, debiased
        )
        rows += [
            {"encoder": name, "layer": layer, **score, "n_sentences": len(source_ids)}
            for layer, score in enumerate(scores)
        ]
    return rows


class ComparedStates(NamedTuple):
    """One comparison of Figure 7: per layer, the English side's and the other side's mean-pooled
    states of the same sentences, and each side's lengths in the subword tokens its encoder read
    (the control's and the length-controlled CKA's)."""

    source: list[np.ndarray]
    target: list[np.ndarray]
    source_lengths: np.ndarray
    target_lengths: np.ndarray


def figure7_states(
    source: tuple,
    target: tuple,
    bilingual: tuple,
    source_lines: Sequence[str],
    target_lines: Sequence[str],
    *,
    sentences: int,
    seed: int,
) -> dict[str, ComparedStates]:
    """Wu Figure 7's comparisons for one pair: per encoder, the :class:`ComparedStates` of the
    parallel sentences, English side and other side.

    ``source`` and ``target`` are the monolingual ``(model, tokenizer, lang)`` of each side;
    ``bilingual`` is ``(model, tokenizer, (source lang, target lang))``. Encoders
    ``monolingual``, ``bilingual`` and ``random``: a randomly initialised copy of the target's
    monolingual architecture encodes the target side ("Random encoder is only used by
    non-English sentences"), against the source's monolingual model; and ``length``, the control,
    whose every layer is :func:`xling.analysis.cka.length_feature` of the sentences as the
    monolingual tokenizers cut them (the tokens the random encoder reads). Sentences are the first
    ``sentences`` pairs with subwords on both sides in every tokenizer.
    """
    if len(source_lines) != len(target_lines):
        raise ValueError(
            f"parallel files differ in length: {len(source_lines)} vs {len(target_lines)} lines"
        )
    bilingual_model, bilingual_tokenizer, bilingual_languages = bilingual
    sides = [
        (source[1], source[2], source_lines),
        (target[1], target[2], target_lines),
        (bilingual_tokenizer, bilingual_languages[0], source_lines),
        (bilingual_tokenizer, bilingual_languages[1], target_lines),
    ]
    encoded = _usable_parallel(sides, len(source_lines), sentences)
    random_target = random_like(target[0], seed)

    def pooled(model, ids, tokenizer, lang):
        return mean_pooled_layers(model, ids, lang, **framing(tokenizer))

    def lengths(model, ids):  # the tokens a mean is taken over: cut to the model's positions
        return np.minimum([len(sentence) for sentence in ids], sentence_capacity(model))

    mono_lengths = lengths(source[0], encoded[0]), lengths(target[0], encoded[1])
    # The English side through its monolingual model serves two comparisons: encode it once.
    english = pooled(source[0], encoded[0], source[1], source[2])
    states = {
        "monolingual": (english, pooled(target[0], encoded[1], target[1], target[2])),
        "bilingual": (
            pooled(bilingual_model, encoded[2], bilingual_tokenizer, bilingual_languages[0]),
            pooled(bilingual_model, encoded[3], bilingual_tokenizer, bilingual_languages[1]),
        ),
        "random": (english, pooled(random_target, encoded[1], target[1], target[2])),
        LENGTH: tuple([length_feature(side)] * len(english) for side in mono_lengths),
    }
    side_lengths = {
        "bilingual": (lengths(bilingual_model, encoded[2]), lengths(bilingual_model, encoded[3]))
    }
    return {
        encoder: ComparedStates(*layers, *side_lengths.get(encoder, mono_lengths))
        for encoder, layers in states.items()
    }


def _usable_parallel(sides, count: int, limit: int) -> list[list[list[int]]]:
    """Per side ``(tokenizer, lang, lines)``, the ids of the first ``limit`` lines that every
    side cuts into some subwords."""
    encoded: list[list[list[int]]] = [[] for _ in sides]
    for index in range(count):
        ids = [tokenizer.encode_tokenized(lines[index], lang) for tokenizer, lang, lines in sides]
        if all(ids):
            for kept, sentence in zip(encoded, ids, strict=True):
                kept.append(sentence)
        if len(encoded[0]) == limit:
            break
    if len(encoded[0]) < 4:
        raise ValueError(f"only {len(encoded[0])} usable parallel sentences; CKA needs at least 4")
    return encoded


FIGURE7_COLUMNS = [
    "encoder", "layer", "cka", "cka_debiased", "cka_length_controlled", "n_sentences",
]  # fmt: skip


def figure7_rows(states: Mapping[str, ComparedStates], *, debiased: bool = True) -> list[dict]:
    """Rows of :data:`FIGURE7_COLUMNS` of :func:`figure7_states`: the (biased) linear CKA, the
    debiased one (empty unless ``debiased``) and the length-controlled one
    (:func:`xling.analysis.cka.length_controlled_cka`; empty for the length control itself, which
    would have nothing left; NaN, an empty cell too, where a side's lengths are all distinct)."""
    rows = []
    for encoder, compared in states.items():
        pairs = zip(compared.source, compared.target, strict=True)
        for layer, (x, y) in enumerate(pairs):
            row = {"encoder": encoder, "layer": layer, "cka": cka(x, y)}
            row["cka_debiased"] = cka(x, y, debiased=True) if debiased else None
            row["cka_length_controlled"] = (
                None
                if encoder == LENGTH
                else length_controlled_cka(x, y, compared.source_lengths, compared.target_lengths)
            )
            rows.append(row | {"n_sentences": x.shape[0]})
    return rows


FIGURE7_RESAMPLE_COLUMNS = ["replicate", "encoder", "layer", "cka"]


def figure7_resample_rows(states: Mapping[str, ComparedStates], draws: np.ndarray) -> list[dict]:
    """The (biased) CKA of :func:`figure7_states` on each resample of the parallel sentences,
    rows ``replicate, encoder, layer, cka`` (the length control's too): how much of a difference
    between two encoders is the luck of the sentences (the claims check asks;
    ``xling.report.claims``)."""
    comparisons = (
        ({"encoder": encoder, "layer": layer}, x, y)
        for encoder, compared in states.items()
        for layer, (x, y) in enumerate(zip(compared.source, compared.target, strict=True))
    )
    return resampled_cka_rows(comparisons, draws)
