"""Table 1 layout and the CKA figure."""

import pandas as pd
import pytest

from xling.papers.wu2020 import TABLE1_ROWS, TABLE1_SCORES
from xling.report.figures import plot_cka_layers
from xling.report.table1 import NOT_COMPUTED, build_table1, describe, to_csv_frame, to_markdown

SCHEMES = {"joint": {"merges": 80000}, "per_language": {"merges": 40000}}
DEFAULT = {"domains": "wiki-wiki", "vocab": "joint", "sep_embeddings": False, "sep_layers": 0}


def test_rows_follow_the_paper_and_extra_variants_come_last():
    variants = {"default": DEFAULT, "mine": dict(DEFAULT, label="My variant")}
    table = build_table1(variants, SCHEMES, ["en-fr", "en-ru", "en-zh"], {})
    assert list(table["variant"])[:10] == list(TABLE1_ROWS)
    assert list(table["model"])[-1] == "My variant"


PAPER_LAYOUT = [
    "Default",
    "**Domain Similarity (§4.1)**",
    "Wiki-CC",
    "**Anchor Points (§4.2)**",
    "Default anchors",
    "No anchors",
    "Extra anchors",
    "**Parameter Sharing (§4.3)**",
    "Sep Emb",
    "Sep Emb + L1-3",
    "Sep Emb + L1-6",
    "Sep L1-3",
    "Sep L1-6",
]


def _first_cells(lines):
    return [line.split(" | ")[0].removeprefix("| ") for line in lines[2:]]


def test_both_tables_take_the_papers_rows_groups_and_labels():
    variants = {"default": DEFAULT, "mine": dict(DEFAULT, label="My variant")}
    markdown = to_markdown(build_table1(variants, SCHEMES, ["en-fr"], {}), ["en-fr"], "demo")
    ours, paper = markdown.split("## The paper's Table 1, for comparison")
    ours_table = [line for line in ours.splitlines() if line.startswith("|")]
    paper_table = [line for line in paper.splitlines() if line.startswith("|")]
    extra = ["**Variants added by this study**", "My variant"]
    assert _first_cells(ours_table) == [*PAPER_LAYOUT, *extra]
    assert _first_cells(paper_table) == PAPER_LAYOUT
    assert paper_table[0].startswith("| Model | Domain | BPE Merges | Anchors Pts | Share Param. |")
    assert paper_table[2 + PAPER_LAYOUT.index("Sep Emb + L1-3")].startswith(
        "| Sep Emb + L1-3 | - | 40k/40k | 0* | sep. emb + L1-3 | lang-specific | 69.2 |"
    )


def test_scores_in_percent_and_average_only_when_complete():
    scores = {("default", "en-fr", "ner"): 0.8, ("default", "en-ru", "ner"): 0.6}
    table = build_table1({"default": DEFAULT}, SCHEMES, ["en-fr", "en-ru", "en-zh"], scores)
    default = table.set_index("variant").loc["default"]
    assert default["ner_fr"] == pytest.approx(80.0)
    assert pd.isna(default["ner_zh"]) and pd.isna(default["ner_avg"])
    complete = dict(scores)
    complete[("default", "en-zh", "ner")] = 0.4
    table = build_table1({"default": DEFAULT}, SCHEMES, ["en-fr", "en-ru", "en-zh"], complete)
    assert table.set_index("variant").loc["default", "ner_avg"] == pytest.approx(60.0)


def test_markdown_marks_missing_cells_not_computed_and_csv_leaves_them_empty():
    scores = {("default", "en-fr", "ner"): 0.5}
    table = build_table1({"default": DEFAULT}, SCHEMES, ["en-fr"], scores)
    markdown = to_markdown(table, ["en-fr"], "demo")
    default_line = next(line for line in markdown.splitlines() if line.startswith("| Default |"))
    cells = [c.strip() for c in default_line.strip("|").split("|")]
    assert cells[6:8] == [NOT_COMPUTED, NOT_COMPUTED]  # XNLI fr, Δ
    assert cells[8:10] == ["50.0", "50.0"]  # NER fr, Δ
    csv = to_csv_frame(table).to_csv(index=False)
    assert NOT_COMPUTED not in csv
    # the paper's own numbers are printed for comparison
    assert f"{TABLE1_SCORES['sep_l1_6']['ner'][2]:.1f}" in markdown


def test_descriptors_follow_the_sharing_knobs():
    sep = {"domains": "wiki-cc", "vocab": "per_language", "sep_embeddings": True, "sep_layers": 3}
    assert describe(sep, SCHEMES) == (
        "Wiki-CC",
        "40k/40k",
        "0*",
        "sep. emb + L1-3",
        "lang-specific",
    )
    assert describe(DEFAULT, SCHEMES) == ("Wiki-Wiki", "80k", "all", "all", "shared")


def test_cka_figure_is_written(tmp_path):
    table = pd.DataFrame(
        [
            {"encoder": e, "layer": layer, "cka": c, "n_sentences": 10}
            for e, base in (("trained", 0.8), ("random", 0.3))
            for layer, c in enumerate([base, base - 0.1, base - 0.2])
        ]
    )
    out = tmp_path / "fig.png"
    plot_cka_layers({("en-fr", "default"): table}, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
