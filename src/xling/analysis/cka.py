"""Linear CKA (Kornblith et al. 2019), as Wu, Conneau et al. (2020, §5.2) use it.

    CKA(X, Y) = ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F)   on column-centred X (n x d1), Y (n x d2)

Computed in float64 with the feature-space form: d x d products instead of n x n Gram matrices,
8-20x faster at n = 10k, d = 768 (0.34 s against 2.8-6.9 s on 2 CPU cores), and float32 sums are
off by up to 1e-3 at that size where the float64 forms agree to 4e-15. The debiased estimator
(unbiased HSIC, Song et al. 2012) is available because biased CKA is inflated when sentences are
few compared with the width.
"""

from __future__ import annotations

import numpy as np


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


# Largest examples x d1 x d2 product the batched form below holds in memory (256 MB of float64).
_BATCHED_ELEMENTS = 2**25


def resampled_linear_cka(x, y, draws: np.ndarray) -> np.ndarray:
    """Biased linear CKA on each bootstrap resample of the examples: ``draws`` holds one row of
    example indices (drawn with replacement) per resample; the CKA of ``x[row]`` and ``y[row]``.

    A resample is the examples weighted by how often it drew each, so every resample's d x d
    products come from one matrix product over all resamples (counts x per-example outer
    products): 200 resamples of 1,000 x 64 take about 0.03 s instead of 0.3 s one by one. Where
    the outer products would not fit in memory (the paper's 5,000 x 768), one resample at a time.
    """
    x, y = _as_centered_float64(x), _as_centered_float64(y)  # CKA ignores any shift: precision
    n = x.shape[0]
    if n != y.shape[0]:
        raise ValueError(f"x has {n} examples and y has {y.shape[0]}; they must match")
    draws = np.asarray(draws)
    if n * max(x.shape[1], y.shape[1]) ** 2 > _BATCHED_ELEMENTS:
        return np.array([linear_cka(x[rows], y[rows]) for rows in draws])
    counts = np.stack([np.bincount(rows, minlength=n) for rows in draws]).astype(np.float64)
    cross = _weighted_scatter(counts, x, y)
    denominator = _weighted_scatter(counts, x, x) * _weighted_scatter(counts, y, y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, cross**2 / denominator, np.nan)


def _weighted_scatter(counts: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per resample (a row of ``counts``), the Frobenius norm of the weighted, weight-centred
    cross-product matrix A~^T W B~ (W = diag(counts)): that of the drawn rows, centred."""
    n, da, db = a.shape[0], a.shape[1], b.shape[1]
    total = counts.sum(axis=1)
    raw = counts @ (a[:, :, None] * b[:, None, :]).reshape(n, da * db)
    mean_a, mean_b = (counts @ a) / total[:, None], (counts @ b) / total[:, None]
    means = total[:, None, None] * mean_a[:, :, None] * mean_b[:, None, :]
    centred = raw.reshape(-1, da, db) - means
    return np.sqrt(np.sum(centred**2, axis=(1, 2)))
