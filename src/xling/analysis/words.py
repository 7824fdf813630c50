"""Word-level alignment of Wu, Conneau et al. (2020), section 5.1.1, Figure 4, for one pair.

Three kinds of word vectors of each language are mapped with Procrustes on the MUSE train
dictionary and scored by CSLS retrieval (K = 10) on the MUSE test dictionary:

* ``embeddings``: the monolingual model's embedding matrix, words that are a single subword and
  have a fastText vector (4a);
* ``fasttext_subset``: fastText vectors of the same text, restricted to those same words (4a's
  baseline: "slightly better performance than the same subset of fastText");
* ``fasttext``: fastText vectors of the same text, its first ``vocabulary`` words (the baseline
  that 4b's contextual vectors, kept for as many words, underperform);
* ``contextual``: per layer, each word's states averaged over its subwords and occurrences (4b).

Each row also keeps which test words it translated right (column ``hits``,
:func:`xling.contracts.items.hits_string`), so that the claims check can resample the test
words (``xling.report.resamples``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from xling.analysis.alignment import translation_p_at_1
from xling.analysis.contextual import single_subword_embeddings
from xling.analysis.fasttext_vectors import read_vec
from xling.analysis.wordvectors import load_word_vectors
from xling.base.fileio import StrPath, require_file
from xling.contracts.items import hits_string
from xling.contracts.muse import read_muse

MUSE_FIX = (
    "the paper study downloads it (config data.muse.url; run `snakemake <this path>`), the demo's "
    "toy world writes it; MUSE's dictionaries are published with the MUSE code (facebookresearch)"
)


def dictionary_pairs(path: StrPath) -> list[tuple[str, str]]:
    """Every (source word, translation) of a MUSE dictionary, in file order, identical pairs
    included (MUSE keeps them: in the paper's monolingual spaces a word and its identical
    translation are two unrelated vectors, as any other pair)."""
    require_file(path, "a MUSE bilingual dictionary", MUSE_FIX)
    entries = read_muse(path, keep_identical=True)
    return [(word, target) for word, targets in entries.items() for target in targets]


def _score(method: str, layer, source, target, train, test, settings) -> list[dict]:
    """The mapped score and the unmapped baseline (the identity map) of one kind of vectors."""
    test_words = list(dict.fromkeys(word for word, _ in test))
    rows = []
    for mapped in (True, False):
        result = translation_p_at_1(
            source, target, train, test,
            k=settings["csls_k"], normalize_rounds=settings["normalize_rounds"],
            map_spaces=mapped,
        )  # fmt: skip
        scored = result.pop("hits")
        hits = hits_string(scored.get(word) for word in test_words)
        rows.append({"method": method, "layer": layer, "mapped": mapped, **result, "hits": hits})
    return rows


def same_words(
    vectors: tuple[list[str], np.ndarray], words: Sequence[str]
) -> tuple[list[str], np.ndarray]:
    """The rows of ``vectors`` whose word is in ``words``, in the order of ``vectors`` (Figure 4a
    compares the embedding matrix and fastText on the words both have)."""
    wanted = set(words)
    vocabulary, matrix = vectors
    rows = [index for index, word in enumerate(vocabulary) if word in wanted]
    return [vocabulary[index] for index in rows], matrix[rows]


def lowercased(vectors: tuple[list[str], np.ndarray]) -> tuple[list[str], np.ndarray]:
    """The vectors with their words lowercased, each lowercased word keeping its first row (the
    most frequent form, the vocabularies being in frequency order): MUSE reads vectors so, and
    its dictionaries are lowercase ("paris" finds the vector of "Paris")."""
    vocabulary, matrix = vectors
    first: dict[str, int] = {}
    for index, word in enumerate(vocabulary):
        first.setdefault(word.lower(), index)
    return list(first), matrix[list(first.values())]


def _lowercased_pairs(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((source.lower(), target.lower()) for source, target in pairs))


def word_alignment_rows(
    models: tuple,
    contextual: tuple[StrPath, StrPath],
    fasttext: tuple[StrPath, StrPath],
    dictionaries: tuple[StrPath, StrPath],
    settings: Mapping,
) -> list[dict]:
    """Rows ``method, layer, mapped, p_at_1, ...`` (layer empty for the non-contextual methods;
    ``mapped`` False: the same retrieval without the map, the baseline it has to beat).

    ``models`` holds the source and the target ``(model, tokenizer, lang)``; ``contextual`` and
    ``fasttext`` the two languages' vector files; ``dictionaries`` the MUSE train and test files;
    ``settings`` is config ``analysis.word_alignment``; with its ``lowercase`` (default true),
    words and dictionaries are lowercased as MUSE reads them (:func:`lowercased`).
    """
    train, test = (dictionary_pairs(path) for path in dictionaries)
    limit = settings["vocabulary"]
    lowercase = settings.get("lowercase", True)
    fold = lowercased if lowercase else (lambda vectors: vectors)
    if lowercase:
        train, test = _lowercased_pairs(train), _lowercased_pairs(test)
    rows = []
    embeddings = []
    for model, tokenizer, lang in models:
        words, matrix = single_subword_embeddings(model, tokenizer, lang)
        embeddings.append(fold((words[:limit], np.asarray(matrix[:limit], dtype=np.float64))))
    vectors = [fold(read_vec(path, limit=limit)) for path in fasttext]
    # Figure 4a compares the two on the same words: those of both vocabularies, on each side
    # (a subword such as "ing" has no fastText vector, a rare word no single subword)
    shared = [
        same_words(side, words)
        for side, words in zip(embeddings, (words for words, _ in vectors), strict=True)
    ]
    subsets = [same_words(side, kept) for side, (kept, _) in zip(vectors, shared, strict=True)]
    rows += _score("embeddings", None, *shared, train, test, settings)
    rows += _score("fasttext_subset", None, *subsets, train, test, settings)
    rows += _score("fasttext", None, *vectors, train, test, settings)
    (source_words, source_layers), (target_words, target_layers) = (
        load_word_vectors(path) for path in contextual
    )
    for layer, (x, y) in enumerate(zip(source_layers, target_layers, strict=True)):
        source = fold((source_words, x.astype(np.float64)))
        target = fold((target_words, y.astype(np.float64)))
        rows += _score("contextual", layer, source, target, train, test, settings)
    return rows
