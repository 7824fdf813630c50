"""BIO repair, span F1, LAS/UAS and accuracy on hand-made cases with known answers."""

import random

import pytest
from seqeval.metrics import f1_score
from seqeval.scheme import IOB2

from xling.contracts.items import read_test_items, write_test_items
from xling.finetune.metrics import (
    accuracy,
    accuracy_items,
    attachment_scores,
    bio_spans,
    las_items,
    ratio,
    repair_bio,
    span_f1,
    span_f1_items,
    span_prf,
    tag_accuracy,
    tag_accuracy_items,
)


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["I-PER"], ["B-PER"]),  # standalone I-X -> B-X
        (["O", "I-LOC", "I-LOC", "O"], ["O", "B-LOC", "I-LOC", "O"]),
        (["B-PER", "I-LOC", "I-ORG"], ["B-ORG", "I-ORG", "I-ORG"]),  # the final type wins
        (["I-PER", "I-LOC"], ["B-LOC", "I-LOC"]),
        (["B-PER", "I-PER", "B-LOC", "I-ORG"], ["B-PER", "I-PER", "B-ORG", "I-ORG"]),
        (["B-PER", "O", "I-PER", "O", "B-LOC"], ["B-PER", "O", "B-PER", "O", "B-LOC"]),
        (["B-PER", "B-PER", "O"], ["B-PER", "B-PER", "O"]),  # valid input is unchanged
        ([], []),
    ],
)
def test_repair_follows_the_paper(tags, expected):
    assert repair_bio(tags) == expected


def test_repair_keeps_valid_sequences_and_is_idempotent():
    rng = random.Random(3)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-ORG"]
    for _ in range(300):
        sequence = [rng.choice(tags) for _ in range(rng.randint(0, 12))]
        once = repair_bio(sequence)
        assert repair_bio(once) == once
        valid = all(
            not t.startswith("I-") or (i > 0 and once[i - 1][2:] == t[2:])
            for i, t in enumerate(once)
        )
        assert valid


def test_bad_tags_are_rejected():
    with pytest.raises(ValueError, match="not a BIO tag"):
        repair_bio(["O", "PER"])
    with pytest.raises(ValueError, match="not a BIO tag"):
        repair_bio(["B-"])


def test_spans_are_typed_and_end_exclusive():
    assert bio_spans(["B-PER", "I-PER", "O", "B-LOC"]) == {("PER", 0, 2), ("LOC", 3, 4)}
    assert bio_spans(["I-ORG", "I-ORG", "I-ORG"]) == {("ORG", 0, 3)}
    assert bio_spans(["O", "O"]) == set()


def test_span_f1_on_hand_made_pairs():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    # One span right, one with the wrong type, one missed, one spurious.
    predicted = [["B-PER", "I-PER", "O", "B-ORG"], ["O", "B-LOC"]]
    prf = span_prf(gold, predicted)
    assert prf.precision == pytest.approx(1 / 3)
    assert prf.recall == pytest.approx(1 / 3)
    assert prf.f1 == pytest.approx(1 / 3)
    # A boundary error is a miss and a false alarm: P = 1/2, R = 1/3.
    predicted = [["B-PER", "O", "O", "B-LOC"], ["O", "O"]]
    assert span_f1(gold, predicted) == pytest.approx(2 * (1 / 2) * (1 / 3) / (1 / 2 + 1 / 3))


def test_repair_applies_before_scoring():
    gold = [["B-PER", "I-PER", "O"]]
    assert span_f1(gold, [["I-PER", "I-PER", "O"]]) == 1.0
    assert span_f1(gold, [["B-LOC", "I-PER", "O"]]) == 1.0  # B-LOC I-PER -> B-PER I-PER
    assert span_f1(gold, [["B-PER", "I-LOC", "O"]]) == 0.0  # -> B-LOC I-LOC


def test_span_f1_edge_cases():
    assert span_f1([["O"]], [["O"]]) == 0.0  # no span anywhere
    assert span_f1([["B-PER"]], [["O"]]) == 0.0
    with pytest.raises(ValueError, match="sentence 0"):
        span_f1([["O", "O"]], [["O"]])
    with pytest.raises(ValueError, match="sentences"):
        span_f1([["O"]], [])


def test_span_f1_agrees_with_seqeval_once_repaired():
    rng = random.Random(7)
    tags = ["O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-ORG"]
    gold, predicted = [], []
    for _ in range(200):
        length = rng.randint(1, 10)
        gold.append(repair_bio([rng.choice(tags) for _ in range(length)]))
        predicted.append(repair_bio([rng.choice(tags) for _ in range(length)]))
    expected = f1_score(gold, predicted, mode="strict", scheme=IOB2)
    assert span_f1(gold, predicted) == pytest.approx(expected)


def test_attachment_scores_on_a_hand_made_pair():
    gold_heads = [[2, 0, 2, 2], [0, 1]]
    gold_rels = [["nsubj:pass", "root", "obj", "punct"], ["root", "obj"]]
    upos = [["NOUN", "VERB", "NOUN", "PUNCT"], ["VERB", "SYM"]]
    pred_heads = [[2, 0, 1, 2], [0, 1]]
    pred_rels = [["nsubj", "root", "obj", "dep"], ["root", "obj"]]
    scores = attachment_scores(gold_heads, gold_rels, pred_heads, pred_rels, upos)
    # 6 words: heads right for 5 (word 3 of sentence 1 wrong); labels right for 4 of those
    # (the subtype of nsubj:pass is ignored; punct/dep differ).
    assert scores.words == 6
    assert scores.uas == pytest.approx(5 / 6)
    assert scores.las == pytest.approx(4 / 6)
    no_punct = attachment_scores(
        gold_heads, gold_rels, pred_heads, pred_rels, upos, exclude_punct=True
    )
    # PUNCT and SYM dropped: 4 words, heads right for 3, labels for 3.
    assert no_punct.words == 4
    assert no_punct.uas == pytest.approx(3 / 4)
    assert no_punct.las == pytest.approx(3 / 4)


def test_attachment_scores_reject_mismatched_input():
    with pytest.raises(ValueError, match="word counts"):
        attachment_scores([[0]], [["root"]], [[0, 1]], [["root", "obj"]])
    with pytest.raises(ValueError, match="gold_upos"):
        attachment_scores([[0]], [["root"]], [[0]], [["root"]], exclude_punct=True)


def test_accuracy():
    assert accuracy(["a", "b", "c", "a"], ["a", "b", "a", "b"]) == 0.5
    assert accuracy([], []) == 0.0
    with pytest.raises(ValueError):
        accuracy(["a"], [])


def _random_tags(rng, n=120):
    tags = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-ORG"]
    gold, predicted = [], []
    for _ in range(n):
        length = rng.randint(0, 9)
        gold.append([rng.choice(tags) for _ in range(length)])
        predicted.append([rng.choice(tags) for _ in range(length)])
    return gold, predicted


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_item_counts_sum_to_each_corpus_score(seed):
    """Every metric is the ratio of its per-sentence counts summed, so a resample of the test set
    can be rescored from them; checked against the corpus-level functions on random data."""
    rng = random.Random(seed)
    gold, predicted = _random_tags(rng)
    assert ratio(span_f1_items(gold, predicted)) == pytest.approx(span_f1(gold, predicted))
    subset = [0, 5, 5, 9, 17]  # a resample: F1 of the chosen sentences from their counts alone
    items = span_f1_items(gold, predicted)
    assert ratio([items[i] for i in subset]) == pytest.approx(
        span_f1([gold[i] for i in subset], [predicted[i] for i in subset])
    )
    heads = [[rng.randint(0, len(t)) for _ in t] for t in gold]
    guesses = [[h if rng.random() < 0.6 else rng.randint(0, len(hs)) for h in hs] for hs in heads]
    rels = [[rng.choice(["nsubj", "obj", "punct", "obl:tmod"]) for _ in t] for t in gold]
    guessed_rels = [[r if rng.random() < 0.7 else "dep" for r in rs] for rs in rels]
    upos = [[rng.choice(["NOUN", "PUNCT", "VERB"]) for _ in t] for t in gold]
    for punct in (False, True):
        expected = attachment_scores(heads, rels, guesses, guessed_rels, upos, exclude_punct=punct)
        items = las_items(heads, rels, guesses, guessed_rels, upos, exclude_punct=punct)
        assert ratio(items) == pytest.approx(expected.las)
        assert sum(d for _, d in items) == expected.words
    labels = [rng.choice("abc") for _ in range(50)]
    guessed = [rng.choice("abc") for _ in range(50)]
    assert ratio(accuracy_items(labels, guessed)) == pytest.approx(accuracy(labels, guessed))
    assert ratio(tag_accuracy_items(gold, predicted)) == pytest.approx(
        tag_accuracy(gold, predicted)
    )
    assert ratio([]) == 0.0 and ratio([(0, 0)]) == 0.0


def test_test_items_file_round_trips_and_names_what_is_wrong(tmp_path):
    path = tmp_path / "test_items.json"
    write_test_items(path, "span_f1", {"fr": [(2, 3), (0, 1)], "en": [(1, 1)]})
    assert read_test_items(path) == {"en": [(1, 1)], "fr": [(2, 3), (0, 1)]}
    assert len(path.read_text().splitlines()) == 4  # a line per language, not per number
    path.write_text('{"metric": "las", "test": {"fr": [[1, 2], [3, 2]]}}')
    with pytest.raises(ValueError, match=r"test_items.json: test item 2 of 'fr' is \[3, 2\]"):
        read_test_items(path)
    path.write_text('{"metric": "las", "test": {"fr": [[1, 2],')
    with pytest.raises(ValueError, match=r"test_items\.json:1: not valid JSON.*rerun"):
        read_test_items(path)
    with pytest.raises(FileNotFoundError, match=r"missing\.json.*rerun the run's fine-tuning job"):
        read_test_items(tmp_path / "missing.json")
