"""CoNLL-U treebanks (UD v2): read with the ``conllu`` library, written line by line.

Written here: the toy world's gold sentences (:func:`format_conllu_sentence`), the parser's
predictions (:func:`write_conllu_predictions`, the input treebank with predicted trees) and the
POS tagger's (:func:`write_upos_predictions`, the input treebank with predicted UPOS).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import conllu
import conllu.exceptions

from xling.base.atomic import atomic_open
from xling.base.errors import DataFormatError
from xling.base.fileio import iter_lines

# The 37 universal relations of UD v2 (universaldependencies.org/u/dep), the parser's label set.
UD_RELATIONS = frozenset(
    (  # noqa: SIM905 (one item per line would take 37 lines)
        "acl advcl advmod amod appos aux case cc ccomp clf compound conj cop csubj dep det "
        "discourse dislocated expl fixed flat goeswith iobj list mark nmod nsubj nummod obj obl "
        "orphan parataxis punct reparandum root vocative xcomp"
    ).split()
)


# The 17 universal part-of-speech tags of UD v2 (universaldependencies.org/u/pos), the POS
# tagger's label set, in alphabetical order (their label ids).
UPOS_TAGS = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN",
    "PUNCT", "SCONJ", "SYM", "VERB", "X",
)  # fmt: skip


def universal_relation(deprel: str) -> str:
    """``"nsubj:pass"`` -> ``"nsubj"``: LAS compares universal relations only (CoNLL 2018)."""
    return deprel.split(":", 1)[0]


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


def surface_tokens(sentence: ParsedSentence) -> list[str]:
    """The sentence's tokens as written: a multi-word token (``1-2 du`` over ``de`` ``le``) is
    its surface form, not its syntactic words, as a model reading the raw text sees it."""
    tokens: list[str] = []
    covered = 0  # the last word ID inside the multi-word range being read
    for line in sentence.block:
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        first, dash, last = fields[0].partition("-")
        if dash:
            tokens.append(fields[1])
            covered = int(last)
        elif "." not in first and int(first) > covered:
            tokens.append(fields[1])
    return tokens


def _conllu_blocks(path: str | Path) -> Iterator[tuple[int, list[str]]]:
    block: list[str] = []
    start = 0
    for number, line in iter_lines(path):
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


def read_conllu(path: str | Path, *, require_upos: bool = False) -> list[ParsedSentence]:
    """Read a CoNLL-U treebank with the ``conllu`` library, checking what the parser relies on.

    Checked, with file and line: ten tab-separated columns; word IDs 1..n in order; HEAD an integer
    in 0..n; DEPREL a UD v2 universal relation (after stripping the subtype); the heads form one
    tree (see :func:`_check_tree`); with ``require_upos`` (the POS tagger's files), UPOS one of the
    17 universal tags (:data:`UPOS_TAGS`; ``_`` is not one).
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
        last_range = None  # (line, last word ID) of the latest multi-word range
        for row, token in zip(rows, tokens, strict=True):
            number = start + row
            if not isinstance(token["id"], int):
                if token["id"][1] == "-":  # a multi-word range (1-2); else an empty node (1.1)
                    last_range = _check_range(path, number, token["id"], len(sentence.words))
                continue
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
            if require_upos and token["upos"] not in UPOS_TAGS:
                raise DataFormatError(
                    path,
                    number,
                    f"UPOS {token['upos']!r} is not one of the 17 universal POS tags",
                    f"use one of {', '.join(UPOS_TAGS)} (universaldependencies.org/u/pos)",
                )
            sentence.words.append(token["form"])
            sentence.upos.append(token["upos"])
            sentence.heads.append(head)
            sentence.deprels.append(relation)
            sentence.word_rows.append(row)
        if not sentence.words:
            raise DataFormatError(path, start, "sentence without any word line")
        if last_range and last_range[1] > len(sentence.words):
            raise DataFormatError(
                path,
                last_range[0],
                f"multi-word range ends at word {last_range[1]}, the sentence has "
                f"{len(sentence.words)}",
                "a range names the IDs of the words that follow it",
            )
        _check_tree(sentence)
        sentences.append(sentence)
    if not sentences:
        raise DataFormatError(path, 1, "no sentence in file", "check the path and the data stage")
    return sentences


def _check_range(path, number: int, ids: tuple, words_before: int) -> tuple[int, int]:
    """A multi-word range stands right before its first word and covers two words or more (the
    surface tokens of the similarity analysis rely on it); returns (line, its last word ID)."""
    first, _, last = ids
    if first != words_before + 1 or last <= first:
        raise DataFormatError(
            path,
            number,
            f"multi-word range {first}-{last} after word {words_before}",
            "a range N-M (M > N) stands right before word N",
        )
    return number, last


def _check_tree(sentence: ParsedSentence) -> None:
    """The heads of a sentence form a tree: every word's head is another word of the sentence or
    0, exactly one word has HEAD 0, and every word reaches it (no cycle).

    The parser's loss and decoder assume this: a self-loop, for one, gives an arc loss of ~1e38.
    """
    heads, path = sentence.heads, sentence.path

    def line(word: int) -> int:  # word: 1-based ID
        return sentence.line + sentence.word_rows[word - 1]

    for word, head in enumerate(heads, 1):
        if not 0 <= head <= len(heads):
            raise DataFormatError(
                path,
                line(word),
                f"HEAD {head} outside 0..{len(heads)}",
                "HEAD is the ID of a word of the same sentence, or 0 for the root",
            )
        if head == word:
            raise DataFormatError(
                path,
                line(word),
                f"word {word} is its own head (HEAD {head})",
                "HEAD is the ID of another word of the sentence, or 0 for the root",
            )
    roots = [word for word, head in enumerate(heads, 1) if head == 0]
    if not roots:
        raise DataFormatError(
            path,
            line(1),
            "sentence without a root (no word has HEAD 0)",
            "give the sentence's main word HEAD 0 and DEPREL root",
        )
    if len(roots) > 1:
        raise DataFormatError(
            path,
            line(roots[1]),
            f"second root: words {', '.join(map(str, roots))} all have HEAD 0",
            "a sentence has one root; attach the other words to a word of the sentence",
        )
    reaches_root = {0}
    for start in range(1, len(heads) + 1):
        chain: dict[int, int] = {}  # word -> position, from ``start`` up to one reaching the root
        word = start
        while word not in reaches_root:
            if word in chain:
                cycle = list(chain)[chain[word] :]
                first = cycle.index(min(cycle))
                cycle = cycle[first:] + cycle[:first]
                raise DataFormatError(
                    path,
                    line(cycle[0]),
                    f"words {' -> '.join(map(str, [*cycle, cycle[0]]))} form a cycle: following "
                    "HEAD from them never reaches the root",
                    "attach one word of the cycle to a word outside it, or to the root",
                )
            chain[word] = len(chain)
            word = heads[word - 1]
        reaches_root.update(chain)


@dataclass(frozen=True)
class ConlluWord:
    """The columns of one word line but ID (its position) and XPOS and DEPS (always ``_``)."""

    form: str
    lemma: str
    upos: str
    feats: str
    head: int
    deprel: str
    misc: str = "_"


def format_conllu_sentence(comments: Mapping[str, str], words: Sequence[ConlluWord]) -> str:
    """One sentence: ``# key = value`` comments, a word line per word, then an empty line."""
    lines = [f"# {key} = {value}" for key, value in comments.items()]
    lines += [
        f"{i}\t{w.form}\t{w.lemma}\t{w.upos}\t_\t{w.feats}\t{w.head}\t{w.deprel}\t_\t{w.misc}"
        for i, w in enumerate(words, 1)
    ]
    return "\n".join(lines) + "\n\n"


def write_conllu_predictions(
    path: str | Path,
    sentences: Sequence[ParsedSentence],
    heads: Sequence[Sequence[int]],
    deprels: Sequence[Sequence[str]],
) -> None:
    """The input treebank with HEAD and DEPREL of every syntactic word replaced by predictions.

    Comments, multi-word ranges and empty nodes are copied unchanged; DEPS of predicted words is set
    to ``_`` because the gold enhanced graph no longer matches the predicted tree.
    """
    columns = [
        [{6: str(head), 7: rel, 8: "_"} for head, rel in zip(sent_heads, sent_rels, strict=True)]
        for sent_heads, sent_rels in zip(heads, deprels, strict=True)
    ]
    _write_replacing(path, sentences, columns)


def write_upos_predictions(
    path: str | Path, sentences: Sequence[ParsedSentence], upos: Sequence[Sequence[str]]
) -> None:
    """The input treebank with the UPOS of every syntactic word replaced by predictions.

    Everything else (comments, the other columns, multi-word ranges, empty nodes) is copied
    unchanged.
    """
    columns = [[{3: tag} for tag in tags] for tags in upos]
    _write_replacing(path, sentences, columns)


def _write_replacing(
    path: str | Path,
    sentences: Sequence[ParsedSentence],
    replacements: Sequence[Sequence[Mapping[int, str]]],
) -> None:
    """Each sentence's block with some columns (0-based index -> value) of each word replaced."""
    with atomic_open(path) as handle:
        for sentence, words in zip(sentences, replacements, strict=True):
            lines = list(sentence.block)
            for row, replaced in zip(sentence.word_rows, words, strict=True):
                columns = lines[row].split("\t")
                for index, value in replaced.items():
                    columns[index] = value
                lines[row] = "\t".join(columns)
            handle.write("\n".join(lines) + "\n\n")
