"""NER in the WikiAnn format (Rahimi et al. split): ``{lang}:{word}<TAB>{tag}``, BIO tags, an empty
line after each sentence; prediction files add a third column, the predicted tag."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xling.base.atomic import atomic_open
from xling.base.errors import DataFormatError
from xling.base.fileio import iter_lines

BIO_TAG = re.compile(r"^(O|[BI]-[A-Za-z0-9_]+)$")


@dataclass
class TaggedSentence:
    """One NER sentence; ``line`` is the 1-based line of its first word."""

    words: list[str]
    tags: list[str]
    line: int
    path: str = ""

    def where(self, word: int = 0) -> str:
        """``file:line`` of word ``word`` (one word a line)."""
        return f"{self.path}:{self.line + word}"


def read_ner(path: str | Path, lang: str) -> list[TaggedSentence]:
    """Read ``{lang}:{word}<TAB>{tag}`` lines, an empty line after each sentence (WikiAnn).

    The ``{lang}:`` prefix must be the file's language. A third column (a predicted tag, as written
    by :func:`write_ner_predictions`) is allowed and ignored.
    """
    prefix = f"{lang}:"
    sentences: list[TaggedSentence] = []
    words: list[str] = []
    tags: list[str] = []
    start = 0
    for number, line in iter_lines(path):
        if not line.strip():
            if words:
                sentences.append(TaggedSentence(words, tags, start, str(path)))
                words, tags = [], []
            continue
        columns = line.split("\t")
        if len(columns) not in (2, 3):
            raise DataFormatError(
                path,
                number,
                f"expected 2 tab-separated columns, found {len(columns)}",
                f"write '{lang}:WORD<TAB>TAG'",
            )
        token, tag = columns[0], columns[1]
        if not token.startswith(prefix):
            raise DataFormatError(
                path,
                number,
                f"word {token!r} lacks the language prefix {prefix!r}",
                f"every line of a {lang} file starts with '{prefix}'",
            )
        word = token[len(prefix) :]
        if not word.strip():
            raise DataFormatError(path, number, "empty word", "remove the line or fix the word")
        if not BIO_TAG.match(tag):
            raise DataFormatError(
                path, number, f"tag {tag!r} is not a BIO tag", "use O, B-TYPE or I-TYPE"
            )
        if not words:
            start = number
        words.append(word)
        tags.append(tag)
    if words:
        sentences.append(TaggedSentence(words, tags, start, str(path)))
    if not sentences:
        raise DataFormatError(path, 1, "no sentence in file", "check the path and the data stage")
    return sentences


def format_ner_sentence(
    lang: str, words: Sequence[str], tags: Sequence[str], predicted: Sequence[str] | None = None
) -> str:
    """One sentence: a line per word (gold tag, then the predicted one if given), an empty line."""
    if predicted is None:
        lines = [f"{lang}:{word}\t{tag}\n" for word, tag in zip(words, tags, strict=True)]
    else:
        lines = [
            f"{lang}:{word}\t{gold}\t{tag}\n"
            for word, gold, tag in zip(words, tags, predicted, strict=True)
        ]
    return "".join(lines) + "\n"


def write_ner(
    path: str | Path, lang: str, sentences: Iterable[tuple[Sequence[str], Sequence[str]]]
) -> int:
    """Write ``(words, tags)`` sentences (atomically); returns how many."""
    count = 0
    with atomic_open(path) as out:
        for words, tags in sentences:
            out.write(format_ner_sentence(lang, words, tags))
            count += 1
    return count


def write_ner_predictions(
    path: str | Path, lang: str, sentences: Sequence[TaggedSentence], predicted: Sequence[list[str]]
) -> None:
    """The gold sentences plus a predicted tag: ``{lang}:{word}<TAB>{gold}<TAB>{predicted}``."""
    with atomic_open(path) as handle:
        for sentence, tags in zip(sentences, predicted, strict=True):
            handle.write(format_ner_sentence(lang, sentence.words, sentence.tags, tags))
