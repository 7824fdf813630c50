"""Linear CKA (Kornblith et al. 2019), as Wu, Conneau et al. (2020, §5.2) use it.

    CKA(X, Y) = ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F)   on column-centred X (n x d1), Y (n x d2)

Computed in float64 with the feature-space form: d x d products instead of n x n Gram matrices,
8-20x faster at n = 10k, d = 768 (0.34 s against 2.8-6.9 s on 2 CPU cores), and float32 sums are
off by up to 1e-3 at that size where the float64 forms agree to 4e-15. The debiased estimator
(unbiased HSIC, Song et al. 2012) is available because biased CKA is inflated when sentences are
few compared with the width. On bootstrap resamples of the sentences (:func:`resampled_linear_cka`)
the Gram form wins instead: the Gram matrices are computed once for all resamples
(``bench/cka_resamples.py``: 5x faster than each resample's own CKA at the demo's 1,000 x 64,
17x at the paper's 5,000 x 768, 200 resamples, equal to 1e-15).

Two controls for what sentence length alone gives (docs/deviations.md): :func:`length_feature`,
a sentence's length in subword tokens as its only feature, whose CKA between two sides is the
squared correlation of their lengths; and :func:`length_controlled_cka`, the CKA after each side's
states lose the mean state of the sentences of their length (:func:`length_residuals`), so that
no function of length alone is left in them (NaN where a side's lengths are all distinct: nothing
is left to measure). And the measure of Muller et al.'s released code
(:func:`rbf_cka`, :func:`windowed_cka`): Kornblith et al.'s kernel CKA with an RBF kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

Measure = Callable[[np.ndarray, np.ndarray], float]


def _as_centered_float64(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-d (examples x features) array, got shape {x.shape}")
    return x - x.mean(axis=0, keepdims=True)


def linear_cka(x, y) -> float:
    """Biased linear CKA of two representations of the same ``n`` examples."""
    x, y = _as_centered_float64(x), _as_centered_float64(y)
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} examples and y has {y.shape[0]}; they must match")
    cross = np.linalg.norm(y.T @ x) ** 2
    denominator = np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y)
    return float(cross / denominator) if denominator > 0 else float("nan")


def _unbiased_hsic_terms(gram_x: np.ndarray, gram_y: np.ndarray) -> float:
    """Song et al. (2012)'s unbiased HSIC estimator, up to the common factor 1/(n(n-3))."""
    n = gram_x.shape[0]
    kx = gram_x.copy()
    ky = gram_y.copy()
    np.fill_diagonal(kx, 0.0)
    np.fill_diagonal(ky, 0.0)
    ones_x = kx.sum(axis=0)
    ones_y = ky.sum(axis=0)
    trace_term = float(np.sum(kx * ky))
    sum_term = float(ones_x.sum() * ones_y.sum()) / ((n - 1) * (n - 2))
    cross_term = 2.0 * float(ones_x @ ones_y) / (n - 2)
    return trace_term + sum_term - cross_term


def debiased_linear_cka(x, y) -> float:
    """Linear CKA from unbiased HSIC estimates; near 0 for independent inputs even when n < d.

    Uses n x n Gram matrices (the estimator needs their diagonals removed), so keep n to a few
    thousand sentences.
    """
    x, y = _as_centered_float64(x), _as_centered_float64(y)
    n = x.shape[0]
    if n < 4:
        raise ValueError(f"the unbiased estimator needs at least 4 examples, got {n}")
    gram_x, gram_y = x @ x.T, y @ y.T
    xy = _unbiased_hsic_terms(gram_x, gram_y)
    xx = _unbiased_hsic_terms(gram_x, gram_x)
    yy = _unbiased_hsic_terms(gram_y, gram_y)
    if xx <= 0 or yy <= 0:
        return float("nan")  # a negative self-HSIC estimate: too few examples for this estimator
    return float(xy / np.sqrt(xx * yy))


def cka(x, y, debiased: bool = False) -> float:
    return debiased_linear_cka(x, y) if debiased else linear_cka(x, y)


def resampled_linear_cka(x, y, draws: np.ndarray) -> np.ndarray:
    """Biased linear CKA on each bootstrap resample of the examples: ``draws`` holds one row of
    example indices (drawn with replacement) per resample; the CKA of ``x[row]`` and ``y[row]``.

    A resample weights each example by how often it was drawn (w), and the weighted HSIC comes
    from the n x n Gram matrices K = XX^T, L = YY^T alone (centring with the weighted mean):

        ||X~^T W Y~||_F^2 = w^T (K o L) w - (2/S) sum_i w_i (Kw)_i (Lw)_i + (w^T K w)(w^T L w)/S^2

    with S = sum(w), so all resamples take a few matrix products of (resamples x n) by (n x n):
    at the paper study's 5,000 sentences of width 768, about 50 GFLOP for 200 resamples, where
    recomputing the d x d products of each resample costs about 3,500. Memory: a few n x n
    float64 matrices (1 GB at n = 5,000).
    """
    x, y = _as_centered_float64(x), _as_centered_float64(y)  # shift-free; keeps the terms small
    n = x.shape[0]
    if n != y.shape[0]:
        raise ValueError(f"x has {n} examples and y has {y.shape[0]}; they must match")
    draws = np.asarray(draws, dtype=np.int64).reshape(-1, n)
    if len(draws) == 0:  # report.resamples: 0
        return np.empty(0)
    counts = np.stack([np.bincount(rows, minlength=n) for rows in draws]).astype(np.float64)
    gram_x, gram_y = x @ x.T, y @ y.T
    cross = _weighted_hsic(counts, gram_x, gram_y)
    denominator = _weighted_hsic(counts, gram_x, gram_x) * _weighted_hsic(counts, gram_y, gram_y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, cross / np.sqrt(denominator), np.nan)


def _weighted_hsic(counts: np.ndarray, gram_a: np.ndarray, gram_b: np.ndarray) -> np.ndarray:
    """Per resample (a row w of ``counts``), ||A~^T W B~||_F^2 (W = diag(w), A~ and B~ centred
    on their w-weighted means) from A's and B's Gram matrices: see :func:`resampled_linear_cka`."""
    total = counts.sum(axis=1)
    weighted_a = counts @ gram_a
    weighted_b = weighted_a if gram_b is gram_a else counts @ gram_b
    quadratic = np.einsum("rn,rn->r", counts @ (gram_a * gram_b), counts)
    middle = np.einsum("rn,rn,rn->r", counts, weighted_a, weighted_b)
    outer = np.einsum("rn,rn->r", counts, weighted_a) * np.einsum("rn,rn->r", counts, weighted_b)
    return quadratic - 2.0 * middle / total + outer / total**2


def parallel_draws(seed: int, name: str, replicates: int, size: int) -> np.ndarray:
    """Bootstrap resamples (one row of sentence indices each) of a set of parallel sentences:
    a pair's for Wu's Figure 7, ``"muller"`` for Muller et al.'s similarity; drawn as the test
    sets' are (``xling.base.bootstrap.bootstrap_draws``), a function of the seed and the name."""
    from xling.base.bootstrap import bootstrap_draws

    return bootstrap_draws(seed, ("parallel", name), replicates, size)


def resampled_cka_rows(
    comparisons: Iterable[tuple[Mapping, np.ndarray, np.ndarray]],
    draws: np.ndarray,
    measure: Measure | None = None,
) -> list[dict]:
    """For each comparison ``(keys, x, y)``, its CKA on every resample of ``draws``: rows
    ``replicate``, the keys, ``cka``, in replicate order. The biased linear CKA by default, from
    the Gram matrices once for all resamples (:func:`resampled_linear_cka`); another ``measure``
    is computed again on each resample's rows. One draw serves every comparison, so two of them
    are compared on the same sentences; a pair of arrays that several comparisons share (a length
    control, the same at every layer) is resampled once."""
    rows = []
    done: dict[tuple[int, int], tuple] = {}  # keeps x and y alive, so that their ids stay theirs
    for keys, x, y in comparisons:
        if (id(x), id(y)) not in done:
            if measure is None:
                values = resampled_linear_cka(x, y, draws)
            else:
                values = [measure(x[drawn], y[drawn]) for drawn in draws]
            done[id(x), id(y)] = (x, y, values)
        for replicate, value in enumerate(done[id(x), id(y)][2]):
            rows.append({"replicate": replicate, **keys, "cka": value})
    return sorted(rows, key=lambda row: row["replicate"])


# --- sentence length --------------------------------------------------------------------------

# The name of the length-only control among the encoders (Figure 7) and the models (Muller et
# al.'s similarity.csv): a feature that knows each sentence's length and nothing else.
LENGTH = "length"

# A residual this small against the states it came from is float rounding: nothing but length.
_NOTHING_LEFT = 1e-9


def length_feature(lengths) -> np.ndarray:
    """Each sentence's length in subword tokens as its one feature (n x 1, float64): the
    representation that knows length and nothing else. Its linear CKA against another side's is
    the squared Pearson correlation of the two sides' lengths, a number of the sentences alone,
    whatever the model."""
    lengths = np.asarray(lengths, dtype=np.float64)
    if lengths.ndim != 1:
        raise ValueError(f"expected one length per sentence, got shape {lengths.shape}")
    return lengths[:, None]


def length_residuals(x, lengths) -> np.ndarray:
    """``x`` (n x d) less, in each row, the mean row of the sentences of the same length: the
    least-squares fit on length as a category (one indicator per length) taken out, so that any
    function of length alone, however nonlinear (a mean of position vectors), leaves zeros. A
    length that one sentence alone has leaves that sentence a zero row."""
    x = np.asarray(x, dtype=np.float64)
    lengths = np.asarray(lengths)
    if x.ndim != 2 or lengths.shape != (x.shape[0],):
        raise ValueError(
            f"expected (n x d) states and n lengths, got shapes {x.shape} and {lengths.shape}"
        )
    _, group = np.unique(lengths, return_inverse=True)
    sums = np.zeros((group.max() + 1, x.shape[1]))
    np.add.at(sums, group, x)
    counts = np.bincount(group)[:, None]
    return x - (sums / counts)[group]


def length_controlled_cka(x, y, x_lengths, y_lengths, measure: Measure | None = None) -> float:
    """``measure`` (default :func:`linear_cka`) of ``x`` and ``y`` after each has lost what its
    own sentences' lengths predict (:func:`length_residuals`).

    NaN where a side's lengths are all distinct: each sentence is then the only one of its length
    and leaves a zero row whatever its states, so the sentences cannot tell a model's similarity
    beyond length (not "none": cannot be measured; the csv's cell is empty). Where lengths repeat,
    a side with nothing left but length (its residual is rounding next to its centred states)
    shares nothing else: 0."""
    measure = measure or linear_cka
    residuals, nothing_left = [], False
    for states, lengths in ((x, x_lengths), (y, y_lengths)):
        centred = _as_centered_float64(states)
        residual = length_residuals(centred, lengths)
        if np.unique(lengths).size == residual.shape[0]:
            return float("nan")
        nothing_left |= bool(np.linalg.norm(residual) <= _NOTHING_LEFT * np.linalg.norm(centred))
        residuals.append(residual)
    return 0.0 if nothing_left else measure(*residuals)


# --- Muller et al.'s released measure ---------------------------------------------------------


# Two rows whose squared distance is below this share of their squared norms are one row to
# rounding: the Gram form |a|^2 + |b|^2 - 2 a.b is off by about 1e-15 of the norms (1e-13 at most
# for widths of a few thousand), and a row drawn twice stays a row drawn twice after a rotation
# whose products round its copies apart by ~1e-16.
_SAME_ROW = 1e-10


def _squared_distances(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The squared distances between the rows of ``x``, exactly 0 between rows equal to rounding
    (a row and itself, a sentence that a bootstrap resample drew twice), and the mask of the
    pairs of distinct rows: otherwise the rounding of the Gram form passes for a distance, enters
    the median and moves with a rotation of the rows."""
    distances = x @ x.T
    norms = np.diag(distances).copy()
    distances *= -2.0  # in place: a few n x n arrays at most (200 MB each at n = 5,000)
    distances += norms[:, None]
    distances += norms[None, :]
    same = distances <= _SAME_ROW * np.add.outer(norms, norms)
    distances[same] = 0.0
    return distances, ~same


def rbf_gram(x, width: float = 1.0) -> np.ndarray:
    """The RBF kernel's Gram matrix exp(-|xi - xj|^2 / (2 s^2)) of the rows of ``x``, with s
    ``width`` times the median distance between rows: s^2 = width^2 x the median of the non-zero
    squared distances (those of the pairs of distinct rows), as the released code of Muller et al.
    (width 1; Kornblith et al.'s notebook shows 0.5). Equal rows are exactly 0 apart
    (:func:`_squared_distances`). NaN where all rows are equal."""
    distances, distinct = _squared_distances(_as_centered_float64(x))
    scale = np.median(distances[distinct]) if distinct.any() else 0.0
    if not scale > 0:
        return np.full_like(distances, np.nan)
    return np.exp(-distances / (2.0 * width**2 * scale))


def kernel_cka(gram_x: np.ndarray, gram_y: np.ndarray) -> float:
    """Biased CKA of two Gram matrices (Kornblith et al. 2019): HSIC(K, L) = tr(KHLH), H the
    centring matrix, normalised by sqrt(HSIC(K, K) HSIC(L, L))."""
    centred = []
    for gram in (gram_x, gram_y):
        gram = np.asarray(gram, dtype=np.float64)
        gram = gram - gram.mean(axis=0, keepdims=True)
        centred.append(gram - gram.mean(axis=1, keepdims=True))
    kx, ky = centred
    denominator = np.linalg.norm(kx) * np.linalg.norm(ky)
    return float(np.sum(kx * ky) / denominator) if denominator > 0 else float("nan")


def rbf_cka(x, y, width: float = 1.0) -> float:
    """Kernel CKA with an RBF kernel whose width is ``width`` times each side's median distance
    (:func:`rbf_gram`)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} examples and y has {y.shape[0]}; they must match")
    return kernel_cka(rbf_gram(x, width), rbf_gram(y, width))


def windowed_cka(x, y, windows: int, measure: Measure) -> float:
    """The mean of ``measure`` over ``windows`` consecutive, disjoint runs of the examples (sizes
    differing by one at most), each window a CKA of its own (centred and kernel-scaled on its own
    examples)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} examples and y has {y.shape[0]}; they must match")
    if not 1 <= windows <= x.shape[0] // 4:
        raise ValueError(f"{windows} windows of {x.shape[0]} examples: each needs at least 4")
    parts = np.array_split(np.arange(x.shape[0]), windows)
    return float(np.mean([measure(x[rows], y[rows]) for rows in parts]))
