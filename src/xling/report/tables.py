"""The report's smaller tables in markdown and LaTeX, beside the csv their stage writes.

The anchors table (the measured "Anchors Pts" of Wu Table 1) and the CKA-retrieval correlation of
Wu §5.2 keep their csv (its columns are a contract, docs/contracts.md); these functions lay the same
rows out as :class:`~xling.report.compare.ComparedTable` so that every table of the report comes in
csv, markdown and LaTeX through one writer. Neither has a number in the paper to put beside ours
(Wu print "all / 0 / extra" anchors and "over 0.9" for every pair), so cells hold ours alone.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from xling.base.atomic import atomic_open
from xling.report.compare import ComparedRow, ComparedTable, to_latex, to_markdown

ANCHOR_NUMBERS = {
    "vocab_size": "vocabulary",
    "src_types": "source types",
    "tgt_types": "target types",
    "shared_types": "shared types",
    "src_token_share": "source tokens shared (%)",
    "tgt_token_share": "target tokens shared (%)",
}


def anchors_table(frame: pd.DataFrame, study: str = "") -> ComparedTable:
    """``anchors.csv``: one row per (pair, domains, scheme); token shares in percent."""
    rows = []
    for record in frame.to_dict("records"):
        ours = {}
        for column, heading in ANCHOR_NUMBERS.items():
            value = record.get(column)
            scale = 100.0 if column.endswith("_share") else 1.0
            ours[heading] = None if pd.isna(value) else scale * float(value)
        rows.append(
            ComparedRow(
                str(record["scheme"]),
                ours,
                group=f"{record['pair']} ({record['domains']})",
            )
        )
    digits = {h: 0 for column, h in ANCHOR_NUMBERS.items() if not column.endswith("_share")}
    return ComparedTable(
        title="Anchor points" + (f" ({study} study)" if study else ""),
        columns=list(ANCHOR_NUMBERS.values()),
        rows=rows,
        description=[
            "The measured 'Anchors Pts' of Wu, Conneau et al. (2020), Table 1 (section 4.2): "
            "vocabulary types that both languages' training corpora use, and the share of each "
            "language's training tokens they cover (special tokens excluded), per vocabulary "
            "scheme. The paper prints 'all', '0' or 'extra' instead of numbers.",
        ],
        row_heading="Scheme",
        column_digits=digits,
    )


def cka_retrieval_table(frame: pd.DataFrame, study: str = "") -> ComparedTable:
    """``wu_cka_retrieval_pearson.csv``: Pearson r and its p-value per pair."""
    rows = [
        ComparedRow(
            str(record["pair"]),
            {
                "Pearson r": _number(record.get("pearson_r")),
                "p-value": _number(record.get("p_value")),
                "layers": _number(record.get("layers")),
            },
        )
        for record in frame.to_dict("records")
    ]
    return ComparedTable(
        title="CKA and sentence retrieval" + (f" ({study} study)" if study else ""),
        columns=["Pearson r", "p-value", "layers"],
        rows=rows,
        description=[
            "Wu, Conneau et al. (2020), section 5.2: Pearson correlation over layers between the "
            "monolingual models' linear CKA and their Tatoeba retrieval P@1 (mean of both "
            "directions). The paper reports 'over 0.9 Pearson correlation for all four languages "
            "pairs'. `n/c`: undefined (CKA or P@1 constant over layers).",
        ],
        row_heading="Pair",
        digits=3,
        column_digits={"p-value": 4, "layers": 0},
    )


def _number(value) -> float | None:
    value = pd.to_numeric(value, errors="coerce")
    return None if pd.isna(value) else float(value)


def write_md_tex(table: ComparedTable, md: str | Path, tex: str | Path) -> None:
    """The markdown and LaTeX forms of ``table`` (its csv is written by its stage)."""
    with atomic_open(md) as handle:
        handle.write(to_markdown(table))
    with atomic_open(tex) as handle:
        handle.write(to_latex(table))
