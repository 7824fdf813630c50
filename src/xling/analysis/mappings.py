"""Contextual mappings of Wu, Conneau et al. (2020), section 5.1.2: for each layer i, an orthogonal
map from layer i of the target model to layer i of the source model, learned by Procrustes on
"a dictionary of parallel contextual words" from word-aligned parallel sentences.

Only one-to-one links are used (a source word and a target word linked to each other and to
nothing else), so that a word that an aligner spreads over several words does not pull the map
towards their average. The map is learned on the raw states, without the iterative normalization
of the retrieval experiments: the transfer experiment feeds ``h @ W`` to task layers trained on the
source model's raw states, so the map must keep their scale and offset.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from xling.analysis.alignment import procrustes
from xling.analysis.contextual import word_occurrence_vectors

Link = tuple[int, int]


def one_to_one_links(links: Sequence[Sequence[Link]]) -> tuple[list[Link], list[Link]]:
    """``(source occurrences, target occurrences)``, as (sentence, word) pairs in the same order,
    of the links whose two words have no other link."""
    source, target = [], []
    for sentence, pairs in enumerate(links):
        from_source = Counter(i for i, _ in pairs)
        from_target = Counter(j for _, j in pairs)
        for i, j in sorted(set(pairs)):
            if from_source[i] == 1 and from_target[j] == 1:
                source.append((sentence, i))
                target.append((sentence, j))
    return source, target


def contextual_mappings(
    source: tuple,
    target: tuple,
    source_sentences: Sequence[Sequence[str]],
    target_sentences: Sequence[Sequence[str]],
    links: Sequence[Sequence[Link]],
    *,
    source_units: Sequence[Sequence[tuple[int, int]]] | None = None,
    target_units: Sequence[Sequence[tuple[int, int]]] | None = None,
    min_pairs: int = 10,
) -> tuple[np.ndarray, int]:
    """Per layer L0..Ln, the (dim x dim) orthogonal W with ``target_state @ W ≈ source_state``.

    ``source`` and ``target`` are ``(model, tokenizer, lang)``; for a bilingual model both hold
    the same model with different languages. ``links`` index the sentences' tokens, or, where a
    side has ``units`` (gold words as token spans, :mod:`xling.analysis.goldunits`), its units.
    Returns the stacked maps (layers x dim x dim) and the number of word pairs they were learned
    on.
    """
    if not len(source_sentences) == len(target_sentences) == len(links):
        raise ValueError(
            f"parallel sentences and alignments differ in length: {len(source_sentences)}, "
            f"{len(target_sentences)} and {len(links)} lines"
        )
    source_occurrences, target_occurrences = one_to_one_links(links)
    source_found, source_layers = word_occurrence_vectors(
        *source[:2], source_sentences, source[2], source_occurrences, units=source_units
    )
    target_found, target_layers = word_occurrence_vectors(
        *target[:2], target_sentences, target[2], target_occurrences, units=target_units
    )
    # keep the pairs whose two words both got a vector (not cut off, not only <unk>)
    both = source_found & target_found
    source_rows = both[source_found]
    target_rows = both[target_found]
    pairs = int(both.sum())
    if pairs < min_pairs:
        raise ValueError(
            f"only {pairs} one-to-one aligned word pairs with vectors; a map needs at least "
            f"{min_pairs}: check the alignments and that the sentences are the models' languages"
        )
    maps = [
        procrustes(target_states[target_rows], source_states[source_rows])
        for source_states, target_states in zip(source_layers, target_layers, strict=True)
    ]
    return np.stack(maps), pairs
