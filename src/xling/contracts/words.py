"""Gold words (``R/data/parallel/{lang}.words.txt`` and XNLI's ``*_tokenized`` columns): the words
of a sentence separated by one space, so that ``line.split(" ")`` gives them back."""

from __future__ import annotations

from collections.abc import Iterable


def join_words(words: Iterable[str]) -> str:
    """One sentence's words as one line (without its line end)."""
    return " ".join(words)
