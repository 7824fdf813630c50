"""The toy world's gold annotation as the records that :mod:`xling.contracts` writes: CoNLL-U
words, gold words lines, Pharaoh links and XNLI-1.0 cells."""

from __future__ import annotations

from collections import defaultdict

from xling.contracts.alignment import Link
from xling.contracts.conllu import ConlluWord
from xling.contracts.words import join_words

from .realize import Token


def gold_words(tokens: list[Token]) -> str:
    """The gold words of a sentence as one line."""
    return join_words(t.form for t in tokens)


def conllu_words(tokens: list[Token]) -> list[ConlluWord]:
    """CoNLL-U word lines: heads as word numbers, ``SpaceAfter=No`` where the text has no space."""
    index = {id(t): i for i, t in enumerate(tokens, 1)}
    last = len(tokens)
    return [
        ConlluWord(
            form=t.form,
            lemma=t.lemma,
            upos=t.upos,
            feats=t.feats,
            head=0 if t.head is None else index[id(t.head)],
            deprel=t.deprel,
            misc="SpaceAfter=No" if not t.space_after and i < last else "_",
        )
        for i, t in enumerate(tokens, 1)
    ]


def alignment_links(source: list[Token], target: list[Token]) -> list[Link]:
    """Gold word alignment: the words that realize the same meaning node and role."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for j, t in enumerate(target):
        by_key[t.key].append(j)
    return [(i, j) for i, s in enumerate(source) for j in by_key.get(s.key, ())]


def xnli_cells(
    lang: str,
    label: str,
    premise: tuple[str, str],
    hypothesis: tuple[str, str],
    prompt_id: int,
    pair_id: int,
    genre: str,
) -> dict[str, str]:
    """The cells of one XNLI-1.0 row. premise/hypothesis are (raw text, gold words line).

    The parse columns stay empty (the toy world has no constituency parses); the five annotator
    labels all repeat the gold label.
    """
    return {
        "language": lang,
        "gold_label": label,
        "sentence1": premise[0],
        "sentence2": hypothesis[0],
        "promptID": str(prompt_id),
        "pairID": str(pair_id),
        "genre": genre,
        **{f"label{k}": label for k in range(1, 6)},
        "sentence1_tokenized": premise[1],
        "sentence2_tokenized": hypothesis[1],
        "match": "True",
    }
