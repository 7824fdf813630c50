"""The ours-beside-the-paper table writer (xling.report.compare)."""

import pandas as pd
import pytest

from xling.report.compare import (
    NOT_COMPUTED,
    ComparedRow,
    ComparedTable,
    compact_cell,
    to_frame,
    to_latex,
    to_markdown,
    write_compared,
)


def _table():
    rows = [
        ComparedRow("Default", {"NER": 70.31, "LAS": None}, {"NER": 69.2, "LAS": 72.1}),
        ComparedRow(
            "Sep Emb",
            {"NER": 60.0, "LAS": 50.0},
            {"NER": 62.0},
            spread={"NER": 1.26},
            group="Sharing",
            suspect=frozenset({"NER"}),
        ),
    ]
    return ComparedTable("Table X", ["NER", "LAS"], rows, notes=["† copied in the paper"])


def test_cells_say_ours_then_paper_and_never_invent_a_number():
    table = _table()
    default, sep = table.rows
    assert compact_cell(table, default, "NER") == "70.3 (69.2)"
    assert compact_cell(table, default, "LAS") == f"{NOT_COMPUTED} (72.1)"
    assert compact_cell(table, sep, "NER") == "60.0 ± 1.3 (62.0†)"
    assert compact_cell(table, sep, "LAS") == "50.0"


def test_csv_has_separate_columns_and_empty_cells_where_missing(tmp_path):
    table = _table()
    frame = to_frame(table)
    assert list(frame.columns[:6]) == ["group", "row", "NER", "NER std", "NER paper", "NER diff"]
    assert abs(frame.loc[0, "NER diff"] - 1.11) < 1e-9
    assert pd.isna(frame.loc[0, "LAS"]) and pd.isna(frame.loc[0, "LAS diff"])
    assert frame.loc[0, "LAS paper"] == 72.1
    write_compared(table, tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "t.tex")
    back = pd.read_csv(tmp_path / "t.csv")
    assert back.shape == frame.shape


def test_markdown_and_latex_carry_groups_and_notes():
    table = _table()
    md = to_markdown(table)
    assert "| **Sharing** |" in md and "† copied in the paper" in md
    tex = to_latex(table)
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\multicolumn{3}{l}" in tex
    assert r"$\pm$" in tex and r"$^\dagger$" in tex
    assert tex.count(r"\\") == 4  # header, two rows, the group caption


def test_text_columns_come_before_the_numbers_and_the_key_only_in_the_csv():
    rows = [
        ComparedRow(
            "Default", {"NER": 70.0}, {"NER": 69.2}, text={"Domain": "Wiki"}, key="default"
        ),
        ComparedRow("Other", {"NER": 2000.0}, text={"Domain": "n/c"}, key="other"),
    ]
    table = ComparedTable(
        "T", ["NER"], rows, text_columns=["Domain"], key_heading="variant",
        column_digits={"NER": 0},
    )  # fmt: skip
    frame = to_frame(table)
    assert list(frame.columns) == [
        "group",
        "row",
        "variant",
        "Domain",
        "NER",
        "NER paper",
        "NER diff",
    ]
    assert list(frame["variant"]) == ["default", "other"]
    assert pd.isna(frame.loc[1, "Domain"])  # n/c never reaches the csv
    md = to_markdown(table)
    assert "| Default | Wiki | 70 (69) |" in md and "| Other | n/c | 2000 |" in md
    assert "variant" not in md
    assert r"\begin{tabular}{llr}" in to_latex(table)


def test_a_table_without_paper_numbers_does_not_promise_them():
    table = ComparedTable("T", ["NER"], [ComparedRow("Default", {"NER": 70.0})])
    assert "ours (paper)" not in to_markdown(table) and "ours (paper)" not in to_latex(table)
    assert "ours (paper)" in to_markdown(_table())


def test_a_negative_paper_sign_compares_with_the_paper_number_negated():
    # Muller Table 4: the paper prints 0.76 for a correlation its claim makes negative
    row = ComparedRow("Parsing", {"rho": -0.8, "p": 0.3}, {"rho": 0.76, "p": 0.2})
    table = ComparedTable("T", ["rho", "p"], [row], digits=3, paper_sign={"rho": -1})
    assert table.difference(row, "rho") == pytest.approx(-0.04)  # not -1.56
    assert table.difference(row, "p") == pytest.approx(0.1)  # other columns: ours minus paper
    frame = to_frame(table)
    assert frame.loc[0, "rho paper"] == 0.76  # the paper's number as printed
    assert frame.loc[0, "rho diff"] == pytest.approx(-0.04)
    assert compact_cell(table, row, "rho") == "-0.800 (0.760)"
