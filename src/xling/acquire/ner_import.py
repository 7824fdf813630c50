"""Bring the paper study's NER data into the WikiAnn format of the contract (Wu §3.2).

* WikiAnn (Rahimi et al. 2019 split), en/fr/ru: already ``lang:word<TAB>tag``; validated and copied.
* CoNLL 2003 English (en-zh pair): IOB1 -> IOB2; MISC is mapped to O, because the Chinese test set
  (and WikiAnn) have only PER, LOC and ORG and a MISC prediction could only be a false positive.
* Levow (2006) Chinese (SIGHAN 2006 MSRA), one character a line with its tag: the characters are
  segmented with the configured segmenter and the labels realigned to its words, as the paper did
  with the Stanford segmenter. A word takes the tag of its first character, or B-X if an entity X
  starts inside it (an I- tag that starts a word after a different entity becomes B-); entity edges
  inside a word are approximated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from xling.acquire.manual import NER_FILES, NER_HOWTO, ner_files
from xling.base.errors import DataFormatError
from xling.base.fileio import iter_lines
from xling.contracts.ner import read_ner, write_ner
from xling.preprocess.segmenters import UserWord, jieba_tokenizer

TAGS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG")
MSRA_TYPES = {"NR": "PER", "NS": "LOC", "NT": "ORG", "PER": "PER", "LOC": "LOC", "ORG": "ORG"}
Sentence = tuple[list[str], list[str]]


def read_wikiann(path: str | Path, lang: str) -> list[Sentence]:
    """Parse a WikiAnn file (xling.contracts.ner's checks); require the PER / LOC / ORG tag set."""
    sentences = []
    for sentence in read_ner(path, lang):
        for index, tag in enumerate(sentence.tags):
            if tag not in TAGS:
                raise DataFormatError(
                    path, sentence.line + index, f"unknown tag {tag!r}", f"allowed: {TAGS}"
                )
        sentences.append((sentence.words, sentence.tags))
    return sentences


def iob1_to_iob2(tags: Sequence[str]) -> list[str]:
    out = []
    previous = "O"
    for tag in tags:
        if tag.startswith("I-") and (previous == "O" or previous[2:] != tag[2:]):
            tag = "B-" + tag[2:]
        out.append(tag)
        previous = tag
    return out


def read_conll2003(path: str | Path) -> list[Sentence]:
    """CoNLL 2003 (``word POS chunk NER``, IOB1, ``-DOCSTART-`` lines) -> IOB2 without MISC."""
    sentences: list[Sentence] = []
    words: list[str] = []
    raw_tags: list[str] = []

    def flush():
        if words:
            tags = ["O" if t.endswith("MISC") else t for t in iob1_to_iob2(raw_tags)]
            sentences.append((list(words), tags))
            words.clear()
            raw_tags.clear()

    for number, line in iter_lines(path):
        fields = line.split()
        if not fields:
            flush()
            continue
        if fields[0] == "-DOCSTART-":
            continue
        if len(fields) != 4 or not re.fullmatch(r"O|[BI]-(PER|LOC|ORG|MISC)", fields[3]):
            raise DataFormatError(
                path,
                number,
                f"found {line.strip()!r}",
                "expected 'word POS chunk NER' (IOB tag)",
            )
        words.append(fields[0])
        raw_tags.append(fields[3])
    flush()
    return sentences


def read_char_bio(path: str | Path) -> list[tuple[str, list[str]]]:
    """Character-per-line BIO (``char tag``), blank line between sentences -> (text, char tags)."""
    sentences = []
    chars: list[str] = []
    tags: list[str] = []
    for number, line in iter_lines(path):
        fields = line.split()
        if not fields:
            if chars:
                sentences.append(("".join(chars), tags))
                chars, tags = [], []
            continue
        if len(fields) != 2 or len(fields[0]) != 1:
            raise DataFormatError(
                path, number, f"found {line.strip()!r}", "expected '<one character> <tag>'"
            )
        tag = fields[1]
        if tag != "O":
            match = re.fullmatch(r"([BIM])-(\w+)", tag)
            if not match or match.group(2).upper() not in MSRA_TYPES:
                raise DataFormatError(path, number, f"unknown tag {tag!r}")
            tag = f"{'B' if match.group(1) == 'B' else 'I'}-{MSRA_TYPES[match.group(2).upper()]}"
        chars.append(fields[0])
        tags.append(tag)
    if chars:
        sentences.append(("".join(chars), tags))
    return sentences


def realign_to_words(
    text: str, char_tags: Sequence[str], segment: Callable[[str], list[str]]
) -> Sentence:
    """Give each segmenter word the tag of its first character (see the module docstring)."""
    words = [w for w in segment(text) if w.strip()]
    tags: list[str] = []
    position = 0
    previous = "O"
    for word in words:
        start = text.index(word, position)
        position = start + len(word)
        tag = char_tags[start]
        if tag == "O":  # an entity that starts inside the word still marks the word
            tag = next((t for t in char_tags[start:position] if t.startswith("B-")), "O")
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            tag = "B-" + tag[2:]
        tags.append(tag)
        previous = tag
    return words, tags


def jieba_segmenter(user_words: tuple[UserWord, ...]) -> Callable[[str], list[str]]:
    """jieba with the study's user words (config languages.<lang>.user_dictionary), so that the
    labels land on the words the pretraining corpus was cut into. No punctuation normalization:
    realignment needs the characters of the text as they are."""
    tokenizer = jieba_tokenizer(user_words)
    return lambda text: list(tokenizer.cut(text))


def _expect(path: Path, dataset: str, manual_dir: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing. The NER dataset {dataset!r} cannot be downloaded by the workflow: "
            f"put it under {manual_dir} as {NER_HOWTO[dataset]}, or choose another dataset in "
            "config key tasks.ner.datasets."
        )
    return path


def import_ner(
    dataset: str,
    lang: str,
    manual_dir: str | Path,
    outputs: dict[str, str | Path],
    segment: Callable[[str], list[str]] | None = None,
    dev_share: float = 0.05,
) -> dict[str, int]:
    """Write ``outputs`` (train/dev/test paths) for one language of one dataset; returns counts."""
    manual_dir = Path(manual_dir)
    files = {
        split: _expect(path, dataset, manual_dir)
        for split, path in ner_files(dataset, lang, manual_dir).items()
    }
    if dataset == "wikiann":
        splits = {split: read_wikiann(files[split], lang) for split in ("train", "dev", "test")}
    elif dataset == "conll2003":
        splits = {split: read_conll2003(files[split]) for split in ("train", "dev", "test")}
    elif dataset == "levow2006":
        segment = segment or jieba_segmenter(())
        read = {
            split: [
                realign_to_words(text, tags, segment) for text, tags in read_char_bio(files[split])
            ]
            for split in ("train", "test")
        }
        # The release has no dev set; the last share of train serves (only test is read zero-shot).
        cut = len(read["train"]) - max(1, int(len(read["train"]) * dev_share))
        splits = {"train": read["train"][:cut], "dev": read["train"][cut:], "test": read["test"]}
    else:
        raise ValueError(f"unknown NER dataset {dataset!r}; known: {sorted(NER_FILES)}")
    return {
        split: write_ner(outputs[split], lang, splits[split]) for split in ("train", "dev", "test")
    }
