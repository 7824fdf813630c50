"""The Spearman helper of Muller et al. Table 4 and Figure 3 (xling.analysis.spearman)."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from xling.analysis.spearman import (
    EXACT_UP_TO,
    TooFewLanguages,
    cross_language_gap,
    gap_similarity_correlation,
    layer_similarity,
    spearman,
)


def _ties(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, size=n).astype(float)  # few values: many ties
    y = np.round(rng.normal(size=n), 1)
    if np.ptp(x) == 0:
        x[0] += 1
    return x, y


@pytest.mark.parametrize("seed", range(6))
def test_spearman_is_scipys_on_random_data_with_ties(seed):
    n = int(np.random.default_rng(seed).integers(3, 20))
    x, y = _ties(seed, n)
    expected = spearmanr(x, y)
    rho, p_value = spearman(x, y)
    assert rho == pytest.approx(expected.statistic)
    if n > EXACT_UP_TO:
        assert p_value == pytest.approx(expected.pvalue)


@pytest.mark.parametrize("seed", range(4))
def test_small_samples_get_the_exact_p_value_of_every_pairing(seed):
    n = 6
    x, y = _ties(seed, n)
    rho, p_value = spearman(x, y)
    # brute force: the share of the n! orders of y whose |rho| reaches the observed one
    others = [spearmanr(x, np.array(order)).statistic for order in itertools.permutations(y)]
    expected = np.mean([abs(r) >= abs(rho) - 1e-12 for r in others])
    assert p_value == pytest.approx(expected)


def test_a_perfect_order_of_four_is_not_significant():
    # scipy's t approximation gives p = 0 here; the exact p of 4 languages is 2 / 4! = 0.083
    assert spearmanr([1, 2, 3, 4], [4, 3, 2, 1]).pvalue < 0.05
    rho, p_value = spearman([1, 2, 3, 4], [4, 3, 2, 1])
    assert rho == pytest.approx(-1.0)
    assert p_value == pytest.approx(2 / 24)
    assert spearman([1, 2, 3, 4, 5], [5, 4, 3, 2, 1])[1] == pytest.approx(2 / 120)


def test_spearman_rejects_fewer_than_three_languages():
    with pytest.raises(TooFewLanguages, match=r"at least 3 languages, got 2 \(NER\)"):
        spearman([0.1, 0.2], [0.3, 0.1], "NER")
    with pytest.raises(ValueError, match="one length"):
        spearman([1, 2, 3], [1, 2])


def test_spearman_of_constant_input_is_nan():
    rho, p_value = spearman([1, 1, 1, 1], [1, 2, 3, 4])
    assert math.isnan(rho) and math.isnan(p_value)


def _score(task, source, group, seed, evaluation, score, split="test", experiment="transfer"):
    return {
        "experiment": experiment,
        "task": task,
        "source": source,
        "group": group,
        "seed": seed,
        "evaluation": evaluation,
        "lang": evaluation,
        "split": split,
        "score": score,
        "hp_id": "bs16_lr5e-05",
    }


SAME = {1: 0.90, 2: 0.80}  # en-en, per seed: mean 0.85
TARGETS = {"fr": (0.70, 0.60), "de": (0.50, 0.50), "ru": (0.40, 0.30), "zh": (0.20, 0.10)}


def _scores():
    rows = [_score("ner", "en", "ref", seed, "en", score) for seed, score in SAME.items()]
    rows += [_score("ner", "en", "ref", 1, "en", 0.99, split="dev")]  # not a test score
    rows += [_score("ner", "en", "1-2", 1, "fr", 0.0)]  # not a Ref model
    for target, (first, second) in TARGETS.items():
        rows += [_score("ner", "en", "ref", 1, target, first)]
        rows += [_score("ner", "en", "ref", 2, target, second)]
    return pd.DataFrame(rows)


def test_gap_is_same_language_minus_target_test_score_mean_over_seeds():
    gap = cross_language_gap(_scores(), "ner", "en")
    assert gap.index.name == "target" and list(gap.index) == ["fr", "de", "ru", "zh"]
    assert gap["fr"] == pytest.approx(0.85 - 0.65)
    assert gap["zh"] == pytest.approx(0.85 - 0.15)
    with_source = cross_language_gap(_scores(), "ner", "en", include_source=True)
    assert with_source["en"] == 0.0 and len(with_source) == 5
    with pytest.raises(ValueError, match="no same-language test score"):
        cross_language_gap(_scores(), "ner", "ru")


LAYERS = range(4)
# per target: pretrained CKA per layer; fine-tuned per seed is that + seed offset
PRETRAINED = {"fr": 0.8, "de": 0.7, "ru": 0.75, "zh": 0.3}
FINETUNED = {"fr": 0.6, "de": 0.9, "ru": 0.5, "zh": 0.4}


def _similarity():
    rows = []
    for target in TARGETS:
        for layer in LAYERS:
            rows.append(
                {"model": "pretrained", "task": "", "group": "ref", "seed": 0, "source": "en",
                 "target": target, "layer": layer, "cka": PRETRAINED[target] - 0.05 * layer}
            )  # fmt: skip
            for seed, offset in ((1, 0.01), (2, -0.01)):
                value = FINETUNED[target] + (0.1 * layer if target == "zh" else 0.0) + offset
                rows.append(
                    {"model": "finetuned", "task": "ner", "group": "ref", "seed": seed,
                     "source": "en", "target": target, "layer": layer, "cka": value}
                )  # fmt: skip
    rows.append(
        {"model": "finetuned", "task": "ner", "group": "1-2", "seed": 1, "source": "en",
         "target": "fr", "layer": 0, "cka": 0.0}
    )  # fmt: skip
    return pd.DataFrame(rows)


def test_layer_similarity_is_the_mean_over_seeds_of_the_selected_models():
    table = layer_similarity(_similarity(), "finetuned", "en", task="ner")
    assert table.loc["fr", 0] == pytest.approx(0.6)
    assert table.loc["zh", 3] == pytest.approx(0.7)
    assert layer_similarity(_similarity(), "pretrained", "en").loc["de", 2] == pytest.approx(0.6)


def test_layer_averaged_correlation_matches_scipy_per_kind():
    result = gap_similarity_correlation(_scores(), _similarity(), tasks=["ner"])
    assert list(result["kind"]) == ["finetuned", "pretrained"]
    gap = [0.85 - (a + b) / 2 for a, b in TARGETS.values()]
    zh_mean = 0.4 + 0.1 * np.mean(list(LAYERS))
    finetuned = [0.6, 0.9, 0.5, zh_mean]
    pretrained = [PRETRAINED[t] - 0.05 * np.mean(list(LAYERS)) for t in TARGETS]
    for kind, similarity in (("finetuned", finetuned), ("pretrained", pretrained)):
        row = result[result["kind"] == kind].iloc[0]
        expected = spearmanr(gap, similarity)
        assert row["rho"] == pytest.approx(expected.statistic)
        assert row["p_value"] == pytest.approx(spearman(gap, similarity)[1])  # exact at n = 4
        assert row["n"] == 4 and row["languages"] == "fr de ru zh"


def test_per_layer_correlation_matches_scipy_at_each_layer():
    result = gap_similarity_correlation(_scores(), _similarity(), per_layer=True)
    assert list(result.columns[:3]) == ["kind", "task", "layer"]
    finetuned = result[result["kind"] == "finetuned"]
    assert list(finetuned["layer"]) == list(LAYERS)
    gap = [0.85 - (a + b) / 2 for a, b in TARGETS.values()]
    for layer in LAYERS:
        values = [FINETUNED[t] + (0.1 * layer if t == "zh" else 0.0) for t in TARGETS]
        row = finetuned[finetuned["layer"] == layer].iloc[0]
        assert row["rho"] == pytest.approx(spearmanr(gap, values).statistic)


def test_too_few_languages_raise_or_give_nan():
    similarity = _similarity()
    two = similarity[similarity["target"].isin(["fr", "de"])]
    with pytest.raises(TooFewLanguages, match="finetuned ner, source en"):
        gap_similarity_correlation(_scores(), two, tasks=["ner"])
    result = gap_similarity_correlation(_scores(), two, tasks=["ner"], skip_too_few=True)
    assert result["rho"].isna().all() and list(result["n"]) == [2, 2]
    # counting the source itself (gap 0, similarity 1) makes three
    counted = gap_similarity_correlation(_scores(), two, tasks=["ner"], include_source=True)
    assert list(counted["n"]) == [3, 3] and counted["languages"].iloc[0] == "en fr de"
