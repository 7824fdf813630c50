"""XNLI: the XNLI-1.0 dev/test tsv files (all languages in one file) and the XNLI-MT-1.0 English
training file (``premise<TAB>hypo<TAB>label``); prediction files ``pairID gold_label prediction``.

Every file has a header row and no quoting: XNLI sentences contain bare double quotes.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from xling.base.atomic import atomic_open
from xling.base.errors import DataFormatError
from xling.base.fileio import iter_lines

NLI_LABELS = ("contradiction", "entailment", "neutral")
# XNLI-MT-1.0's English train file spells one label differently from XNLI-1.0.
NLI_LABEL_ALIASES = {"contradictory": "contradiction"}
XNLI_MT_LABELS = {
    "entailment": "entailment",
    "neutral": "neutral",
    "contradiction": "contradictory",
}

# The header of XNLI-1.0's xnli.dev.tsv and xnli.test.tsv, in the released order.
XNLI_COLUMNS = (
    "language",
    "gold_label",
    "sentence1_binary_parse",
    "sentence2_binary_parse",
    "sentence1_parse",
    "sentence2_parse",
    "sentence1",
    "sentence2",
    "promptID",
    "pairID",
    "genre",
    "label1",
    "label2",
    "label3",
    "label4",
    "label5",
    "sentence1_tokenized",
    "sentence2_tokenized",
    "match",
)
# The columns of XNLI-1.0 the study reads (the premise and hypothesis ids make the parallel text).
XNLI_REQUIRED = ("language", "gold_label", "sentence1", "sentence2", "promptID", "pairID")
XNLI_MT_COLUMNS = ("premise", "hypo", "label")
PREDICTION_COLUMNS = ("pairID", "gold_label", "prediction")


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
    lines = [text for _, text in iter_lines(path)]
    # QUOTE_NONE: XNLI sentences contain bare double quotes that csv would take for quoting.
    reader = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, None)
    missing = [name for name in required if header is None or name not in header]
    if missing:
        raise DataFormatError(
            path, 1, f"header lacks column(s) {missing}", f"the header names {', '.join(required)}"
        )
    number = 1
    try:
        for number, row in enumerate(reader, start=2):
            if len(row) != len(header):
                raise DataFormatError(
                    path, number, f"{len(row)} tab-separated fields, the header has {len(header)}"
                )
            yield number, dict(zip(header, (value.rstrip("\r") for value in row), strict=True))
    except csv.Error as error:  # a carriage return inside a line, a field of over 128k characters
        raise DataFormatError(
            path, number + 1, f"not a tab-separated row ({error})", "re-download the file"
        ) from error


def check_nli_labels(path: str | Path, required: tuple[str, ...], label_column: str) -> None:
    """Read every row of an XNLI or XNLI-MT tsv and check its label (the import does this, so
    that a bad file stops there, not in the first fine-tuning job after pretraining)."""
    for number, row in tsv_rows(path, required):
        _nli_label(path, number, row[label_column])


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
    for number, row in tsv_rows(path, XNLI_MT_COLUMNS):
        label = _nli_label(path, number, row["label"])
        pairs.append(
            NliPair(row["premise"], row["hypo"], label, str(len(pairs)), number, str(path))
        )
    if not pairs:
        raise DataFormatError(path, 1, "no training pair in file")
    return pairs


def format_header(columns: Sequence[str]) -> str:
    """The header row of a tsv file with these columns."""
    return "\t".join(columns) + "\n"


def format_xnli_row(cells: Mapping[str, str]) -> str:
    """One XNLI-1.0 row; a column that ``cells`` does not name is left empty."""
    unknown = set(cells) - set(XNLI_COLUMNS)
    if unknown:  # a bug in the caller, never in a data file
        raise ValueError(f"XNLI-1.0 has no column(s) {sorted(unknown)}")
    return "\t".join(cells.get(column, "") for column in XNLI_COLUMNS) + "\n"


def format_xnli_mt_row(premise: str, hypothesis: str, label: str) -> str:
    """One XNLI-MT-1.0 training row; ``label`` is an XNLI-1.0 label (spelled as XNLI-MT does)."""
    return f"{premise}\t{hypothesis}\t{XNLI_MT_LABELS[label]}\n"


def write_xnli_predictions(
    path: str | Path, pairs: Sequence[NliPair], predicted: Sequence[str]
) -> None:
    """One row per pair, in input order: ``pairID<TAB>gold_label<TAB>prediction`` (with header)."""
    with atomic_open(path) as handle:
        handle.write(format_header(PREDICTION_COLUMNS))
        for pair, label in zip(pairs, predicted, strict=True):
            handle.write(f"{pair.pair_id}\t{pair.label}\t{label}\n")
