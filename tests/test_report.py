"""Table 1 with the paper beside us, Figure 3, the small tables and the CKA figure."""

import pandas as pd
import pytest

from xling.papers.wu2020 import (
    FIGURE3_COLUMNS,
    TABLE1_ROWS,
    TABLE1_SCORES,
    TABLE1_SUSPECT,
    WU_TASKS,
)
from xling.report.compare import NOT_COMPUTED, SUSPECT_MARK, to_frame, to_latex, to_markdown
from xling.report.figures import plot_cka_layers
from xling.report.table1 import build_table1, describe, score_column
from xling.report.tables import anchors_table, cka_retrieval_table
from xling.report.wu_figures import figure3

SCHEMES = {"joint": {"merges": 80000}, "per_language": {"merges": 40000}}
DEFAULT = {"domains": "wiki-wiki", "vocab": "joint", "sep_embeddings": False, "sep_layers": 0}
PAIRS = ["en-fr", "en-ru", "en-zh"]


def test_rows_follow_the_paper_and_extra_variants_come_last():
    variants = {"default": DEFAULT, "mine": dict(DEFAULT, label="My variant")}
    table = build_table1(variants, SCHEMES, PAIRS, {})
    assert [row.key for row in table.rows][:10] == list(TABLE1_ROWS)
    assert table.rows[-1].label == "My variant" and table.rows[-1].key == "mine"
    assert list(to_frame(table)["variant"])[-1] == "mine"


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


def _table_lines(markdown):
    return [line for line in markdown.splitlines() if line.startswith("|")]


def _cells(line):
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_markdown_takes_the_papers_rows_groups_labels_and_descriptors():
    variants = {"default": DEFAULT, "mine": dict(DEFAULT, label="My variant")}
    markdown = to_markdown(build_table1(variants, SCHEMES, ["en-fr"], {}, "demo"))
    lines = _table_lines(markdown)
    first = [_cells(line)[0] for line in lines[2:]]
    assert first == [*PAPER_LAYOUT, "**Variants added by this study**", "My variant"]
    assert lines[0].startswith("| Model | Domain | BPE Merges | Anchors Pts | Share Param. |")
    sep = next(line for line in lines if line.startswith("| Sep Emb + L1-3 |"))
    # a paper row this config does not build is described as the paper built it
    assert _cells(sep)[1:6] == ["Wiki-Wiki", "40k/40k", "0*", "sep. emb + L1-3", "lang-specific"]
    # its cells are not computed by this run, and the paper's number stands beside
    assert _cells(sep)[6] == f"{NOT_COMPUTED} (69.2)"


def test_cells_read_ours_then_paper_and_the_csv_keeps_them_apart():
    scores = {("default", "en-fr", "ner"): 0.8, ("default", "en-ru", "ner"): 0.6}
    table = build_table1({"default": DEFAULT}, SCHEMES, PAIRS, scores)
    frame = to_frame(table).set_index("variant")
    assert frame.loc["default", "NER fr"] == pytest.approx(80.0)
    assert frame.loc["default", "NER fr paper"] == pytest.approx(79.8)
    assert frame.loc["default", "NER fr diff"] == pytest.approx(0.2)
    assert pd.isna(frame.loc["default", "NER zh"]) and pd.isna(frame.loc["default", "NER Δ"])
    assert frame.loc["default", "NER Δ paper"] == pytest.approx(68.1)
    complete = dict(scores)
    complete[("default", "en-zh", "ner")] = 0.4
    frame = to_frame(build_table1({"default": DEFAULT}, SCHEMES, PAIRS, complete))
    assert frame.set_index("variant").loc["default", "NER Δ"] == pytest.approx(60.0)
    default = next(row for row in build_table1({"default": DEFAULT}, SCHEMES, PAIRS, complete).rows)
    assert default.ours[score_column("ner", "Δ")] == pytest.approx(60.0)


def test_cells_not_computed_read_nc_in_markdown_and_latex_and_are_empty_in_the_csv():
    scores = {("default", "en-fr", "ner"): 0.5}
    table = build_table1({"default": DEFAULT}, SCHEMES, ["en-fr"], scores)
    default = next(line for line in _table_lines(to_markdown(table)) if "| Default |" in line)
    cells = _cells(default)
    assert cells[6] == f"{NOT_COMPUTED} (73.6)"  # XNLI fr
    assert cells[10] == "50.0 (79.8)"  # NER fr
    assert cells[11] == f"{NOT_COMPUTED} (60.9)"  # NER ru: this study has no en-ru
    assert "n/c (79.8)" not in to_latex(table) and r"n/c (73.6)" in to_latex(table)
    csv = to_frame(table).to_csv(index=False)
    assert NOT_COMPUTED not in csv


def test_the_papers_copied_numbers_carry_the_dagger_and_a_note():
    # the reason for the mark: the paper's Default anchors row repeats Default's numbers
    for task in TABLE1_SUSPECT["default_anchors"]:
        assert TABLE1_SCORES["default_anchors"][task] == TABLE1_SCORES["default"][task]
    assert TABLE1_SCORES["default_anchors"]["xnli"] != TABLE1_SCORES["default"]["xnli"]
    table = build_table1(
        {"default_anchors": dict(DEFAULT, vocab="per_language")}, SCHEMES, PAIRS, {}
    )
    markdown = to_markdown(table)
    row = _cells(next(line for line in _table_lines(markdown) if "| Default anchors |" in line))
    assert row[6] == f"{NOT_COMPUTED} (74.0)"  # XNLI: not suspect
    assert row[10] == f"{NOT_COMPUTED} (79.8{SUSPECT_MARK})"  # NER fr
    assert row[-1] == f"{NOT_COMPUTED} (52.9{SUSPECT_MARK})"  # parsing Δ
    assert markdown.count(SUSPECT_MARK) == 8 + 1  # eight cells and the note
    assert r"$^\dagger$" in to_latex(table)
    default_row = _cells(next(line for line in _table_lines(markdown) if "| Default |" in line))
    assert SUSPECT_MARK not in "".join(default_row)


def test_the_paper_average_is_left_out_when_the_targets_are_not_the_papers():
    table = build_table1({"default": DEFAULT}, SCHEMES, [*PAIRS, "en-de"], {})
    frame = to_frame(table).set_index("variant")
    assert "NER de" in frame and pd.isna(frame.loc["default", "NER de paper"])
    assert pd.isna(frame.loc["default", "NER Δ paper"])
    assert frame.loc["default", "NER fr paper"] == pytest.approx(79.8)


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


def _paper_run():
    """Table 1 of a run that scored exactly the paper's numbers, on every row."""
    variants = {name: row.settings() for name, row in TABLE1_ROWS.items()}
    scores = {
        (name, pair, task): TABLE1_SCORES[name][task][i] / 100
        for name in TABLE1_ROWS
        for task in WU_TASKS
        for i, pair in enumerate(PAIRS)
    }
    schemes = dict(SCHEMES, per_language_prefixed={"merges": 40000}, codeswitch={"merges": 80000})
    return to_frame(build_table1(variants, schemes, PAIRS, scores))


def test_figure3_draws_three_columns_ours_beside_the_paper(tmp_path):
    table = _paper_run()
    table.loc[table["variant"] == "sep_l1_6", "NER ru"] = None  # one cell not computed
    png, pdf = tmp_path / "f3.png", tmp_path / "f3.pdf"
    drawn = figure3(table, [png, pdf])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert list(drawn["column"].unique()) == [score_column(t, g) for t, g in FIGURE3_COLUMNS]
    assert len(drawn) == 3 * len(table)
    first = drawn[drawn["row"] == "Default"].set_index("column")
    assert first.loc["XNLI fr", "ours"] == pytest.approx(73.6)
    assert first.loc["Parsing zh", "paper"] == pytest.approx(28.8)
    missing = drawn[(drawn["row"] == "Sep L1-6") & (drawn["column"] == "NER ru")]
    assert missing["ours"].isna().all() and missing["paper"].notna().all()
    # the paper's Default anchors row repeats Default's NER and parsing: those bars are marked
    marked = drawn[drawn["paper_suspect"]]
    assert set(marked["row"]) == {"Default anchors"}
    assert set(marked["column"]) == {"NER ru", "Parsing zh"}


def test_small_tables_in_markdown_and_latex():
    anchors = pd.DataFrame(
        [
            {"pair": "en-fr", "domains": "wiki-wiki", "scheme": "joint", "vocab_size": 2000,
             "src_types": 1500, "tgt_types": 1400, "shared_types": 900,
             "src_token_share": 0.5, "tgt_token_share": 0.25},
        ]
    )  # fmt: skip
    markdown = to_markdown(anchors_table(anchors, "demo"))
    assert "| joint | 2000 | 1500 | 1400 | 900 | 50.0 | 25.0 |" in markdown
    assert "**en-fr (wiki-wiki)**" in markdown
    pearson = pd.DataFrame(
        [{"pair": "en-fr", "pearson_r": 0.93, "p_value": 0.0003, "layers": 9},
         {"pair": "en-zh", "pearson_r": float("nan"), "p_value": float("nan"), "layers": 9}]
    )  # fmt: skip
    table = cka_retrieval_table(pearson)
    assert "| en-fr | 0.930 | 0.0003 | 9 |" in to_markdown(table)
    assert f"| en-zh | {NOT_COMPUTED} | {NOT_COMPUTED} | 9 |" in to_markdown(table)
    assert r"\toprule" in to_latex(table)


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


def test_the_caption_says_how_many_grid_points_each_score_averages():
    def caption(best_k):
        return " ".join(
            build_table1({"default": DEFAULT}, SCHEMES, PAIRS, {}, "", best_k).description
        )

    assert "the mean over the best two hyperparameter sets" in caption(None)  # the paper's
    assert "each the best hyperparameter set on English dev" in caption(dict.fromkeys(WU_TASKS, 1))
    mixed = caption({"xnli": 2, "ner": 1, "parsing": 1})
    assert "best k hyperparameter sets on English dev (XNLI 2, NER 1, Parsing 1)" in mixed
