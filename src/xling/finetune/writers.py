"""Prediction files in each task's own format, written atomically."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from xling.atomic import atomic_open
from xling.finetune.readers import NliPair, ParsedSentence, TaggedSentence


def write_ner(
    path: str | Path, lang: str, sentences: Sequence[TaggedSentence], predicted: Sequence[list[str]]
) -> None:
    """WikiAnn format plus a predicted tag column: ``{lang}:{word}<TAB>{gold}<TAB>{predicted}``."""
    with atomic_open(path) as handle:
        for sentence, tags in zip(sentences, predicted, strict=True):
            for word, gold, tag in zip(sentence.words, sentence.tags, tags, strict=True):
                handle.write(f"{lang}:{word}\t{gold}\t{tag}\n")
            handle.write("\n")


def write_conllu(
    path: str | Path,
    sentences: Sequence[ParsedSentence],
    heads: Sequence[Sequence[int]],
    deprels: Sequence[Sequence[str]],
) -> None:
    """The input treebank with HEAD and DEPREL of every syntactic word replaced by predictions.

    Comments, multi-word ranges and empty nodes are copied unchanged; DEPS of predicted words is set
    to ``_`` because the gold enhanced graph no longer matches the predicted tree.
    """
    with atomic_open(path) as handle:
        for sentence, sent_heads, sent_rels in zip(sentences, heads, deprels, strict=True):
            lines = list(sentence.block)
            for row, head, rel in zip(sentence.word_rows, sent_heads, sent_rels, strict=True):
                columns = lines[row].split("\t")
                columns[6], columns[7], columns[8] = str(head), rel, "_"
                lines[row] = "\t".join(columns)
            handle.write("\n".join(lines) + "\n\n")


def write_xnli(path: str | Path, pairs: Sequence[NliPair], predicted: Sequence[str]) -> None:
    """One row per pair, in input order: ``pairID<TAB>gold_label<TAB>prediction`` (with header)."""
    with atomic_open(path) as handle:
        handle.write("pairID\tgold_label\tprediction\n")
        for pair, label in zip(pairs, predicted, strict=True):
            handle.write(f"{pair.pair_id}\t{pair.label}\t{label}\n")
