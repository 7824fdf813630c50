"""Cross-lingual similarity (Muller et al. 2021, section 2.2): per layer, each sentence the mean of
its token vectors without special tokens, then linear CKA between the source language's sentences
and their translations, in float64, with the debiased estimator beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xling.analysis.cka import debiased_linear_cka, linear_cka
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


def _flat_ids(tokenizer, words: Sequence[str], lang: str) -> list[int]:
    return [index for piece in tokenizer.encode_words(list(words), lang) for index in piece]


def similarity_rows(
    encoder,
    tokenizer,
    ids: Mapping[str, Sequence[Sequence[int]]],
    sources: Sequence[str],
    debiased: bool,
) -> list[dict]:
    """Rows ``source, target, layer, cka, cka_debiased, n_sentences`` for each source and every
    other language of ``ids``."""
    if len(next(iter(ids.values()))) < 4:
        raise ValueError("fewer than 4 parallel sentences: CKA needs at least 4")
    specials = framing(tokenizer)  # [CLS]/[SEP] or </s> framing, excluded from the means
    encoder.eval()
    pooled = {lang: mean_pooled_layers(encoder, ids[lang], lang, **specials) for lang in ids}
    rows = []
    for source in sources:
        for target in ids:
            if target == source:
                continue
            for layer, (x, y) in enumerate(zip(pooled[source], pooled[target], strict=True)):
                row = {"source": source, "target": target, "layer": layer}
                row["cka"] = linear_cka(x, y)
                row["cka_debiased"] = debiased_linear_cka(x, y) if debiased else None
                row["n_sentences"] = len(x)
                rows.append(row)
    return rows
