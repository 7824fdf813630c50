"""Tables with the paper beside this run, cell by cell, as csv, markdown and LaTeX (booktabs).

Every table of both studies is written through :func:`write_compared`: each cell holds our number,
the paper's number and their difference (ours minus the paper's; plus, where a column's
``paper_sign`` says the paper printed the magnitude of a negative number). The csv keeps them in
separate columns (``<col>``, ``<col> paper``, ``<col> diff``, and ``<col> std`` where a study ran
several seeds); markdown and LaTeX print the compact ``ours (paper)`` form. A cell this run did
not compute reads ``n/c``, never a number; a cell the paper does not report prints ours alone.
Cells whose paper number is suspect (e.g. copied from another row in the paper) carry a dagger and
a note under the table.

A table may also have text columns before the numbers (how a row was built, e.g. Table 1's domain
and vocabulary), printed as they are, and a key column that only the csv carries (a stable row id
for programs that read it, where the printed label may be renamed).

Written here rather than with ``DataFrame.to_latex``/``to_markdown``: group captions span the row
and cells combine two numbers, which neither expresses, and ``to_markdown`` needs tabulate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from xling.base.atomic import atomic_open

NOT_COMPUTED = "n/c"
SUSPECT_MARK = "†"
Value = float | None


def is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


@dataclass(frozen=True)
class ComparedRow:
    """One row: its label, its group caption, and per column our value, the paper's and our
    spread over seeds (all optional)."""

    label: str
    ours: Mapping[str, Value]
    paper: Mapping[str, Value] = field(default_factory=dict)
    spread: Mapping[str, Value] = field(default_factory=dict)
    group: str = ""
    suspect: frozenset[str] = frozenset()  # columns whose paper number is suspect
    text: Mapping[str, str] = field(default_factory=dict)  # the table's text columns
    key: str = ""  # the row's id in the csv's key column


@dataclass(frozen=True)
class ComparedTable:
    """A table of ``rows`` x ``columns``; ``description`` lines go above it, ``notes`` below."""

    title: str
    columns: Sequence[str]
    rows: Sequence[ComparedRow]
    description: Sequence[str] = ()
    notes: Sequence[str] = ()
    digits: int = 1
    row_heading: str = ""
    text_columns: Sequence[str] = ()  # printed between the label and the numbers
    key_heading: str = ""  # when set, the csv has this column with each row's key
    column_digits: Mapping[str, int] = field(default_factory=dict)  # overrides ``digits``
    # Per column, the sign the paper's number takes in the diff (default +1): -1 where the paper
    # prints a magnitude whose sign its text implies is negative, so the diff compares like with
    # like while the paper column keeps the number as printed. Say so in the table's notes.
    paper_sign: Mapping[str, int] = field(default_factory=dict)

    def digits_of(self, column: str) -> int:
        return self.column_digits.get(column, self.digits)

    def difference(self, row: ComparedRow, column: str) -> Value:
        """Ours minus the paper's number (times its ``paper_sign``)."""
        ours, paper = row.ours.get(column), row.paper.get(column)
        if is_missing(ours) or is_missing(paper):
            return None
        return ours - self.paper_sign.get(column, 1) * paper

    @property
    def has_spread(self) -> bool:
        return any(not is_missing(v) for row in self.rows for v in row.spread.values())

    @property
    def has_paper(self) -> bool:
        """Whether any cell has the paper's number beside ours."""
        return any(not is_missing(v) for row in self.rows for v in row.paper.values())

    @property
    def suspect_notes(self) -> list[str]:
        return [note for note in self.notes if note.startswith(SUSPECT_MARK)]


def _number(value: Value, digits: int) -> str:
    return NOT_COMPUTED if is_missing(value) else f"{value:.{digits}f}"


def compact_cell(table: ComparedTable, row: ComparedRow, column: str) -> str:
    """``ours (paper)``, ``ours ± std (paper)``, ``n/c (paper)``, or ours alone."""
    digits = table.digits_of(column)
    text = _number(row.ours.get(column), digits)
    spread = row.spread.get(column)
    if not is_missing(row.ours.get(column)) and not is_missing(spread):
        text += f" ± {spread:.{digits}f}"
    paper = row.paper.get(column)
    if not is_missing(paper):
        mark = SUSPECT_MARK if column in row.suspect else ""
        text += f" ({paper:.{digits}f}{mark})"
    return text


def _text_cell(row: ComparedRow, column: str) -> str:
    value = row.text.get(column)
    return NOT_COMPUTED if value is None or value == "" else str(value)


# The csv's companions of a column ``<col>``: ``<col> std``, ``<col> paper``, ``<col> diff``.
STD_SUFFIX, PAPER_SUFFIX, DIFF_SUFFIX = " std", " paper", " diff"


def ours_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of a csv :func:`to_frame` wrote that hold this run's numbers: those with a
    ``<col> paper`` companion (every compared column has one), in the csv's order."""
    return [column for column in frame.columns if f"{column}{PAPER_SUFFIX}" in frame.columns]


def to_frame(table: ComparedTable) -> pd.DataFrame:
    """The csv form: ours, paper, diff (and std) in separate columns; empty where missing."""
    records = []
    for row in table.rows:
        record: dict[str, object] = {"group": row.group, "row": row.label}
        if table.key_heading:
            record[table.key_heading] = row.key
        for column in table.text_columns:
            value = row.text.get(column)
            record[column] = None if value in (None, NOT_COMPUTED) else value
        for column in table.columns:
            digits = table.digits_of(column) + 2
            record[column] = _rounded(row.ours.get(column), digits)
            if table.has_spread:
                record[f"{column}{STD_SUFFIX}"] = _rounded(row.spread.get(column), digits)
            record[f"{column}{PAPER_SUFFIX}"] = _rounded(row.paper.get(column), digits)
            record[f"{column}{DIFF_SUFFIX}"] = _rounded(table.difference(row, column), digits)
        records.append(record)
    return pd.DataFrame(records)


def _rounded(value: Value, digits: int) -> Value:
    return None if is_missing(value) else round(float(value), digits)


def _grouped_body(table: ComparedTable, width: int) -> list[tuple[str, list[str]]]:
    """('group', [caption]) and ('row', cells) entries in table order."""
    body: list[tuple[str, list[str]]] = []
    group = ""
    for row in table.rows:
        if row.group and row.group != group:
            body.append(("group", [row.group] + [""] * (width - 1)))
        group = row.group
        texts = [_text_cell(row, c) for c in table.text_columns]
        numbers = [compact_cell(table, row, c) for c in table.columns]
        body.append(("row", [row.label, *texts, *numbers]))
    return body


def to_markdown(table: ComparedTable) -> str:
    header = [table.row_heading or " ", *table.text_columns, *table.columns]
    lines = [f"# {table.title}", ""]
    if table.description:
        lines += [*table.description, ""]
    legend = "Each cell: ours (paper); " if table.has_paper else ""
    lines += [f"{legend}`{NOT_COMPUTED}` = not computed by this run.", ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for kind, cells in _grouped_body(table, len(header)):
        if kind == "group":
            cells = [f"**{cells[0]}**", *cells[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    if table.notes:
        lines += ["", *table.notes]
    return "\n".join(lines) + "\n"


_LATEX_SPECIALS = {
    "&": r"\&",
    "%": r"\%",
    "_": r"\_",
    "#": r"\#",
    "±": r"$\pm$",
    "†": r"$^\dagger$",
}
_LATEX_SPECIALS |= {"Δ": r"$\Delta$", "—": "--", "'": "'"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def to_latex(table: ComparedTable) -> str:
    """A booktabs ``tabular`` (needs ``\\usepackage{booktabs}``), captioned with the title."""
    width = 1 + len(table.text_columns) + len(table.columns)
    header = [table.row_heading, *table.text_columns, *table.columns]
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\begin{tabular}{l" + "l" * len(table.text_columns) + "r" * len(table.columns) + "}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in header) + r" \\",
        r"\midrule",
    ]
    for kind, cells in _grouped_body(table, width):
        if kind == "group":
            lines.append(rf"\multicolumn{{{width}}}{{l}}{{\textit{{{latex_escape(cells[0])}}}}} \\")
        else:
            lines.append(" & ".join(latex_escape(c) for c in cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    legend = ["Each cell: ours (paper)."] if table.has_paper else []
    caption = " ".join([table.title + ".", *legend, *table.notes])
    lines += [rf"\caption{{{latex_escape(caption)}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_compared(table: ComparedTable, csv: str | Path, md: str | Path, tex: str | Path) -> None:
    """The three forms of ``table``, each written atomically."""
    with atomic_open(csv) as handle:
        to_frame(table).to_csv(handle, index=False)
    with atomic_open(md) as handle:
        handle.write(to_markdown(table))
    with atomic_open(tex) as handle:
        handle.write(to_latex(table))
