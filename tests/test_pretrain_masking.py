"""Masking statistics (15% selected: 80% <mask>, 10% random, 10% kept) and replacement sources."""

import numpy as np
import pytest

from xling.pretrain.data import EOS_ID, MASK_ID, PAD_ID
from xling.pretrain.masking import mask_tokens


def zipf_tokens(rng, shape, low=5, high=2000):
    return np.minimum(low + rng.zipf(1.3, size=shape) - 1, high - 1).astype(np.int64)


def binomial_bound(p: float, n: int) -> float:
    return 5 * np.sqrt(p * (1 - p) / n)  # five standard errors: fails by chance ~1 in 3 million


def test_masking_statistics_match_the_paper_on_a_large_sample():
    rng = np.random.default_rng(0)
    tokens = zipf_tokens(rng, (400, 256))
    tokens[:, ::17] = EOS_ID
    replacement = np.arange(5, 2000)
    out = mask_tokens(tokens, rng, replacement)
    n = tokens.size
    assert abs(out.selected.size / n - 0.15) < binomial_bound(0.15, n)
    flat_in, flat_out = tokens.reshape(-1), out.input_ids.reshape(-1)
    assert np.array_equal(out.targets, flat_in[out.selected])
    after = flat_out[out.selected]
    masked = after == MASK_ID
    kept = ~masked & (after == out.targets)
    random = ~masked & ~kept
    k = out.selected.size
    # A random replacement equal to the original counts as "kept": its share is tiny here.
    assert abs(masked.mean() - 0.8) < binomial_bound(0.8, k)
    assert abs(kept.mean() - 0.1) < binomial_bound(0.1, k) + 0.002
    assert abs(random.mean() - 0.1) < binomial_bound(0.1, k) + 0.002
    unselected = np.setdiff1d(np.arange(n), out.selected)
    assert np.array_equal(flat_out[unselected], flat_in[unselected])
    assert out.selected.dtype == np.int64 and np.all(np.diff(out.selected) > 0)


def test_random_replacements_stay_within_the_language():
    rng = np.random.default_rng(1)
    french = np.arange(1000, 1400)
    tokens = rng.choice(french, size=(300, 64))
    out = mask_tokens(tokens, rng, french, mask_token_rate=0.0, random_token_rate=1.0)
    replaced = out.input_ids.reshape(-1)[out.selected]
    assert out.selected.size > 1000
    assert np.isin(replaced, french).all()
    assert (replaced != out.targets).mean() > 0.9  # they really were replaced


def test_padding_is_never_selected_and_a_batch_always_has_a_target():
    rng = np.random.default_rng(2)
    tokens = np.full((4, 32), PAD_ID)
    tokens[2, 5] = 42
    for _ in range(20):
        out = mask_tokens(tokens, rng, np.arange(5, 50), mask_prob=0.01)
        assert out.selected.tolist() == [2 * 32 + 5]
        assert out.targets.tolist() == [42]
    with pytest.raises(ValueError, match="only of <pad>"):
        mask_tokens(np.full((2, 3), PAD_ID), rng, np.arange(5, 50))


def test_same_generator_state_gives_the_same_masks():
    tokens = zipf_tokens(np.random.default_rng(3), (8, 64))
    first = mask_tokens(tokens, np.random.default_rng(7), np.arange(5, 2000))
    second = mask_tokens(tokens, np.random.default_rng(7), np.arange(5, 2000))
    assert np.array_equal(first.input_ids, second.input_ids)
    assert np.array_equal(first.selected, second.selected)
