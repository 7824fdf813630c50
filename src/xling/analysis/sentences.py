"""Sentence retrieval of Wu, Conneau et al. (2020), section 5.1.3, Figure 6.

"X and Y are obtained by average pooling subword representation (excluding special token) of
sentences at each layer of monolingual BERT": the map is learned by Procrustes on the parallel
sentences after iterative normalization, and evaluated on Tatoeba by nearest neighbour under
cosine, P@1, in both directions. Beside it, the same retrieval without the map, and with Figure
7's random encoder on the non-English side (its own map): the two baselines of the trained states.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xling.analysis.alignment import (
    iterative_normalization,
    procrustes,
    retrieval_hits,
)
from xling.analysis.representations import framing, mean_pooled_layers
from xling.base.errors import InputFileError
from xling.base.fileio import StrPath, read_lines, require_file
from xling.contracts.items import hits_string
from xling.model.random_init import random_like

TATOEBA_FIX = (
    "the paper study downloads it (config data.tatoeba; run `snakemake <this path>`), the demo's "
    "toy world writes it; LASER publishes the Tatoeba test sets (data/tatoeba/v1)"
)


def read_tatoeba(path: StrPath) -> list[str]:
    """The tokenized sentences of one side of a Tatoeba test set."""
    require_file(path, "one side of a Tatoeba test set (tokenized)", TATOEBA_FIX)
    return read_lines(path)


def read_tatoeba_pair(source: StrPath, target: StrPath) -> tuple[list[str], list[str]]:
    """Both sides of a Tatoeba test set, checked before any model is loaded: line i of one is
    the translation of line i of the other, so they must have as many lines, and some."""
    sides = read_tatoeba(source), read_tatoeba(target)
    counts = [len(side) for side in sides]
    if counts[0] != counts[1] or not counts[0]:
        raise InputFileError(
            target,
            f"{counts[1]} sentences against {counts[0]} in {source}; the two sides of a Tatoeba "
            "test set are translations line by line",
            fix=f"delete both files and rebuild them ({TATOEBA_FIX})",
        )
    return sides


def encoded_lines(tokenizer, lines: Sequence[str], lang: str, limit: int | None = None):
    """Subword ids of the first ``limit`` tokenized lines; a line with no subword is an error
    (it would break the line alignment that retrieval is scored on)."""
    lines = list(lines)[:limit]
    ids = [tokenizer.encode_tokenized(line, lang) for line in lines]
    empty = [number for number, sentence in enumerate(ids, start=1) if not sentence]
    if empty:
        raise ValueError(f"line {empty[0]} has no subword token ({len(empty)} such lines)")
    return ids


def pooled(side: tuple, ids) -> list[np.ndarray]:
    model, tokenizer, lang = side
    return mean_pooled_layers(model, ids, lang, **framing(tokenizer))


def sentence_retrieval_rows(
    source: tuple,
    target: tuple,
    parallel: tuple[Sequence[str], Sequence[str]],
    tatoeba: tuple[Sequence[str], Sequence[str]],
    *,
    parallel_sentences: int,
    normalize_rounds: int = 5,
    seed: int,
) -> list[dict]:
    """Rows ``layer, direction, p_at_1, p_at_1_unmapped, p_at_1_random, n_train, n_test, hits,
    hits_unmapped, hits_random`` for every layer L0..Ln (``hits``: per Tatoeba sentence,
    :func:`hits_string`).

    ``source`` and ``target`` are ``(model, tokenizer, lang)``; ``parallel`` and ``tatoeba`` are
    line-aligned tokenized lines of both sides. ``direction`` is ``{src}-{tgt}`` (source
    sentences query the target side) or the reverse. ``p_at_1_unmapped`` retrieves without the
    map, the baseline that shows what the map does (section 5.1.4: sentence-level
    representations "can be aligned with a simple orthogonal mapping"); ``p_at_1_random`` is the
    same retrieval with Figure 7's random encoder on the target side (the target model's
    architecture, fresh weights drawn for ``seed``: :func:`xling.model.random_init.random_like`),
    mapped by its own Procrustes on the parallel sentences: what the map finds in states that
    learned nothing, sentence length above all.
    """
    directions = (f"{source[2]}-{target[2]}", f"{target[2]}-{source[2]}")
    sides = (source, target)
    train_ids = [
        encoded_lines(side[1], lines, side[2], parallel_sentences)
        for side, lines in zip(sides, parallel, strict=True)
    ]
    test_ids = [
        encoded_lines(side[1], lines, side[2]) for side, lines in zip(sides, tatoeba, strict=True)
    ]
    train = [pooled(side, ids) for side, ids in zip(sides, train_ids, strict=True)]
    test = [pooled(side, ids) for side, ids in zip(sides, test_ids, strict=True)]
    random_side = (random_like(target[0], seed), *target[1:])
    random_train, random_test = pooled(random_side, train_ids[1]), pooled(random_side, test_ids[1])
    rows = []
    for layer, (train_source, train_target, test_source, test_target) in enumerate(
        zip(*train, *test, strict=True)
    ):
        hits = layer_retrieval(
            (train_source, train_target), (test_source, test_target), normalize_rounds
        )
        random_hits = layer_retrieval(
            (train_source, random_train[layer]), (test_source, random_test[layer]), normalize_rounds
        )
        for direction, (mapped, unmapped), (random, _) in zip(
            directions, hits, random_hits, strict=True
        ):
            rows.append(
                {
                    "layer": layer,
                    "direction": direction,
                    "p_at_1": float(mapped.mean()),
                    "p_at_1_unmapped": float(unmapped.mean()),
                    "p_at_1_random": float(random.mean()),
                    "n_train": len(train_source),
                    "n_test": len(test_source),
                    "hits": hits_string(mapped),
                    "hits_unmapped": hits_string(unmapped),
                    "hits_random": hits_string(random),
                }
            )
    return rows


def layer_retrieval(
    train: tuple[np.ndarray, np.ndarray], test: tuple[np.ndarray, np.ndarray], rounds: int = 5
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """((hits mapped, unmapped) source -> target, the same target -> source) of one layer: per
    test sentence, whether its translation is its nearest neighbour (their mean is the P@1).

    ``train`` and ``test`` are line-aligned (source, target) sentence vectors; the map is fitted
    on ``train`` after iterative normalization, target -> source (both sides of one width, as
    an orthogonal map needs).
    """
    train_source, train_target, test_source, test_target = (
        iterative_normalization(x, rounds=rounds) for x in (*train, *test)
    )
    mapped = test_target @ procrustes(train_target, train_source)
    return (
        (retrieval_hits(test_source, mapped), retrieval_hits(test_source, test_target)),
        (retrieval_hits(mapped, test_source), retrieval_hits(test_target, test_source)),
    )
