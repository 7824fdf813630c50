"""Readers for the task data formats of docs/contracts.md, section 1.

Every malformed line stops with ``DataFormatError`` naming the file, the 1-based line and the fix:
a silently skipped line would shift every later label or head.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import conllu
import conllu.exceptions

from xling.finetune.metrics import universal_relation

# The 37 universal relations of UD v2 (universaldependencies.org/u/dep), the parser's label set.
UD_RELATIONS = frozenset(
    (  # noqa: SIM905 (one item per line would take 37 lines)
        "acl advcl advmod amod appos aux case cc ccomp clf compound conj cop csubj dep det "
        "discourse dislocated expl fixed flat goeswith iobj list mark nmod nsubj nummod obj obl "
        "orphan parataxis punct reparandum root vocative xcomp"
    ).split()
)
NLI_LABELS = ("contradiction", "entailment", "neutral")
# XNLI-MT-1.0's English train file spells one label differently from XNLI-1.0.
NLI_LABEL_ALIASES = {"contradictory": "contradiction"}
BIO_TAG = re.compile(r"^(O|[BI]-[A-Za-z0-9_]+)$")


class DataFormatError(ValueError):
    """A task file does not follow its format; the message names the file and the line."""

    def __init__(self, path: str | Path, line: int, reason: str, fix: str = ""):
        self.path, self.line = str(path), line
        super().__init__(f"{path}:{line}: {reason}" + (f" ({fix})" if fix else ""))


def _read_lines(path: str | Path) -> list[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        line = Path(path).read_bytes()[: error.start].count(b"\n") + 1
        raise DataFormatError(
            path, line, "not valid UTF-8", "re-encode the file as UTF-8"
        ) from None
    return text.split("\n")


# --------------------------------------------------------------------------- NER (WikiAnn format)
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
    by :func:`xling.finetune.writers.write_ner`) is allowed and ignored.
    """
    prefix = f"{lang}:"
    sentences: list[TaggedSentence] = []
    words: list[str] = []
    tags: list[str] = []
    start = 0
    for number, raw in enumerate(_read_lines(path), start=1):
        line = raw.rstrip("\r")
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


# --------------------------------------------------------------------------- CoNLL-U
@dataclass
class ParsedSentence:
    """The syntactic words of one CoNLL-U sentence (multi-word ranges and empty nodes dropped).

    ``block`` keeps the sentence's original lines so that predictions are written back around them;
    ``word_rows[i]`` is the index in ``block`` of word ``i + 1``; ``line`` is the file line of
    ``block[0]``. ``deprels`` are universal relations (subtypes stripped, as CoNLL 2018 scores
    them).
    """

    words: list[str]
    upos: list[str]
    heads: list[int]
    deprels: list[str]
    block: list[str] = field(repr=False)
    word_rows: list[int] = field(repr=False)
    line: int = 0
    path: str = ""

    def where(self, word: int | None = None) -> str:
        """``file:line`` of the sentence, or of word ``word`` (0-based)."""
        row = 0 if word is None else self.word_rows[word]
        return f"{self.path}:{self.line + row}"


def _conllu_blocks(path: str | Path) -> Iterator[tuple[int, list[str]]]:
    block: list[str] = []
    start = 0
    for number, raw in enumerate(_read_lines(path), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            if block:
                yield start, block
                block = []
            continue
        if not block:
            start = number
        block.append(line)
    if block:
        yield start, block


def _first_unparsable_row(block: list[str], rows: list[int]) -> int:
    """Which line of a sentence ``conllu`` rejects (it reports the field, not the line)."""
    for i in rows:
        try:
            conllu.parse(block[i] + "\n\n")
        except conllu.exceptions.ParseException:
            return i
    return 0


def read_conllu(path: str | Path) -> list[ParsedSentence]:
    """Read a CoNLL-U treebank with the ``conllu`` library, checking what the parser relies on.

    Checked, with file and line: ten tab-separated columns; word IDs 1..n in order; HEAD an integer
    in 0..n; DEPREL a UD v2 universal relation (after stripping the subtype).
    """
    sentences: list[ParsedSentence] = []
    for start, block in _conllu_blocks(path):
        rows = [i for i, line in enumerate(block) if not line.startswith("#")]
        for i in rows:
            if block[i].count("\t") != 9:
                raise DataFormatError(
                    path,
                    start + i,
                    f"expected 10 tab-separated columns, found {block[i].count(chr(9)) + 1}",
                    "CoNLL-U separates its 10 columns by tabs",
                )
        try:
            (tokens,) = conllu.parse("\n".join(block) + "\n\n")
        except conllu.exceptions.ParseException as error:
            line = start + _first_unparsable_row(block, rows)
            raise DataFormatError(path, line, f"does not parse: {error}") from None
        sentence = ParsedSentence([], [], [], [], block, [], start, str(path))
        for row, token in zip(rows, tokens, strict=True):
            if not isinstance(token["id"], int):
                continue  # a multi-word range (1-2) or an empty node (1.1)
            number = start + row
            if token["id"] != len(sentence.words) + 1:
                raise DataFormatError(
                    path,
                    number,
                    f"word ID {token['id']} where {len(sentence.words) + 1} was due",
                    "word IDs count 1, 2, ... within each sentence",
                )
            head, deprel = token["head"], token["deprel"]
            if not isinstance(head, int):
                raise DataFormatError(path, number, f"HEAD {head!r} is not an integer")
            relation = universal_relation(deprel or "")
            if relation not in UD_RELATIONS:
                raise DataFormatError(
                    path,
                    number,
                    f"DEPREL {deprel!r} is not a UD v2 universal relation",
                    "use one of the 37 relations of universaldependencies.org/u/dep",
                )
            sentence.words.append(token["form"])
            sentence.upos.append(token["upos"])
            sentence.heads.append(head)
            sentence.deprels.append(relation)
            sentence.word_rows.append(row)
        if not sentence.words:
            raise DataFormatError(path, start, "sentence without any word line")
        for j, head in enumerate(sentence.heads):
            if not 0 <= head <= len(sentence.words):
                raise DataFormatError(
                    path,
                    start + sentence.word_rows[j],
                    f"HEAD {head} outside 0..{len(sentence.words)}",
                )
        sentences.append(sentence)
    if not sentences:
        raise DataFormatError(path, 1, "no sentence in file", "check the path and the data stage")
    return sentences


# --------------------------------------------------------------------------- XNLI
@dataclass
class NliPair:
    premise: str
    hypothesis: str
    label: str
    pair_id: str
    line: int
    path: str = ""

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def _nli_label(path: str | Path, number: int, value: str) -> str:
    label = NLI_LABEL_ALIASES.get(value, value)
    if label not in NLI_LABELS:
        raise DataFormatError(
            path,
            number,
            f"label {value!r} is not an NLI label",
            f"use one of {', '.join(NLI_LABELS)} (or 'contradictory' in XNLI-MT)",
        )
    return label


def tsv_rows(path: str | Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    """Rows of a header-first tsv as dicts with their 1-based line numbers (no csv quoting)."""
    lines = _read_lines(path)
    if lines and lines[-1] == "":
        lines.pop()
    # QUOTE_NONE: XNLI sentences contain bare double quotes that csv would take for quoting.
    reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, None)
    missing = [name for name in required if header is None or name not in header]
    if missing:
        raise DataFormatError(
            path, 1, f"header lacks column(s) {missing}", f"the header names {', '.join(required)}"
        )
    for number, row in enumerate(reader, start=2):
        if len(row) != len(header):
            raise DataFormatError(
                path, number, f"{len(row)} tab-separated fields, the header has {len(header)}"
            )
        yield number, dict(zip(header, (value.rstrip("\r") for value in row), strict=True))


def read_xnli(path: str | Path, lang: str) -> list[NliPair]:
    """Read the pairs of one language from an XNLI-1.0 dev/test tsv (all languages in one file)."""
    pairs = []
    columns = ("language", "gold_label", "sentence1", "sentence2")
    for number, row in tsv_rows(path, columns):
        if row["language"] != lang:
            continue
        label = _nli_label(path, number, row["gold_label"])
        pair_id = row.get("pairID") or str(len(pairs))
        pairs.append(NliPair(row["sentence1"], row["sentence2"], label, pair_id, number, str(path)))
    if not pairs:
        raise DataFormatError(path, 1, f"no row with language {lang!r}", "check the language code")
    return pairs


def read_xnli_train(path: str | Path) -> list[NliPair]:
    """Read the XNLI-MT-1.0 training file (``premise<TAB>hypo<TAB>label``)."""
    pairs = []
    for number, row in tsv_rows(path, ("premise", "hypo", "label")):
        label = _nli_label(path, number, row["label"])
        pairs.append(
            NliPair(row["premise"], row["hypo"], label, str(len(pairs)), number, str(path))
        )
    if not pairs:
        raise DataFormatError(path, 1, "no training pair in file")
    return pairs
