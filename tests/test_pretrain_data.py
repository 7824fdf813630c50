"""Streams, language sampling (sentences ^ 0.7) and a batch plan that resumes exactly."""

import numpy as np
import pytest

from xling.pretrain.batching import BatchPlan
from xling.pretrain.data import (
    EOS_ID,
    StreamSampler,
    WindowOrder,
    count_sentences,
    dev_windows,
    language_probabilities,
    load_stream,
    prefetch,
)


def stream(n: int, offset: int = 0) -> np.ndarray:
    ids = np.arange(n, dtype=np.int32) % 50 + 5 + offset
    ids[::7] = EOS_ID
    return ids


def test_probabilities_follow_sentence_counts_to_the_power_alpha():
    probs = language_probabilities({"en": 1_000_000, "fr": 100_000}, alpha=0.7)
    ratio = probs["en"] / probs["fr"]
    assert ratio == pytest.approx(10**0.7)
    assert sum(probs.values()) == pytest.approx(1.0)
    assert language_probabilities({"en": 5, "fr": 500}, alpha=0.0) == {"en": 0.5, "fr": 0.5}
    with pytest.raises(ValueError, match="at least one sentence"):
        language_probabilities({"en": 0, "fr": 3}, alpha=0.7)


def test_sentence_count_is_the_number_of_end_of_sentence_ids():
    ids = stream(700)
    assert count_sentences(ids) == 100
    assert count_sentences(ids, chunk=13) == 100


def test_a_paragraph_a_line_and_a_sentence_a_line_count_the_same_sentences():
    """Wikipedia has a paragraph a line, CC-100 a sentence a line: sampling weights must not
    depend on that (Wu 3.1 samples by sentences)."""
    period, question, word = 5, 6, 9
    sentences = [[word, word, period], [word, question], [word, word, word, period, period]]
    paragraph = np.array([t for s in sentences for t in s] + [EOS_ID], dtype=np.int32)
    lines = np.array([t for s in sentences for t in [*s, EOS_ID]], dtype=np.int32)
    ends = np.array([period, question])
    assert count_sentences(lines, ends) == count_sentences(paragraph, ends) == 3
    assert count_sentences(paragraph) == 1  # without the end tokens: lines only
    long = np.tile(paragraph, 50)
    for chunk in (2, 3, 7, 1 << 24):  # a sentence end at a chunk's edge is seen once
        assert count_sentences(long, ends, chunk=chunk) == 150
    # a line without final punctuation (a title) is one sentence
    assert count_sentences(np.array([word, word, EOS_ID, *paragraph]), ends) == 4


def test_sentence_end_ids_come_from_the_vocabulary(tmp_path):
    from xling.pretrain.inputs import read_sentence_end_ids

    tokens = [
        "<pad>",
        "<unk>",
        "<s>",
        "</s>",
        "<mask>",
        ".",
        "the",
        ".@@",
        "en:?",
        "zh:\u3002",
        ":",
    ]
    (tmp_path / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    assert read_sentence_end_ids(tmp_path).tolist() == [5, 8, 9]


def test_sampler_draws_languages_with_the_given_probabilities():
    streams = {"en": stream(5000), "fr": stream(3000, 60)}
    probs = language_probabilities({"en": 9000, "fr": 1000}, 0.7)
    sampler = StreamSampler(streams, probs, seq_len=16, seed=0, plan=BatchPlan(2, 1, 2, 1))
    draws = [sampler.language_at(step) for step in range(1, 20001)]
    share = draws.count("en") / len(draws)
    assert abs(share - probs["en"]) < 5 * np.sqrt(probs["en"] * (1 - probs["en"]) / len(draws))


def test_windows_are_contiguous_slices_and_each_epoch_visits_every_window_once():
    ids = np.arange(1000, dtype=np.int32)
    order = WindowOrder(len(ids), 32, seed=5, lang_key=0)
    per_epoch = order.per_epoch
    assert per_epoch == (1000 - 1) // 32
    for epoch in range(3):
        starts = order.starts(epoch * per_epoch, per_epoch)
        offsets = starts % 32
        assert len(set(offsets.tolist())) == 1, "one grid offset per epoch"
        assert sorted(starts.tolist()) == sorted(offsets[0] + 32 * np.arange(per_epoch))
        assert starts.max() + 32 <= len(ids)
    offsets = {int(order.starts(e * per_epoch, 1)[0] % 32) for e in range(20)}
    assert len(offsets) > 3, "the grid shifts between epochs"


def test_resuming_from_the_saved_position_gives_the_same_batches():
    streams = {
        "en": np.arange(5, 4005),
        "fr": np.arange(5000, 7500),
    }  # unique ids: rows are traceable
    probs = {"en": 0.6, "fr": 0.4}
    sampler = StreamSampler(streams, probs, seq_len=16, seed=11, plan=BatchPlan(4, 1, 4, 1))
    straight = list(sampler.iterate(1, 200, {}))
    stopped = straight[86]  # state after step 87
    resumed = list(sampler.iterate(88, 200, stopped.consumed))
    assert [b.step for b in resumed] == list(range(88, 201))
    for a, b in zip(straight[87:], resumed, strict=True):
        assert a.lang == b.lang and np.array_equal(a.tokens, b.tokens) and a.consumed == b.consumed
    for batch in straight:  # every row is a contiguous piece of its own language's stream
        assert np.all(np.diff(batch.tokens, axis=1) == 1)
        assert np.isin(batch.tokens, streams[batch.lang]).all()


def test_processes_share_the_language_and_split_the_windows():
    streams = {"en": stream(6000), "fr": stream(6000, 60)}
    probs = {"en": 0.5, "fr": 0.5}
    ranks = [
        StreamSampler(streams, probs, seq_len=8, seed=2, plan=BatchPlan(6, 2, 3, 1), rank=r)
        for r in (0, 1)
    ]
    state = [{}, {}]
    for step in range(1, 50):
        batches = [sampler.batch(step, state[r]) for r, sampler in enumerate(ranks)]
        assert batches[0].lang == batches[1].lang
        assert batches[0].consumed == batches[1].consumed
        assert not np.array_equal(batches[0].tokens, batches[1].tokens)
        state = [b.consumed for b in batches]
    assert sum(state[0].values()) == 49 * 2 * 3


def test_dev_windows_cover_the_first_tokens():
    ids = np.arange(100)
    windows = dev_windows(ids, 16, 70)
    assert windows.shape == (4, 16) and windows[0, 0] == 0 and windows[-1, -1] == 63
    assert dev_windows(ids, 16, 10).shape == (1, 10)


def test_bad_streams_are_reported_with_the_file_and_the_fix(tmp_path):
    np.save(tmp_path / "two_d.npy", np.zeros((2, 3), dtype=np.int32))
    np.save(tmp_path / "wide.npy", np.array([1, 2, 99], dtype=np.int32))
    np.save(tmp_path / "empty.npy", np.array([], dtype=np.int32))
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(FileNotFoundError, match=r"missing\.npy is missing: run the vocab"):
        load_stream(tmp_path / "missing.npy")
    with pytest.raises(ValueError, match=r"two_d\.npy: expected a 1-D"):
        load_stream(tmp_path / "two_d.npy")
    with pytest.raises(ValueError, match=r"wide.npy: token ids span \[1, 99\] but the vocabulary"):
        load_stream(tmp_path / "wide.npy", vocab_size=50)
    with pytest.raises(ValueError, match=r"empty\.npy: the token stream is empty"):
        load_stream(tmp_path / "empty.npy")
    with pytest.raises(ValueError, match=r"junk\.npy: not a readable \.npy"):
        load_stream(tmp_path / "junk.npy")


def test_prefetch_keeps_order_and_passes_errors_on():
    assert list(prefetch(iter(range(20)), lambda x: x * x)) == [x * x for x in range(20)]

    def failing():
        yield 1
        raise RuntimeError("broken batch")

    with pytest.raises(RuntimeError, match="broken batch"):
        list(prefetch(failing(), lambda x: x))
