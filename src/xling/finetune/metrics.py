"""Task metrics as the papers report them: span F1 after the BIO repair, LAS/UAS, accuracy, and
word-level tagging accuracy (UPOS, Muller et al. 2021).

All scores are fractions in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xling.contracts.conllu import universal_relation
from xling.contracts.items import ItemCounts

OUTSIDE = "O"
# Gold UPOS tags excluded from attachment scores when ``exclude_punct`` is set: the convention of
# crosslingual-nlp, the authors' fine-tuning code (the CoNLL 2018 evaluation itself scores them).
PUNCT_UPOS = frozenset({"PUNCT", "SYM"})


def _split_tag(tag: str) -> tuple[str, str]:
    """``"B-PER"`` -> ``("B", "PER")``; ``"O"`` -> ``("O", "")``."""
    if tag == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, entity = tag.partition("-")
    if not sep or prefix not in ("B", "I") or not entity:
        raise ValueError(f"not a BIO tag: {tag!r} (expected O, B-TYPE or I-TYPE)")
    return prefix, entity


def repair_bio(tags: Sequence[str]) -> list[str]:
    """The paper's post-processing (Wu, Conneau et al. 2020, 3.2) that makes every span valid.

    A chunk starts at a ``B-*`` or at an ``I-*`` that follows ``O`` (or the sentence start) and
    runs over the ``I-*`` tags after it, whatever their types. The whole chunk takes the type of its
    *last* tag: a standalone ``I-X`` becomes ``B-X`` and ``B-X I-Y I-Z`` becomes ``B-Z I-Z I-Z``.
    """
    parts = [_split_tag(tag) for tag in tags]
    repaired = [OUTSIDE] * len(parts)
    start = 0
    while start < len(parts):
        if parts[start][0] == OUTSIDE:
            start += 1
            continue
        end = start + 1
        while end < len(parts) and parts[end][0] == "I":
            end += 1
        entity = parts[end - 1][1]
        repaired[start] = f"B-{entity}"
        for i in range(start + 1, end):
            repaired[i] = f"I-{entity}"
        start = end
    return repaired


def bio_spans(tags: Sequence[str]) -> set[tuple[str, int, int]]:
    """Spans ``(type, start, end_exclusive)`` of a tag sequence, after :func:`repair_bio`."""
    spans: set[tuple[str, int, int]] = set()
    repaired = repair_bio(tags)
    start = None
    for i, tag in enumerate([*repaired, OUTSIDE]):
        if start is not None and not tag.startswith("I-"):
            spans.add((repaired[start][2:], start, i))
            start = None
        if tag.startswith("B-"):
            start = i
    return spans


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float


def _span_counts(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]
) -> list[tuple[int, int, int]]:
    """Per sentence: (true positives, gold spans, predicted spans), both sides repaired first."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted ones")
    counts = []
    for index, (gold_tags, pred_tags) in enumerate(zip(gold, predicted, strict=True)):
        if len(gold_tags) != len(pred_tags):
            raise ValueError(
                f"sentence {index}: {len(gold_tags)} gold tags but {len(pred_tags)} predicted"
            )
        gold_spans, pred_spans = bio_spans(gold_tags), bio_spans(pred_tags)
        counts.append((len(gold_spans & pred_spans), len(gold_spans), len(pred_spans)))
    return counts


def span_prf(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> PRF:
    """Micro precision/recall/F1 over exact span matches, both sides repaired first.

    Hand-written rather than ``seqeval`` because the paper's repair (the final type wins) differs
    from seqeval's and conlleval's handling of invalid sequences; after the repair both agree (the
    tests check this against seqeval's strict IOB2 mode). F1 is 0 when there is no span at all.
    """
    counts = _span_counts(gold, predicted)
    true_pos = sum(c[0] for c in counts)
    n_gold = sum(c[1] for c in counts)
    n_pred = sum(c[2] for c in counts)
    precision = true_pos / n_pred if n_pred else 0.0
    recall = true_pos / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PRF(precision, recall, f1)


def span_f1(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> float:
    """Span-level F1 after the paper's BIO repair (the NER score of Table 1)."""
    return span_prf(gold, predicted).f1


@dataclass(frozen=True)
class AttachmentScores:
    uas: float
    las: float
    words: int


def attachment_scores(
    gold_heads: Sequence[Sequence[int]],
    gold_deprels: Sequence[Sequence[str]],
    pred_heads: Sequence[Sequence[int]],
    pred_deprels: Sequence[Sequence[str]],
    gold_upos: Sequence[Sequence[str]] | None = None,
    *,
    exclude_punct: bool = False,
) -> AttachmentScores:
    """UAS and LAS over syntactic words, as the CoNLL 2018 evaluation script computes them.

    Tokenization is gold here, so every word aligns with itself. A word counts for LAS when its head
    is right and its universal relation (subtype stripped on both sides) is right. By default every
    word is scored, punctuation included, as in CoNLL 2018; ``exclude_punct`` drops words whose gold
    UPOS is PUNCT or SYM (the authors' crosslingual-nlp convention) and needs ``gold_upos``.
    """
    counts = _attachment_counts(
        gold_heads, gold_deprels, pred_heads, pred_deprels, gold_upos, exclude_punct
    )
    words = sum(c[0] for c in counts)
    head_hits = sum(c[1] for c in counts)
    label_hits = sum(c[2] for c in counts)
    if not words:
        return AttachmentScores(0.0, 0.0, 0)
    return AttachmentScores(head_hits / words, label_hits / words, words)


def _attachment_counts(
    gold_heads, gold_deprels, pred_heads, pred_deprels, gold_upos, exclude_punct
) -> list[tuple[int, int, int]]:
    """Per sentence: (scored words, right heads, right heads with the right relation)."""
    if exclude_punct and gold_upos is None:
        raise ValueError("exclude_punct needs gold_upos")
    sizes = {len(gold_heads), len(gold_deprels), len(pred_heads), len(pred_deprels)}
    if gold_upos is not None:
        sizes.add(len(gold_upos))
    if len(sizes) != 1:
        raise ValueError(f"gold and predicted sentence counts differ: {sorted(sizes)}")
    counts = []
    for index in range(len(gold_heads)):
        lengths = {len(gold_heads[index]), len(gold_deprels[index])}
        lengths |= {len(pred_heads[index]), len(pred_deprels[index])}
        if len(lengths) != 1:
            raise ValueError(f"sentence {index}: gold and predicted word counts differ")
        words = head_hits = label_hits = 0
        for j, gold_head in enumerate(gold_heads[index]):
            if exclude_punct and gold_upos[index][j] in PUNCT_UPOS:
                continue
            words += 1
            if pred_heads[index][j] == gold_head:
                head_hits += 1
                gold_rel = universal_relation(gold_deprels[index][j])
                label_hits += universal_relation(pred_deprels[index][j]) == gold_rel
        counts.append((words, head_hits, label_hits))
    return counts


def accuracy(gold: Sequence, predicted: Sequence) -> float:
    """Fraction of equal items (XNLI); 0 for empty input."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    if not gold:
        return 0.0
    return sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold)


def tag_accuracy(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> float:
    """Word-level accuracy over every word of every sentence (UPOS, as the CoNLL 2018 evaluation
    script computes it with gold tokenization); 0 when there is no word.

    Each word counts once, whatever the number of its subwords: tags are per word.
    """
    counts = _tag_counts(gold, predicted)
    words = sum(c[1] for c in counts)
    return sum(c[0] for c in counts) / words if words else 0.0


def _tag_counts(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]
) -> list[tuple[int, int]]:
    """Per sentence: (right tags, words)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted ones")
    counts = []
    for index, (gold_tags, pred_tags) in enumerate(zip(gold, predicted, strict=True)):
        if len(gold_tags) != len(pred_tags):
            raise ValueError(
                f"sentence {index}: {len(gold_tags)} gold tags but {len(pred_tags)} predicted"
            )
        counts.append(
            (sum(g == p for g, p in zip(gold_tags, pred_tags, strict=True)), len(gold_tags))
        )
    return counts


# --------------------------------------------------------------------------- per test item
# Every score above is a ratio of sums over the test items (sentences; XNLI pairs): F1 is
# 2 tp / (gold spans + predicted spans), LAS and accuracy are hits / words. Each item's numerator
# and denominator are enough to rescore any resample of the test set without the predictions,
# which is how the claims check measures how much a score owes to the particular test sentences
# (xling.report.resamples).


def ratio(items: ItemCounts) -> float:
    """The score of a set of items: sum of numerators over sum of denominators (0 if none)."""
    denominator = sum(d for _, d in items)
    return sum(n for n, _ in items) / denominator if denominator else 0.0


def span_f1_items(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> ItemCounts:
    """Per sentence (2 x true positives, gold + predicted spans): their ratio is :func:`span_f1`."""
    return [(2 * tp, n_gold + n_pred) for tp, n_gold, n_pred in _span_counts(gold, predicted)]


def las_items(
    gold_heads: Sequence[Sequence[int]],
    gold_deprels: Sequence[Sequence[str]],
    pred_heads: Sequence[Sequence[int]],
    pred_deprels: Sequence[Sequence[str]],
    gold_upos: Sequence[Sequence[str]] | None = None,
    *,
    exclude_punct: bool = False,
) -> ItemCounts:
    """Per sentence (LAS hits, scored words): their ratio is :func:`attachment_scores`' LAS."""
    counts = _attachment_counts(
        gold_heads, gold_deprels, pred_heads, pred_deprels, gold_upos, exclude_punct
    )
    return [(label_hits, words) for words, _, label_hits in counts]


def accuracy_items(gold: Sequence, predicted: Sequence) -> ItemCounts:
    """Per item (1 if right, 1): their ratio is :func:`accuracy`."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    return [(int(g == p), 1) for g, p in zip(gold, predicted, strict=True)]


def tag_accuracy_items(
    gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]
) -> ItemCounts:
    """Per sentence (right tags, words): their ratio is :func:`tag_accuracy`."""
    return _tag_counts(gold, predicted)
