"""Procrustes alignment, iterative normalization, CSLS and retrieval P@1 (Wu et al. §5.1)."""

import numpy as np
import pytest

from xling.analysis.alignment import (
    csls_top1,
    iterative_normalization,
    mean_knn_cosine,
    procrustes,
    retrieval_hits,
    retrieval_p_at_1,
    translation_p_at_1,
)
from xling.contracts.items import hits_string


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def random_orthogonal(rng, d):
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def brute_force_csls(queries, targets, sources, k):
    """Every CSLS score from the formula, r_T included; (top-1 indices, r_S)."""
    queries, targets, sources = unit(queries), unit(targets), unit(sources)
    cos_query_target = queries @ targets.T
    r_target = np.sort(cos_query_target, axis=1)[:, -k:].mean(axis=1)  # r_T(x)
    r_source = np.sort(targets @ sources.T, axis=1)[:, -k:].mean(axis=1)  # r_S(y)
    scores = 2 * cos_query_target - r_target[:, None] - r_source[None, :]
    return scores.argmax(axis=1), r_source


def test_procrustes_recovers_an_orthogonal_map(rng):
    source = rng.normal(size=(100, 16))
    mapping = random_orthogonal(rng, 16)
    recovered = procrustes(source, source @ mapping)
    assert np.abs(recovered - mapping).max() < 1e-10
    assert np.abs(recovered.T @ recovered - np.eye(16)).max() < 1e-12


def test_procrustes_names_mismatched_shapes(rng):
    with pytest.raises(ValueError, match=r"source has shape \(10, 4\) and target \(9, 4\)"):
        procrustes(rng.normal(size=(10, 4)), rng.normal(size=(9, 4)))


def stale_mean_normalization(x, rounds=5):
    """The variant the module must not be: a mean taken once, before the rounds, reused."""
    x = unit(np.asarray(x, dtype=np.float64))
    stale_mean = x.mean(axis=0)
    for _ in range(rounds):
        x = unit(x) - stale_mean
    return unit(x)


def test_iterative_normalization_reaches_unit_length_and_zero_mean(rng):
    x = rng.normal(size=(500, 20)) * rng.uniform(0.5, 3.0, size=(500, 1)) + 2.0
    normalized = iterative_normalization(x)
    assert np.abs(np.linalg.norm(normalized, axis=1) - 1).max() < 1e-12
    assert np.linalg.norm(normalized.mean(axis=0)) < 1e-3
    assert np.linalg.norm(unit(x).mean(axis=0)) > 0.5  # the data did start off-centre
    stale = stale_mean_normalization(x)
    assert np.abs(normalized - stale).max() > 1e-2
    assert np.linalg.norm(stale.mean(axis=0)) > 10 * np.linalg.norm(normalized.mean(axis=0))


def test_iterative_normalization_leaves_its_input_alone(rng):
    x = rng.normal(size=(30, 5)) + 1.0
    before = x.copy()
    iterative_normalization(x)
    assert np.array_equal(x, before)


def test_iterative_normalization_names_a_zero_row(rng):
    x = rng.normal(size=(10, 4))
    x[3] = 0.0
    with pytest.raises(ValueError, match="x row 3 has zero length"):
        iterative_normalization(x)


def test_iterative_normalization_names_a_row_that_centring_zeroes():
    with pytest.raises(ValueError, match="row 0 has zero length after centring in round 1"):
        iterative_normalization(np.ones((4, 3)))


@pytest.mark.parametrize(
    ("n_queries", "n_targets", "n_sources", "k", "batch_size"),
    [
        (37, 41, None, 1, 5),
        (37, 41, None, 3, 7),
        (23, 50, 64, 10, 9),
        (40, 40, 40, 5, 1000),
    ],
)
def test_csls_matches_the_formula_by_brute_force(
    rng, n_queries, n_targets, n_sources, k, batch_size
):
    queries = rng.normal(size=(n_queries, 12))
    targets = rng.normal(size=(n_targets, 12)) * 3.0  # not unit: the function normalizes
    sources = None if n_sources is None else rng.normal(size=(n_sources, 12))
    expected, r_source = brute_force_csls(
        queries, targets, queries if sources is None else sources, k
    )
    for dtype in (np.float64, np.float32):
        top1 = csls_top1(queries, targets, k=k, sources=sources, batch_size=batch_size, dtype=dtype)
        assert np.array_equal(top1, expected)
    nearest = (unit(queries) @ unit(targets).T).argmax(axis=1)
    if k > 1:  # the hubness penalty must change some choices, or the test checks nothing
        assert not np.array_equal(nearest, expected)
    density = mean_knn_cosine(
        targets,
        queries if sources is None else sources,
        k=k,
        batch_size=batch_size,
        dtype=np.float64,
    )
    assert np.abs(density - r_source).max() < 1e-12


def test_csls_checks_k_against_the_sources(rng):
    with pytest.raises(ValueError, match=r"k must be an integer from 1 to the number of sources"):
        csls_top1(rng.normal(size=(5, 3)), rng.normal(size=(8, 3)), k=6)


def test_retrieval_of_identical_spaces_is_perfect_and_of_a_permutation_near_chance(rng):
    x = rng.normal(size=(300, 32))
    assert retrieval_p_at_1(x, x.copy(), batch_size=64) == 1.0
    permuted = x[rng.permutation(300)]
    fixed_points = np.mean(np.all(permuted == x, axis=1))
    assert retrieval_p_at_1(x, permuted, batch_size=64) == pytest.approx(fixed_points)
    assert retrieval_p_at_1(x, permuted, batch_size=64) < 0.05


def test_retrieval_counts_a_near_translation(rng):
    x = rng.normal(size=(50, 8))
    y = x + rng.normal(scale=0.01, size=x.shape)
    y[7] = -x[7]  # one row whose translation points the other way
    assert retrieval_p_at_1(x, y, batch_size=13) == pytest.approx(49 / 50)


def test_sentence_retrieval_of_a_rotated_space_needs_the_map(rng):
    from xling.analysis.sentences import layer_retrieval

    source = rng.normal(size=(700, 16))
    rotation = random_orthogonal(rng, 16)
    target = source @ rotation + rng.normal(scale=0.05, size=source.shape)
    train, test = slice(0, 500), slice(500, 700)
    forward, backward = layer_retrieval(
        (source[train], target[train]), (source[test], target[test])
    )
    for mapped, unmapped in (forward, backward):
        assert mapped.shape == unmapped.shape == (200,)  # a hit per held-out sentence
        assert mapped.all()  # the map fitted on other sentences aligns the held-out ones
        assert unmapped.mean() < 0.1  # without it, a rotated space retrieves near chance


def test_retrieval_hits_mark_each_query_and_average_to_p_at_1(rng):
    x = rng.normal(size=(50, 8))
    y = x.copy()
    y[[3, 7]] = y[[7, 3]]  # two translations swapped: queries 3 and 7 retrieve the wrong row
    hits = retrieval_hits(x, y, batch_size=13)
    assert hits.dtype == bool and list(np.flatnonzero(~hits)) == [3, 7]
    assert retrieval_p_at_1(x, y, batch_size=13) == hits.mean() == 48 / 50
    assert hits_string([True, False, None]) == "yn-"  # xling.contracts.items: csv-safe letters


def test_retrieval_names_mismatched_shapes(rng):
    with pytest.raises(ValueError, match=r"x has shape \(5, 3\) and y \(6, 3\)"):
        retrieval_p_at_1(rng.normal(size=(5, 3)), rng.normal(size=(6, 3)))


@pytest.fixture
def planted(rng):
    """Target words are the source words under an orthogonal map plus small noise, shuffled."""
    n, d = 1000, 32
    source = rng.normal(size=(n, d)) + 0.5
    target = source @ random_orthogonal(rng, d) + rng.normal(scale=0.01, size=(n, d))
    order = rng.permutation(n)  # target row j holds the translation of source word order[j]
    source_words = [f"s{i}" for i in range(n)]
    target_words = [f"t{i}" for i in order]
    return (source_words, source), (target_words, target[order])


def test_translation_of_planted_pairs_is_near_perfect(planted):
    source, target = planted
    train = [(f"s{i}", f"t{i}") for i in range(500)]
    test = [(f"s{i}", f"t{i}") for i in range(500, 700)] + [("s900", "unknown"), ("zz", "t901")]
    result = translation_p_at_1(source, target, train, test)
    assert result["p_at_1"] >= 0.99
    assert result["n_train_pairs_used"] == 500
    assert result["n_test_words"] == 200
    assert result["n_test_pairs_skipped"] == 2
    # which test words it got right, in dictionary order: what the claims check resamples
    assert list(result["hits"]) == [f"s{i}" for i in range(500, 700)]
    assert sum(result["hits"].values()) / 200 == result["p_at_1"]
    wrong = [(f"s{i}", f"t{i + 1}") for i in range(500)]  # not translations: no map fits them
    unaligned = translation_p_at_1(source, target, wrong, test)
    assert unaligned["p_at_1"] < 0.2


def test_a_source_word_with_two_translations_counts_once(planted):
    source, target = planted
    train = [(f"s{i}", f"t{i}") for i in range(500)]
    test = [("s600", "t600"), ("s600", "t601"), ("s602", "t602")]
    result = translation_p_at_1(source, target, train, test)
    assert result["n_test_words"] == 2
    assert result["p_at_1"] == 1.0  # per pair it would be 2/3
    as_mapping = {"s600": {"t601": 1.0, "t600": 1.0}, "s602": {"t602": 1.0}}  # read_muse's form
    assert translation_p_at_1(source, target, train, as_mapping) == (result)


@pytest.mark.parametrize("dictionary", ["training", "test"])
def test_a_dictionary_outside_the_vocabulary_is_named(planted, dictionary):
    source, target = planted
    good = [(f"s{i}", f"t{i}") for i in range(50)]
    outside = [("hund", "dog"), ("s3", "dog")]
    train, test = (outside, good) if dictionary == "training" else (good, outside)
    with pytest.raises(ValueError, match=f"none of the 2 pairs of the {dictionary} dictionary"):
        translation_p_at_1(source, target, train, test)


def test_a_repeated_vocabulary_word_is_refused(planted):
    (source_words, source), target = planted
    source = ([*source_words[:-1], "s0"], source)
    with pytest.raises(ValueError, match=r"source word 's0' appears twice"):
        translation_p_at_1(source, target, [("s1", "t1")], [])
