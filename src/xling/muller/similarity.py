"""Cross-lingual similarity (Muller et al. 2021, section 2.2): per layer, each sentence the mean of
its token vectors without special tokens, then linear CKA between the source language's sentences
and their translations, in float64, with the debiased estimator beside it; and the same CKA on
bootstrap resamples of the parallel sentences, so that the claims check can tell a difference
between two curves from the luck of the sentences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from xling.analysis.cka import (
    debiased_linear_cka,
    linear_cka,
    parallel_draws,
    resampled_cka_rows,
)
from xling.analysis.representations import framing, mean_pooled_layers


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


def pooled_parallel(encoder, tokenizer, ids: Mapping[str, Sequence[Sequence[int]]]) -> dict:
    """Per language, its parallel sentences' mean-pooled states, one (sentences x width) array a
    layer (L0 = the embeddings)."""
    if len(next(iter(ids.values()))) < 4:
        raise ValueError("fewer than 4 parallel sentences: CKA needs at least 4")
    specials = framing(tokenizer)  # [CLS]/[SEP] or </s> framing, excluded from the means
    encoder.eval()
    return {lang: mean_pooled_layers(encoder, ids[lang], lang, **specials) for lang in ids}


def _comparisons(pooled: Mapping[str, list], sources: Sequence[str]):
    for source in sources:
        for target in pooled:
            if target == source:
                continue
            for layer, (x, y) in enumerate(zip(pooled[source], pooled[target], strict=True)):
                yield {"source": source, "target": target, "layer": layer}, x, y


def similarity_rows(pooled: Mapping[str, list], sources: Sequence[str], debiased: bool) -> list:
    """Rows ``source, target, layer, cka, cka_debiased, n_sentences`` for each source and every
    other language of :func:`pooled_parallel`'s states."""
    rows = []
    for row, x, y in _comparisons(pooled, sources):
        row["cka"] = linear_cka(x, y)
        row["cka_debiased"] = debiased_linear_cka(x, y) if debiased else None
        row["n_sentences"] = len(x)
        rows.append(row)
    return rows


RESAMPLE_COLUMNS = ["replicate", "source", "target", "layer", "cka"]
PARALLEL_SET = "muller"  # the name that seeds the resamples of the parallel sentences


def similarity_resample_rows(
    pooled: Mapping[str, list], sources: Sequence[str], replicates: int, seed: int
) -> list[dict]:
    """The (biased) CKA of :func:`similarity_rows` on ``replicates`` bootstrap resamples of the
    parallel sentences, rows ``replicate, source, target, layer, cka``, for the claims check
    (``xling.report.claims``). One draw (seeded by ``seed``) serves every language, model and
    layer, as sentence i is one sentence in every language: two curves are compared on the same
    sentences."""
    sentences = len(next(iter(pooled.values()))[0])
    draws = parallel_draws(seed, PARALLEL_SET, replicates, sentences)
    return resampled_cka_rows(_comparisons(pooled, sources), draws)


def write_similarity(
    table: str | Path,
    resamples: str | Path,
    pooled: Mapping[str, list],
    sources: Sequence[str],
    debiased: bool,
    replicates: int,
    seed: int,
) -> list[dict]:
    """Write the similarity rows to ``table`` and their ``replicates`` resamples to ``resamples``
    (a header alone with ``report.resamples: 0``); returns the rows."""
    from xling.analysis.loading import write_rows_csv
    from xling.base.bootstrap import write_resamples

    rows = similarity_rows(pooled, sources, debiased)
    resampled = similarity_resample_rows(pooled, sources, replicates, seed)
    write_resamples(resamples, pd.DataFrame(resampled, columns=RESAMPLE_COLUMNS))
    write_rows_csv(table, rows)
    return rows
