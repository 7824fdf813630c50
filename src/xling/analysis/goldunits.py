"""Gold word alignments carried onto the tokens the models read (the demo's Wu §5.1.2).

The toy world aligns its own gold words; the models read the same sentences as the text pipeline
tokenized them, which splits some gold words (jieba without the toy world's dictionary cuts toy
Chinese into characters; with it, a few words), joins a few (Moses keeps French "ca." whole)
and normalizes some characters ("。" becomes "."). A *unit*
is the smallest run of tokens whose boundaries are also gold-word boundaries: usually one token and
one word; a split word is one unit of several tokens; joined words share one unit. Gold links
between words become links between units, and a unit's vector is the mean of the subword states of
all its tokens, as a word's is (Wu §5.1.1).

Characters are matched with the standard library's ``difflib`` (no dependency for a few thousand
short lines); a character the tokenizer rewrote is matched by position inside its changed block.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from xling.contracts.alignment import Link

Span = tuple[int, int]  # tokens [start, end) of a sentence


def word_spans(words: Sequence[str], tokens: Sequence[str]) -> list[Span | None]:
    """For each word, the tokens that hold its characters, widened until no two spans cross.

    A word none of whose characters survive tokenization gets ``None``. Two words whose tokens
    overlap share the union of their spans, so the spans of a sentence are disjoint or equal.
    """
    token_of_char = [t for t, token in enumerate(tokens) for _ in token]
    word_text, token_text = "".join(words), "".join(tokens)
    matcher = difflib.SequenceMatcher(None, word_text, token_text, autojunk=False)
    target_of_char: list[list[int]] = [[] for _ in word_text]
    for _, i1, i2, j1, j2 in matcher.get_opcodes():
        for i in range(i1, i2):  # equal or rewritten: by position within the block
            if j1 < j2:
                j = j1 + (i - i1) * (j2 - j1) // (i2 - i1)
                target_of_char[i].append(token_of_char[j])
    spans: list[Span | None] = []
    start = 0
    for word in words:
        hit = [t for chars in target_of_char[start : start + len(word)] for t in chars]
        spans.append((min(hit), max(hit) + 1) if hit else None)
        start += len(word)
    return _merge_crossing(spans)


def _merge_crossing(spans: list[Span | None]) -> list[Span | None]:
    """Replace every span by the union of the group of overlapping spans it belongs to."""
    merged: list[Span] = []
    for start, end in sorted({span for span in spans if span is not None}):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return [
        None if span is None else next(m for m in merged if m[0] <= span[0] < m[1])
        for span in spans
    ]


def sentence_units(spans: Sequence[Span | None]) -> tuple[list[Span], list[int | None]]:
    """The distinct spans of a sentence in token order, and each word's index among them."""
    units = sorted({span for span in spans if span is not None})
    index = {span: u for u, span in enumerate(units)}
    return units, [None if span is None else index[span] for span in spans]


def gold_units(
    source_words: Sequence[Sequence[str]],
    source_tokens: Sequence[Sequence[str]],
    target_words: Sequence[Sequence[str]],
    target_tokens: Sequence[Sequence[str]],
    links: Sequence[Sequence[Link]],
) -> tuple[list[list[Span]], list[list[Span]], list[list[Link]]]:
    """Per sentence pair: the source units, the target units, and the gold word links as unit
    links (duplicates removed: two linked words of one unit pair give one link).

    Raises:
        ValueError: the five inputs differ in length, or a link names a word its line lacks.
    """
    lengths = {len(source_words), len(source_tokens), len(target_words), len(target_tokens)}
    if lengths != {len(links)}:
        raise ValueError(
            f"gold words, tokens and alignments differ in length: {len(source_words)}, "
            f"{len(source_tokens)}, {len(target_words)}, {len(target_tokens)} and {len(links)} "
            "lines; they must be the same parallel sentences"
        )
    source_units, target_units, unit_links = [], [], []
    sentences = zip(source_words, source_tokens, target_words, target_tokens, links, strict=True)
    for line, (src_words, src_tokens, tgt_words, tgt_tokens, pairs) in enumerate(sentences, 1):
        src_units, src_of_word = sentence_units(word_spans(src_words, src_tokens))
        tgt_units, tgt_of_word = sentence_units(word_spans(tgt_words, tgt_tokens))
        projected = set()
        for i, j in pairs:
            if i >= len(src_of_word) or j >= len(tgt_of_word):
                raise ValueError(
                    f"alignment line {line}: link {i}-{j} names a word beyond the sentence's "
                    f"{len(src_of_word)} source and {len(tgt_of_word)} target words"
                )
            if src_of_word[i] is not None and tgt_of_word[j] is not None:
                projected.add((src_of_word[i], tgt_of_word[j]))
        source_units.append(src_units)
        target_units.append(tgt_units)
        unit_links.append(sorted(projected))
    return source_units, target_units, unit_links
