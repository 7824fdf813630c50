"""Task metrics as the papers report them: span F1 after the BIO repair, LAS/UAS, accuracy, and
word-level tagging accuracy (UPOS, Muller et al. 2021).

All scores are fractions in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xling.contracts.conllu import universal_relation

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


def span_prf(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> PRF:
    """Micro precision/recall/F1 over exact span matches, both sides repaired first.

    Hand-written rather than ``seqeval`` because the paper's repair (the final type wins) differs
    from seqeval's and conlleval's handling of invalid sequences; after the repair both agree (the
    tests check this against seqeval's strict IOB2 mode). F1 is 0 when there is no span at all.
    """
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted ones")
    true_pos = n_gold = n_pred = 0
    for index, (gold_tags, pred_tags) in enumerate(zip(gold, predicted, strict=True)):
        if len(gold_tags) != len(pred_tags):
            raise ValueError(
                f"sentence {index}: {len(gold_tags)} gold tags but {len(pred_tags)} predicted"
            )
        gold_spans, pred_spans = bio_spans(gold_tags), bio_spans(pred_tags)
        true_pos += len(gold_spans & pred_spans)
        n_gold += len(gold_spans)
        n_pred += len(pred_spans)
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
    if exclude_punct and gold_upos is None:
        raise ValueError("exclude_punct needs gold_upos")
    sizes = {len(gold_heads), len(gold_deprels), len(pred_heads), len(pred_deprels)}
    if gold_upos is not None:
        sizes.add(len(gold_upos))
    if len(sizes) != 1:
        raise ValueError(f"gold and predicted sentence counts differ: {sorted(sizes)}")
    words = head_hits = label_hits = 0
    for index in range(len(gold_heads)):
        lengths = {len(gold_heads[index]), len(gold_deprels[index])}
        lengths |= {len(pred_heads[index]), len(pred_deprels[index])}
        if len(lengths) != 1:
            raise ValueError(f"sentence {index}: gold and predicted word counts differ")
        for j, gold_head in enumerate(gold_heads[index]):
            if exclude_punct and gold_upos[index][j] in PUNCT_UPOS:
                continue
            words += 1
            if pred_heads[index][j] == gold_head:
                head_hits += 1
                gold_rel = universal_relation(gold_deprels[index][j])
                label_hits += universal_relation(pred_deprels[index][j]) == gold_rel
    if not words:
        return AttachmentScores(0.0, 0.0, 0)
    return AttachmentScores(head_hits / words, label_hits / words, words)


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
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted ones")
    words = hits = 0
    for index, (gold_tags, pred_tags) in enumerate(zip(gold, predicted, strict=True)):
        if len(gold_tags) != len(pred_tags):
            raise ValueError(
                f"sentence {index}: {len(gold_tags)} gold tags but {len(pred_tags)} predicted"
            )
        words += len(gold_tags)
        hits += sum(g == p for g, p in zip(gold_tags, pred_tags, strict=True))
    return hits / words if words else 0.0
