"""Cross-lingual alignment of representations: Procrustes, CSLS word translation, retrieval.

Wu, Conneau et al. (2020, §5.1) measure how well two monolingual spaces align with a linear
orthogonal map: "we learn an orthogonal mapping using the Procrustes approach
W* = argmin_{W in O_d} ||WX - Y||_F = U V^T with U S V^T = SVD(Y X^T)" after "iterative
normalization on X and Y" (Zhang et al., 2019); word translation is retrieved with CSLS
(Conneau et al., 2018), K = 10, and scored as precision@1 on the MUSE test dictionary (§5.1.1).
Sentence retrieval (§5.1.3) is nearest neighbour by cosine, P@1, in both directions.

Here rows are vectors, so the map is applied as ``source @ W``. Normalization and Procrustes run
in float64. Similarity blocks run in float32 by default, as MUSE's evaluation does: 2-3x as
fast as float64, and the top-1 can only change where two cosines are within ~1e-6 of each other
(none of 1,500 changed at 20k words). Blocks go through torch on the CPU: its top-k is ~10x
faster than ``np.argpartition`` on a block, and its matrix product as fast as numpy's. Memory
beyond the inputs stays O(batch_size x N): the 200k x 200k similarity matrix of the paper's
vocabularies (160 GB in float32) is never built. Measured on 2 CPU cores (bench/alignment.py):
at 20k words x 768, 1.7-2.4x faster than numpy with the full matrix, peak memory 0.5 against
3.2 GiB; 100k words take 5.3 min and 2.3 GiB; time grows as N^2, memory as N.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import torch

DEFAULT_BATCH_SIZE = 512  # 512 x 200k float32 similarities: 410 MB a block


def _matrix_copy(x, name: str, dtype=np.float64) -> np.ndarray:
    x = np.array(x, dtype=dtype)  # a copy: callers' arrays are never modified
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 2-d (vectors x dimensions) array: {x.shape}")
    return x


def _check_rows(norms: np.ndarray, name: str, context: str = "") -> None:
    """Raise on a zero or non-finite row: its direction (and its cosine) is undefined."""
    bad = np.flatnonzero(~(np.isfinite(norms) & (norms > 0)))
    if bad.size:
        row = int(bad[0])
        what = "zero length" if norms[row] == 0 else "a NaN or infinite value"
        raise ValueError(
            f"{name} row {row} has {what}{context} ({bad.size} such row(s)); cosine similarity is"
            " undefined for it: remove such vectors (e.g. words without a representation) first"
        )


def _normalize_rows_inplace(x: np.ndarray, name: str, context: str = "") -> np.ndarray:
    norms = np.linalg.norm(x, axis=1)
    _check_rows(norms, name, context)
    x /= norms[:, None]
    return x


def iterative_normalization(x, rounds: int = 5) -> np.ndarray:
    """Zhang et al. (2019)'s iterative normalization, applied before Procrustes (Wu et al. §5.1).

    ``rounds`` times: scale every row to unit length, then subtract the mean of the rows, computed
    afresh from this round's unit rows; finally scale to unit length once more. The result has
    unit rows and a mean near zero (each round brings both closer together); a variant that
    reuses one mean in every round (a stale mean) stays off-centre.

    Returns a new float64 array. Raises ValueError for a zero or non-finite row (naming it), and
    for a row that centring turns into zero (it equals the mean: one row, or identical rows).
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds must be a non-negative integer, got {rounds!r}")
    x = _matrix_copy(x, "x")
    for round_number in range(1, rounds + 1):
        context = "" if round_number == 1 else f" after centring in round {round_number - 1}"
        _normalize_rows_inplace(x, "x", context)
        x -= x.mean(axis=0, keepdims=True)
    context = f" after centring in round {rounds}" if rounds else ""
    return _normalize_rows_inplace(x, "x", context)


def procrustes(source, target) -> np.ndarray:
    """The orthogonal ``W`` (d x d) minimizing ``||source @ W - target||_F`` on paired rows (§5.1).

    The paper's ``W* = U V^T`` with ``U S V^T = SVD(Y X^T)`` for column vectors; with row vectors
    ``U S V^T = SVD(source^T target)`` and ``W = U V^T``. Computed in float64.
    """
    source = _matrix_copy(source, "source")
    target = _matrix_copy(target, "target")
    if source.shape != target.shape:
        raise ValueError(
            f"source has shape {source.shape} and target {target.shape}: Procrustes needs the same"
            " number of paired rows on both sides and the same dimension (an orthogonal map is"
            " square); pass row i of both as a translation pair"
        )
    u, _, vt = np.linalg.svd(source.T @ target)
    return u @ vt


def _unit_tensor(x, name: str, dtype) -> torch.Tensor:
    if np.dtype(dtype) not in (np.float32, np.float64):
        raise ValueError(f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}")
    return torch.from_numpy(_normalize_rows_inplace(_matrix_copy(x, name, dtype), name))


def _check_dimensions(**named: torch.Tensor) -> None:
    dimensions = {name: tensor.shape[1] for name, tensor in named.items()}
    if len(set(dimensions.values())) > 1:
        listed = ", ".join(f"{name} {d}" for name, d in dimensions.items())
        raise ValueError(f"vector dimensions differ ({listed}); map both spaces to one dimension")


def _check_batch_size(batch_size: int) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")


def _mean_top_k(vectors: torch.Tensor, candidates: torch.Tensor, k: int, batch_size: int):
    """Mean cosine of each unit row of ``vectors`` to its ``k`` nearest unit ``candidates``."""
    means = np.empty(vectors.shape[0], dtype=np.float64)
    block = torch.empty(
        (min(batch_size, vectors.shape[0]), candidates.shape[0]), dtype=vectors.dtype
    )
    for start in range(0, vectors.shape[0], batch_size):
        rows = vectors[start : start + batch_size]
        similarities = torch.mm(rows, candidates.T, out=block[: rows.shape[0]])
        top = torch.topk(similarities, k, dim=1, sorted=False).values
        means[start : start + rows.shape[0]] = top.double().mean(dim=1).numpy()
    return means


def _check_k(k: int, n_candidates: int, candidates: str) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n_candidates:
        raise ValueError(
            f"k must be an integer from 1 to the number of {candidates} ({n_candidates}), got {k!r}"
        )


def mean_knn_cosine(
    vectors, candidates, *, k: int = 10, batch_size: int = DEFAULT_BATCH_SIZE, dtype=np.float32
) -> np.ndarray:
    """CSLS's neighbourhood term: each vector's mean cosine to its ``k`` nearest candidates.

    ``r_S(y)`` of Conneau et al. (2018) is ``mean_knn_cosine(targets, mapped_sources)``. Rows are
    scaled to unit length first; computed in blocks of ``batch_size`` vectors.
    """
    _check_batch_size(batch_size)
    vectors_t = _unit_tensor(vectors, "vectors", dtype)
    candidates_t = _unit_tensor(candidates, "candidates", dtype)
    _check_dimensions(vectors=vectors_t, candidates=candidates_t)
    _check_k(k, candidates_t.shape[0], "candidates")
    return _mean_top_k(vectors_t, candidates_t, k, batch_size)


def csls_top1(
    queries,
    targets,
    *,
    k: int = 10,
    sources=None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    dtype=np.float32,
) -> np.ndarray:
    """Index of each query's best target under CSLS: the paper's word translation (§5.1.1).

    ``CSLS(x, y) = 2 cos(x, y) - r_T(x) - r_S(y)`` (Conneau et al., 2018), where ``r_T(x)`` is the
    mean cosine of the mapped query ``x`` to its ``k`` nearest targets and ``r_S(y)`` the mean
    cosine of target ``y`` to its ``k`` nearest vectors among ``sources``: the whole mapped source
    vocabulary, as MUSE evaluates (default: the queries themselves). ``r_T(x)`` is the same for
    every candidate of one query, so the argmax leaves it out. Rows are scaled to unit length;
    ties go to the lowest target index.

    Memory beyond the inputs is O(batch_size x max(len(targets), len(sources))); time is
    dominated by the ``len(targets) x len(sources)`` products that ``r_S`` needs.
    """
    _check_batch_size(batch_size)
    queries_t = _unit_tensor(queries, "queries", dtype)
    targets_t = _unit_tensor(targets, "targets", dtype)
    sources_t = queries_t if sources is None else _unit_tensor(sources, "sources", dtype)
    _check_dimensions(queries=queries_t, targets=targets_t, sources=sources_t)
    _check_k(k, sources_t.shape[0], "sources")
    target_density = torch.from_numpy(_mean_top_k(targets_t, sources_t, k, batch_size))
    target_density = target_density.to(queries_t.dtype)
    best = np.empty(queries_t.shape[0], dtype=np.int64)
    for start in range(0, queries_t.shape[0], batch_size):
        scores = 2 * (queries_t[start : start + batch_size] @ targets_t.T) - target_density
        best[start : start + scores.shape[0]] = scores.argmax(dim=1).numpy()
    return best


def retrieval_p_at_1(x, y, *, batch_size: int = 1024, dtype=np.float32) -> float:
    """Share of rows of ``x`` whose cosine nearest neighbour in ``y`` is the same row (§5.1.3).

    Row i of ``x`` and of ``y`` are translations of each other; the paper reports both
    directions, ``retrieval_p_at_1(x, y)`` and ``retrieval_p_at_1(y, x)``. Ties go to the lowest
    index. Computed in blocks of ``batch_size`` rows of ``x``.
    """
    return float(retrieval_hits(x, y, batch_size=batch_size, dtype=dtype).mean())


def retrieval_hits(x, y, *, batch_size: int = 1024, dtype=np.float32) -> np.ndarray:
    """Per row of ``x``, whether its nearest neighbour in ``y`` is the same row: the hits whose
    mean is :func:`retrieval_p_at_1`."""
    _check_batch_size(batch_size)
    x_t = _unit_tensor(x, "x", dtype)
    y_t = _unit_tensor(y, "y", dtype)
    if x_t.shape != y_t.shape:
        raise ValueError(
            f"x has shape {tuple(x_t.shape)} and y {tuple(y_t.shape)}: row i of both must be"
            " translations of each other, so the shapes must match"
        )
    hits = []
    for start in range(0, x_t.shape[0], batch_size):
        nearest = (x_t[start : start + batch_size] @ y_t.T).argmax(dim=1)
        hits.append((nearest == torch.arange(start, start + nearest.shape[0])).numpy())
    return np.concatenate(hits)


Pairs = Iterable[tuple[str, str]] | Mapping[str, Iterable[str]]
# A language's words and their vectors, row i the vector of word i.
WordVectors = tuple[Sequence[str], np.ndarray]


def _word_index(words: Sequence[str], vectors: np.ndarray, side: str) -> dict[str, int]:
    if len(words) != vectors.shape[0]:
        raise ValueError(
            f"{len(words)} {side} words but {vectors.shape[0]} {side} vectors; row i of the"
            " vectors must be the vector of word i"
        )
    index: dict[str, int] = {}
    for position, word in enumerate(words):
        first = index.setdefault(word, position)
        if first != position:
            raise ValueError(
                f"the {side} word {word!r} appears twice in the vocabulary (positions {first} and"
                f" {position}); keep one vector per word"
            )
    return index


def _pairs_in_vocabulary(
    pairs: Pairs, source_index: dict[str, int], target_index: dict[str, int], dictionary: str
) -> tuple[list[tuple[int, int]], int]:
    """Unique (source row, target row) pairs whose two words are known, and the skipped count."""
    if isinstance(pairs, Mapping):  # e.g. read_muse's word -> {translation: weight}
        pairs = [(source, target) for source, targets in pairs.items() for target in targets]
    kept: dict[tuple[int, int], None] = {}  # insertion-ordered set: deterministic order
    given = skipped = 0
    sources_known = targets_known = 0
    for source, target in pairs:
        given += 1
        source_row, target_row = source_index.get(source), target_index.get(target)
        sources_known += source_row is not None
        targets_known += target_row is not None
        if source_row is None or target_row is None:
            skipped += 1
        else:
            kept[(source_row, target_row)] = None
    if not kept:
        if given == 0:
            raise ValueError(f"the {dictionary} dictionary is empty: give it translation pairs")
        raise ValueError(
            f"none of the {given} pairs of the {dictionary} dictionary has both words in the"
            f" vocabularies ({sources_known} source words and {targets_known} target words"
            " found): check that the dictionary is for this language pair, in this direction,"
            " and spelt (case, tokenization) as the vocabulary words"
        )
    return list(kept), skipped


def translation_p_at_1(
    source: WordVectors,
    target: WordVectors,
    train_pairs: Pairs,
    test_pairs: Pairs,
    *,
    k: int = 10,
    normalize_rounds: int = 5,
    batch_size: int = DEFAULT_BATCH_SIZE,
    map_spaces: bool = True,
) -> dict:
    """Word translation P@1 after a Procrustes alignment: the experiment of Wu et al. §5.1.1.

    Both spaces get iterative normalization; Procrustes learns ``W`` from the training pairs whose
    two words are in the vocabularies; every source word is mapped; each unique source word of
    the test pairs is translated by CSLS (``k`` neighbours, ``r_S`` over the whole mapped source
    vocabulary). As MUSE does, test pairs with a word outside either vocabulary are left out, and
    a source word counts once, correct if its top-1 is any of its gold translations.

    ``source`` and ``target`` are each ``(words, vectors)``, row i of the vectors the vector of word
    i. Pairs are ``(source_word, target_word)`` tuples or a mapping source word -> translations
    (such as :func:`xling.contracts.muse.read_muse` returns).

    ``map_spaces=False`` keeps the identity instead of ``W``: the unmapped baseline that shows
    what the mapping adds.

    Returns ``p_at_1``, ``n_train_pairs_used`` (unique pairs), ``n_test_words``,
    ``n_test_pairs_skipped`` and ``hits`` (each scored source word -> whether its top-1 is a gold
    translation, in dictionary order: what a bootstrap of the test words resamples). Raises
    ValueError naming the dictionary if none of its pairs is in the vocabularies.
    """
    (source_words, source_vectors), (target_words, target_vectors) = source, target
    source = iterative_normalization(source_vectors, normalize_rounds)
    target = iterative_normalization(target_vectors, normalize_rounds)
    if source.shape[1] != target.shape[1]:
        raise ValueError(
            f"source vectors have dimension {source.shape[1]} and target vectors {target.shape[1]};"
            " an orthogonal map needs one dimension (take both from layers of one width)"
        )
    source_index = _word_index(source_words, source, "source")
    target_index = _word_index(target_words, target, "target")
    train, _ = _pairs_in_vocabulary(train_pairs, source_index, target_index, "training")
    test, test_skipped = _pairs_in_vocabulary(test_pairs, source_index, target_index, "test")

    train_rows = np.array(train)
    if map_spaces:
        mapping = procrustes(source[train_rows[:, 0]], target[train_rows[:, 1]])
    else:
        mapping = np.eye(source.shape[1])
    mapped = source @ mapping
    del source  # the mapped copy replaces it: one fewer vocabulary-sized array at 200k words

    gold: dict[int, set[int]] = {}
    for source_row, target_row in test:
        gold.setdefault(source_row, set()).add(target_row)
    test_rows = list(gold)  # unique source words, in dictionary order
    top1 = csls_top1(mapped[test_rows], target, k=k, sources=mapped, batch_size=batch_size)
    hits = {
        source_words[row]: int(best) in gold[row] for row, best in zip(test_rows, top1, strict=True)
    }
    return {
        "p_at_1": sum(hits.values()) / len(test_rows),
        "n_train_pairs_used": len(train),
        "n_test_words": len(test_rows),
        "n_test_pairs_skipped": test_skipped,
        "hits": hits,
    }
