"""Linear CKA: known values, invariances, the debiased estimator, and per-layer pooling."""

import numpy as np
import pytest
import torch

from xling.analysis.cka import cka, debiased_linear_cka, linear_cka, resampled_linear_cka
from xling.analysis.representations import mean_pooled_layers
from xling.model import EncoderConfig, MLMEncoder


def gram_cka(x, y):
    """Reference: CKA through centred Gram matrices, HSIC = tr(KHLH)."""
    n = x.shape[0]
    h = np.eye(n) - np.ones((n, n)) / n
    k, l_ = h @ x @ x.T @ h, h @ y @ y.T @ h
    return np.sum(k * l_) / (np.linalg.norm(k) * np.linalg.norm(l_))


def unbiased_hsic(k, l_):
    """Song et al. (2012), written from the formula, term by term."""
    n = k.shape[0]
    k, l_ = k.copy(), l_.copy()
    np.fill_diagonal(k, 0)
    np.fill_diagonal(l_, 0)
    one = np.ones(n)
    return (
        np.trace(k @ l_)
        + (one @ k @ one) * (one @ l_ @ one) / ((n - 1) * (n - 2))
        - 2 / (n - 2) * one @ k @ l_ @ one
    ) / (n * (n - 3))


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_feature_space_equals_gram_form(rng):
    x = rng.normal(size=(50, 20)) + 3.0
    y = np.tanh(x @ rng.normal(size=(20, 15))) + rng.normal(scale=0.1, size=(50, 15))
    assert linear_cka(x, y) == pytest.approx(gram_cka(x, y), abs=1e-12)


def test_invariant_to_orthogonal_maps_and_isotropic_scaling(rng):
    x = rng.normal(size=(40, 10))
    q, _ = np.linalg.qr(rng.normal(size=(10, 10)))
    assert linear_cka(x, 3.5 * x @ q) == pytest.approx(1.0, abs=1e-12)
    assert linear_cka(x, x + 7.0) == pytest.approx(1.0, abs=1e-12)  # centring


def test_not_invariant_to_arbitrary_linear_maps(rng):
    x = rng.normal(size=(200, 10))
    assert linear_cka(x, x @ np.diag([50.0] + [1.0] * 9)) < 0.9


def test_debiased_matches_song_estimator(rng):
    x, y = rng.normal(size=(30, 8)), rng.normal(size=(30, 6))
    x, y = x - x.mean(0), y - y.mean(0)
    k, l_ = x @ x.T, y @ y.T
    expected = unbiased_hsic(k, l_) / np.sqrt(unbiased_hsic(k, k) * unbiased_hsic(l_, l_))
    assert debiased_linear_cka(x, y) == pytest.approx(expected, abs=1e-10)


def test_debiased_removes_small_sample_inflation(rng):
    # Independent wide features, few examples: biased CKA is high, debiased stays near zero.
    x, y = rng.normal(size=(25, 300)), rng.normal(size=(25, 300))
    assert linear_cka(x, y) > 0.8
    assert abs(debiased_linear_cka(x, y)) < 0.1
    assert cka(x, y, debiased=True) == debiased_linear_cka(x, y)


def test_shape_mismatch_is_an_error(rng):
    with pytest.raises(ValueError, match="examples"):
        linear_cka(rng.normal(size=(5, 3)), rng.normal(size=(6, 3)))


def test_mean_pooling_excludes_sentence_boundaries_and_padding():
    torch.manual_seed(0)
    config = EncoderConfig(vocab_size=50, languages=["en"], dim=16, layers=2, heads=2, ffn_dim=32)
    model = MLMEncoder(config).eval()
    sentences = [[7, 8, 9], [10, 11]]
    layers = mean_pooled_layers(model, sentences, "en", eos_id=3, pad_id=0)
    assert len(layers) == 3 and layers[0].shape == (2, 16) and layers[0].dtype == np.float64
    # The same sentence alone (no padding in its batch) gives the same pooled vector.
    alone = mean_pooled_layers(model, [[10, 11]], "en", eos_id=3, pad_id=0)
    with torch.no_grad():
        ids = torch.tensor([[3, 10, 11, 3]])
        hidden = model(ids, "en", output_hidden_states=True).hidden_states[-1][0, 1:3].mean(0)
    np.testing.assert_allclose(alone[-1][0], hidden.double().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layers[-1][1], alone[-1][0], rtol=1e-4, atol=1e-5)


def test_mean_pooling_keeps_the_input_order_across_length_sorted_batches():
    torch.manual_seed(1)
    config = EncoderConfig(vocab_size=50, languages=["en"], dim=16, layers=2, heads=2, ffn_dim=32)
    model = MLMEncoder(config).eval()
    # Lengths out of order, so that batches of two sorted by length mix the file's order.
    sentences = [[5, 6, 7, 8, 9], [10], [11, 12, 13], [14, 15], [16, 17, 18, 19], [20]]
    layers = mean_pooled_layers(model, sentences, "en", eos_id=3, pad_id=0, batch_size=2)
    for row, sentence in enumerate(sentences):
        alone = mean_pooled_layers(model, [sentence], "en", eos_id=3, pad_id=0)
        for pooled, single in zip(layers, alone, strict=True):
            np.testing.assert_allclose(pooled[row], single[0], rtol=1e-4, atol=1e-5)


def test_resampled_cka_is_the_cka_of_the_drawn_rows():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(60, 5)) + 40.0  # a large offset: the weighted centring must remove it
    y = x @ rng.normal(size=(5, 3)) + rng.normal(size=(60, 3))
    draws = rng.integers(0, 60, size=(25, 60))
    expected = [gram_cka(x[rows], y[rows]) for rows in draws]
    np.testing.assert_allclose(resampled_linear_cka(x, y, draws), expected, rtol=1e-10)
    # the identity draw is the run's own CKA
    assert resampled_linear_cka(x, y, np.arange(60)[None])[0] == pytest.approx(linear_cka(x, y))
    with pytest.raises(ValueError, match="x has 60 examples and y has 59"):
        resampled_linear_cka(x, y[:59], draws)
    assert resampled_linear_cka(x, y, draws[:0]).shape == (0,)  # report.resamples: 0


def test_figure7_resamples_share_one_draw_across_encoders_and_layers():
    from xling.analysis.cka import parallel_draws
    from xling.analysis.similarity import ComparedStates, figure7_resample_rows

    rng = np.random.default_rng(12)
    english = [rng.normal(size=(40, 4)) for _ in range(2)]
    lengths = rng.integers(3, 20, size=40)
    states = {
        encoder: ComparedStates(english, other, lengths, lengths)
        for encoder, other in (
            ("monolingual", [e + rng.normal(size=e.shape) for e in english]),
            ("random", [rng.normal(size=(40, 4)) for _ in range(2)]),
        )
    }
    draws = parallel_draws(7, "en-fr", 30, 40)
    np.testing.assert_array_equal(draws, parallel_draws(7, "en-fr", 30, 40))
    assert not np.array_equal(draws, parallel_draws(7, "en-de", 30, 40))
    rows = figure7_resample_rows(states, draws)
    assert len(rows) == 30 * 2 * 2
    assert figure7_resample_rows(states, parallel_draws(7, "en-fr", 0, 40)) == []
    assert [row["replicate"] for row in rows] == sorted(row["replicate"] for row in rows)
    picked = next(r for r in rows if (r["replicate"], r["encoder"], r["layer"]) == (4, "random", 1))
    rows_drawn = draws[4]
    assert picked["cka"] == pytest.approx(
        linear_cka(english[1][rows_drawn], states["random"][1][1][rows_drawn])
    )


# --- sentence length ---------------------------------------------------------------------------


def test_the_length_only_control_is_the_squared_correlation_of_the_lengths():
    from xling.analysis.cka import length_feature

    rng = np.random.default_rng(3)
    source = rng.integers(4, 30, size=200)
    target = source + rng.integers(-3, 4, size=200)
    expected = np.corrcoef(source, target)[0, 1] ** 2
    assert linear_cka(length_feature(source), length_feature(target)) == pytest.approx(expected)


def test_length_controlled_cka_removes_what_length_alone_gives():
    from xling.analysis.cka import length_controlled_cka, length_residuals

    rng = np.random.default_rng(4)
    lengths = rng.integers(3, 12, size=300)
    # states that are a nonlinear function of length (a mean of position vectors) plus noise
    # of their own: plain CKA is high, the length-controlled one near 0
    positions = rng.normal(size=(12, 16))
    by_length = np.stack([positions[:n].mean(axis=0) for n in lengths])
    x = by_length + 0.05 * rng.normal(size=by_length.shape)
    y = by_length @ rng.normal(size=(16, 16)) + 0.05 * rng.normal(size=by_length.shape)
    assert linear_cka(x, y) > 0.5
    assert length_controlled_cka(x, y, lengths, lengths) < 0.1
    assert np.allclose(length_residuals(by_length, lengths), 0.0)
    # what the two sides share beyond length survives the control
    shared = rng.normal(size=(300, 16))
    kept = length_controlled_cka(x + shared, y + shared, lengths, lengths)
    assert kept > 0.5
    # a side that is length and nothing else shares nothing else
    assert length_controlled_cka(by_length, y, lengths, lengths) == 0.0


def test_length_controlled_cka_is_undefined_where_every_length_is_distinct():
    from xling.analysis.cka import length_controlled_cka

    rng = np.random.default_rng(8)
    x, y = rng.normal(size=(30, 6)), rng.normal(size=(30, 5))
    distinct = rng.permutation(np.arange(3, 33))  # every sentence alone with its length
    repeated = rng.integers(3, 9, size=30)
    # nothing is left to measure on either side: not 0 ("no similarity") but NaN
    assert np.isnan(length_controlled_cka(x, y, distinct, repeated))
    assert np.isnan(length_controlled_cka(x, y, repeated, distinct))
    assert np.isnan(length_controlled_cka(x, x, distinct, distinct))
    # one pair of sentences sharing a length is enough for a number
    one_pair = distinct.copy()
    one_pair[1] = one_pair[0]
    assert np.isfinite(length_controlled_cka(x, x, one_pair, one_pair))
    assert length_controlled_cka(x, x, one_pair, one_pair) == pytest.approx(1.0)


def test_length_residuals_name_bad_shapes():
    from xling.analysis.cka import length_residuals

    with pytest.raises(ValueError, match="n lengths"):
        length_residuals(np.zeros((5, 2)), [1, 2, 3])


def test_figure7_rows_carry_the_control_and_the_length_controlled_cka():
    from xling.analysis.cka import length_feature
    from xling.analysis.similarity import LENGTH, ComparedStates, figure7_rows

    rng = np.random.default_rng(5)
    lengths = rng.integers(3, 20, size=60)
    english = [rng.normal(size=(60, 4)) + lengths[:, None] for _ in range(2)]
    states = {
        "monolingual": ComparedStates(english, [e + rng.normal(size=e.shape) for e in english],
                                      lengths, lengths),
        LENGTH: ComparedStates([length_feature(lengths)] * 2, [length_feature(lengths)] * 2,
                               lengths, lengths),
    }  # fmt: skip
    rows = figure7_rows(states)
    control = [row for row in rows if row["encoder"] == LENGTH]
    assert [row["cka"] for row in control] == pytest.approx([1.0, 1.0])
    assert all(row["cka_length_controlled"] is None for row in control)
    trained = next(row for row in rows if row["encoder"] == "monolingual")
    assert trained["cka_length_controlled"] < trained["cka"]
    assert trained["cka_debiased"] is not None
    assert figure7_rows(states, debiased=False)[0]["cka_debiased"] is None


# --- Muller et al.'s released measure -----------------------------------------------------------


def test_rbf_cka_is_one_for_the_same_states_and_scale_free():
    from xling.analysis.cka import rbf_cka

    rng = np.random.default_rng(6)
    x = rng.normal(size=(50, 8))
    assert rbf_cka(x, x) == pytest.approx(1.0)
    y = x @ np.linalg.qr(rng.normal(size=(8, 8)))[0] * 7.0  # rotated and scaled
    assert rbf_cka(x, y) == pytest.approx(1.0)
    assert rbf_cka(x, rng.normal(size=(50, 8))) < 0.5
    with pytest.raises(ValueError, match="must match"):
        rbf_cka(x, x[:10])


def released_rbf_cka(x, y, threshold=1.0):
    """Reference, written from Kornblith et al.'s (2019) notebook as Muller et al.'s released code
    applies it: per side, the squared distances between rows (here from the rows' differences,
    so equal rows are exactly 0 apart), sigma^2 = threshold^2 x the median of the non-zero ones,
    K = exp(-d^2 / (2 sigma^2)); then HSIC(K, L) = tr(KHLH), H the centring matrix, and CKA =
    HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L))."""
    n = x.shape[0]
    centring = np.eye(n) - np.ones((n, n)) / n
    grams = []
    for states in (x, y):
        states = np.asarray(states, dtype=np.float64)
        squared = np.stack([((states - row) ** 2).sum(axis=1) for row in states])
        sigma_squared = threshold**2 * np.median(squared[squared != 0])
        grams.append(centring @ np.exp(-squared / (2 * sigma_squared)) @ centring)
    k, l_ = grams
    return np.sum(k * l_) / np.sqrt(np.sum(k * k) * np.sum(l_ * l_))


def _rbf_inputs(rng, n, width):
    """Two related sides with an offset and a scale of their own (centring must not matter)."""
    x = rng.normal(size=(n, width)) * rng.uniform(0.5, 5.0) + 3.0 * rng.normal(size=width)
    y = np.tanh(x @ rng.normal(size=(width, 12))) + 0.3 * rng.normal(size=(n, 12))
    return x, y


# 40 sentences of width 300 is where the old kernel width was worst (off by 1e-3 without
# resampling, 4e-3 with); 120 x 16 narrow and longer.
RBF_SHAPES = [(40, 300), (120, 16)]


@pytest.mark.parametrize(("n", "width"), RBF_SHAPES)
def test_rbf_cka_is_the_released_definition_on_random_inputs(n, width):
    from xling.analysis.cka import rbf_cka

    rng = np.random.default_rng(n + width)
    for _ in range(3):
        x, y = _rbf_inputs(rng, n, width)
        assert abs(rbf_cka(x, y) - released_rbf_cka(x, y)) < 1e-12
        assert abs(rbf_cka(x, y, 0.5) - released_rbf_cka(x, y, 0.5)) < 1e-12


@pytest.mark.parametrize(("n", "width"), RBF_SHAPES)
def test_rbf_cka_is_the_released_definition_on_bootstrap_resamples(n, width):
    from xling.analysis.cka import rbf_cka, rbf_gram

    rng = np.random.default_rng(2 * n + width)
    x, y = _rbf_inputs(rng, n, width)
    for rows in rng.integers(0, n, size=(8, n)):
        assert len(set(rows)) < n  # some sentences drawn twice
        assert abs(rbf_cka(x[rows], y[rows]) - released_rbf_cka(x[rows], y[rows])) < 1e-12
        # a row and itself, and a sentence drawn twice, are exactly 0 apart: a kernel of 1
        gram = rbf_gram(x[rows])
        assert np.all(gram[rows[:, None] == rows[None, :]] == 1.0)
        assert np.all(gram[rows[:, None] != rows[None, :]] < 1.0)


@pytest.mark.parametrize(("n", "width"), RBF_SHAPES)
def test_rbf_cka_is_invariant_to_an_orthogonal_map_of_either_side(n, width):
    from xling.analysis.cka import rbf_cka

    rng = np.random.default_rng(3 * n + width)
    x, y = _rbf_inputs(rng, n, width)
    rotate_x = np.linalg.qr(rng.normal(size=(width, width)))[0]
    rotate_y = np.linalg.qr(rng.normal(size=(12, 12)))[0]
    assert abs(rbf_cka(x @ rotate_x, y) - released_rbf_cka(x, y)) < 1e-12
    assert abs(rbf_cka(x, y @ rotate_y) - released_rbf_cka(x, y)) < 1e-12
    for rows in rng.integers(0, n, size=(4, n)):
        expected = released_rbf_cka(x[rows], y[rows])
        # rotated before the draw (copies stay equal) and after it (the product may round a
        # sentence's two copies apart by 1e-16: still one sentence)
        assert abs(rbf_cka((x @ rotate_x)[rows], y[rows]) - expected) < 1e-12
        assert abs(rbf_cka(x[rows] @ rotate_x, y[rows]) - expected) < 1e-12
        assert abs(rbf_cka(x[rows], y[rows] @ rotate_y) - expected) < 1e-12


def test_windowed_cka_is_the_mean_over_disjoint_windows():
    from xling.analysis.cka import windowed_cka

    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(41, 5)), rng.normal(size=(41, 5))
    parts = np.array_split(np.arange(41), 4)
    expected = np.mean([linear_cka(x[p], y[p]) for p in parts])
    assert windowed_cka(x, y, 4, linear_cka) == pytest.approx(expected)
    with pytest.raises(ValueError, match="at least 4"):
        windowed_cka(x, y, 11, linear_cka)
