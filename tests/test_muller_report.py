"""Muller et al. (2021): the paper's numbers, the tables and the figures, on hand-made csvs."""

import math
import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from xling.analysis.spearman import spearman
from xling.papers import muller2021 as paper
from xling.report import muller_figures, muller_scores, muller_tables
from xling.report.compare import NOT_COMPUTED, compact_cell, to_frame, to_markdown

REPO = Path(__file__).resolve().parents[1]

# --- the paper's numbers -----------------------------------------------------------------------


def test_seventeen_languages_and_three_sources():
    assert len(paper.LANGUAGES) == 17 and paper.SOURCES == ("en", "ru", "ar")
    assert paper.LANGUAGES["id"] == "Indonesian" and paper.LANGUAGES["sl"] == "Slovenian"
    order = "en ru ar zh cs fi fr id it ja de hi pl pt sl es tr"
    assert " ".join(paper.LANGUAGES) == order


def test_known_cells():
    assert paper.TABLE1["parsing"][("en", "en")]["1-2"] == -0.96
    assert paper.TABLE1["parsing"][("en", "X")]["1-2"] == -15.77
    assert paper.TABLE1["ner"][("ar", "X")]["11-12"] == 0.67
    assert paper.TABLE2["parsing"][0].values["ref"] == 90.40
    # the text's "two first layers": -0.91 (En - En Lit.), -5.82 (En - Fr Tran.), printed as Δ0-1
    assert paper.TABLE2["parsing"][1].values["1-2"] == -0.91
    assert paper.TABLE2["parsing"][4].values["1-2"] == -5.82
    assert paper.TABLE4["pos"] == {"finetuned": 0.74, "pretrained": 0.82}
    assert paper.TABLE5["parsing"][("fr", "test")]["1-2"] == 55.31
    assert paper.TABLE5["ner"][("ar", "test")]["9-12"] == 41.23
    assert paper.TABLES_6_8["parsing"][("en", "fr")]["1-2"] == -21.30
    assert paper.TABLES_6_8["pos"][("ru", "it")]["7-8"] == -8.21
    assert paper.TABLES_6_8["ner"][("ar", "zh")]["1-2"] == -25.72
    assert paper.TABLES_6_8["ner"][("en", "fr")]["1-2"] is None  # blank in the paper
    assert paper.FIGURE_FACTS["figure1_peak_cka"] == {"parsing": 78.1, "pos": 78.1, "ner": 78.2}


@pytest.mark.parametrize("task", paper.TASKS)
def test_appendix_tables_agree_with_table1_where_the_paper_says_so(task):
    rows = paper.TABLES_6_8[task]
    for source in paper.SOURCES:
        assert rows[(source, "X")] == paper.TABLE1[task][(source, "X")]
        targets = [t for s, t in rows if s == source and t not in (source, "X")]
        assert sorted(targets) == sorted(set(paper.LANGUAGES) - {source})  # 16 targets
        if (task, source) != ("ner", "en"):  # Table 8 prints its own EN-EN row
            assert rows[(source, source)] == paper.TABLE1[task][(source, source)]
    assert all(list(row) == ["ref", *paper.PAIR_GROUPS] for row in rows.values())


def test_table2_and_table5_shapes():
    assert [len(paper.TABLE2[task]) for task in paper.TASKS] == [6, 6, 3]
    for rows in paper.TABLE2.values():
        assert all(list(row.values) == ["ref", *paper.DOMAIN_GROUPS] for row in rows)
        assert {row.section for row in rows} == {"domain", "cross"}
    for rows in paper.TABLE5.values():
        assert list(rows) == list(paper.TABLE5_ROWS)
        assert all(len(row) == 13 for row in rows.values())


# --- hand-made inputs --------------------------------------------------------------------------


def _score(task, group, seed, evaluation, score, split="test", experiment="transfer", lang=None):
    return {
        "experiment": experiment,
        "task": task,
        "source": "en",
        "group": group,
        "seed": seed,
        "evaluation": evaluation,
        "lang": lang or evaluation,
        "split": split,
        "score": score,
        "hp_id": "bs16_lr5e-05",
    }


def _seeds(task, group, evaluation, values, split="test"):
    """One row per seed (1, 2, ...) of one run and evaluation set."""
    return [_score(task, group, s, evaluation, v, split) for s, v in enumerate(values, start=1)]


def _scores() -> pd.DataFrame:
    rows = []
    per_seed = {  # (group, evaluation) -> score of seed 1, seed 2
        ("ref", "en"): (0.90, 0.80),
        ("ref", "fr"): (0.70, 0.60),
        ("ref", "de"): (0.50, 0.40),
        ("ref", "qq"): (0.30, 0.20),  # a language the paper does not have
        ("1-2", "en"): (0.88, 0.80),
        ("1-2", "fr"): (0.50, 0.40),
        ("1-2", "de"): (0.45, 0.35),
        ("1-2", "qq"): (0.30, 0.20),
    }
    for (group, evaluation), values in per_seed.items():
        rows += _seeds("parsing", group, evaluation, values)
    rows += _seeds("parsing", "ref", "en", (0.91, 0.89), split="dev")
    rows += [_score("parsing", "3-4", 1, "en", 0.86)]  # one seed, English only
    sets = (("en", "en"), ("en_cc", "en"), ("fr", "fr"))  # (evaluation, lang) of `domain`
    for group, values in (("ref", (0.9, 0.7, 0.5)), ("1-2", (0.88, 0.69, 0.4))):
        for (evaluation, lang), value in zip(sets, values, strict=True):
            rows.append(_score("parsing", group, 1, evaluation, value, "test", "domain", lang))
    return pd.DataFrame(rows)


def _row(table, label, group=None):
    found = [r for r in table.rows if r.label == label and (group is None or r.group == group)]
    assert len(found) == 1, [r.label for r in table.rows]
    return found[0]


# --- Table 1 and Tables 6-8 --------------------------------------------------------------------


def test_table1_delta_and_src_x_are_the_hand_computed_values():
    table = muller_tables.build_table1(_scores(), study="demo")
    same = _row(table, "EN - EN", "Parsing (LAS)")
    assert same.ours["Ref"] == pytest.approx(85.0)
    assert same.spread["Ref"] == pytest.approx(np.std([90, 80], ddof=1))
    assert same.ours["Δ1-2"] == pytest.approx(-1.0)
    assert same.spread["Δ1-2"] == pytest.approx(np.std([88, 80], ddof=1))
    assert same.ours["Δ3-4"] == pytest.approx(1.0) and same.spread["Δ3-4"] is None  # one seed
    cross = _row(table, "EN - X", "Parsing (LAS)")
    # targets fr, de, qq: Ref means 65, 45, 25; Δ1-2 -20, -5, 0
    assert cross.ours["Ref"] == pytest.approx(45.0)
    assert cross.ours["Δ1-2"] == pytest.approx(-25 / 3)
    assert cross.spread["Ref"] == pytest.approx(np.std([50, 40], ddof=1))  # per-seed means
    assert cross.ours["Δ3-4"] is None  # 3-4 has no target
    assert same.paper["Ref"] == 88.98 and cross.paper["Δ1-2"] == -15.77
    assert compact_cell(table, same, "Δ5-6") == "n/c (-0.93)"  # group not run
    assert compact_cell(table, same, "Ref") == "85.00 ± 7.07 (88.98)"
    assert "(study: demo)" in table.title


def test_table1_restricts_the_mean_to_the_study_languages_and_never_crashes_on_gaps():
    table = muller_tables.build_table1(_scores(), languages=["fr", "de"])
    cross = _row(table, "EN - X", "Parsing (LAS)")
    assert cross.ours["Δ1-2"] == pytest.approx(-12.5)
    assert cross.spread["Δ1-2"] == pytest.approx(np.std([47.5, 37.5], ddof=1))
    russian = _row(table, "RU - RU", "Parsing (LAS)")  # source not run
    assert compact_cell(table, russian, "Ref") == f"{NOT_COMPUTED} (85.15)"
    ner = _row(table, "EN - X", "NER (F1)")  # task not run
    assert all(value is None for value in ner.ours.values())
    empty = muller_tables.build_table1(_scores().iloc[0:0])
    assert all(value is None for row in empty.rows for value in row.ours.values())


def test_appendix_table_rows_per_pair_with_extra_languages_ours_only():
    table = muller_tables.build_appendix_table(_scores(), "parsing")
    assert table.title.startswith("Table 6")
    french = _row(table, "EN - French")
    assert french.ours["Δ1-2"] == pytest.approx(-20.0) and french.paper["Δ1-2"] == -21.30
    extra = _row(table, "EN - qq")
    assert extra.ours["Ref"] == pytest.approx(25.0) and extra.paper == {}
    labels = [r.label for r in table.rows if r.group == "Source: English"]
    assert labels[0] == "EN - English" and labels[-2:] == ["EN - qq", "EN - X (mean)"]
    turkish = _row(table, "EN - Turkish")
    assert compact_cell(table, turkish, "Ref") == f"{NOT_COMPUTED} (34.03)"
    ner = muller_tables.build_appendix_table(_scores(), "ner")
    assert compact_cell(ner, _row(ner, "EN - Japanese"), "Δ3-4") == f"{NOT_COMPUTED} (-5.09†)"
    assert any("EN - French, Δ1-2: blank" in note for note in ner.notes)


# --- Tables 2, 4, 5 ----------------------------------------------------------------------------


def test_table2_matches_paper_rows_by_name_or_alias_and_adds_ours():
    table = muller_tables.build_table2(_scores())
    english = _row(table, "En - En", "Parsing: domain analyses")
    assert english.ours["Ref"] == pytest.approx(90.0) and english.paper["Ref"] == 90.40
    assert english.ours["Δ1-2"] == pytest.approx(-2.0)
    extra = _row(table, "En - En (cc domain)", "Parsing: domain analyses")  # set en_cc
    assert extra.ours["Δ1-2"] == pytest.approx(-1.0) and extra.paper == {}
    french = _row(table, "En - Fr Wiki", "Parsing: cross-language")  # our `fr` by alias
    assert french.ours["Δ1-2"] == pytest.approx(-10.0) and french.paper["Δ1-2"] == -7.86
    assert _row(table, "En - Fr Tran.", "Parsing: cross-language").ours["Ref"] is None
    assert any("fr_wiki <- our set fr" in note for note in table.notes)
    plain = muller_tables.build_table2(_scores(), aliases={})
    assert _row(plain, "En - Fr", "Parsing: cross-language").ours["Ref"] == pytest.approx(50.0)


def test_table2_labels_sets_of_ours_alone_by_language_and_domain():
    sets = (("en_cc", "en"), ("news2", "en"), ("de", "de"), ("de_web", "de"))
    rows = [_score("pos", "ref", 1, "en", 0.9, "test", "domain", "en")]
    for evaluation, lang in sets:  # the config's name and lang of each evaluation set
        rows.append(_score("pos", "ref", 1, evaluation, 0.5, "test", "domain", lang))
    table = muller_tables.build_table2(pd.DataFrame(rows))
    assert _row(table, "En - En (cc domain)", "POS: domain analyses").ours["Ref"] == 50.0
    assert _row(table, "En - En (news2)", "POS: domain analyses").paper == {}
    assert _row(table, "En - De", "POS: cross-language").ours["Ref"] == 50.0
    assert _row(table, "En - De (web domain)", "POS: cross-language").paper == {}
    named = [note for note in table.notes if note.startswith("Rows of ours alone")]
    assert len(named) == 1 and "En - En (cc domain): set en_cc" in named[0]


def test_table5_absolute_scores_with_the_dev_row():
    table = muller_tables.build_table5(_scores())
    assert list(table.columns[:4]) == ["Ref", "All", "1", "2"]
    dev = _row(table, "English dev", "Parsing (LAS)")
    assert dev.ours["Ref"] == pytest.approx(90.0) and dev.paper["Ref"] == 88.52
    assert dev.spread["Ref"] == pytest.approx(np.std([91, 89], ddof=1))
    german = _row(table, "German", "Parsing (LAS)")
    assert german.ours["1-2"] == pytest.approx(40.0) and german.paper["1-2"] == 57.08
    assert german.ours["All"] is None and german.paper["All"] == 4.73
    assert _row(table, "qq", "Parsing (LAS)").paper == {}


def _correlation_inputs(targets=("fr", "de", "ru", "zh")):
    gaps = {"fr": (0.7, 0.6), "de": (0.5, 0.5), "ru": (0.4, 0.3), "zh": (0.2, 0.1)}
    rows = _seeds("ner", "ref", "en", (0.9, 0.8))
    for target in targets:
        rows += _seeds("ner", "ref", target, gaps[target])
    similarity = []
    cka = {"fr": (0.6, 0.8), "de": (0.9, 0.7), "ru": (0.5, 0.6), "zh": (0.4, 0.9)}
    for target in targets:
        for layer in (0, 1):
            similarity.append(
                {"model": "pretrained", "task": "", "group": "ref", "seed": 0, "source": "en",
                 "target": target, "layer": layer, "cka": cka[target][layer] / 2,
                 "cka_debiased": None}
            )  # fmt: skip
            similarity.append(
                {"model": "finetuned", "task": "ner", "group": "ref", "seed": 1, "source": "en",
                 "target": target, "layer": layer, "cka": cka[target][layer],
                 "cka_debiased": None}
            )  # fmt: skip
    return pd.DataFrame(rows), pd.DataFrame(similarity)


def test_table4_is_spearman_of_gap_and_layer_averaged_similarity():
    scores, similarity = _correlation_inputs()
    table = muller_tables.build_table4(scores, similarity)
    ner = _row(table, "NER")
    gap = [0.85 - 0.65, 0.85 - 0.5, 0.85 - 0.35, 0.85 - 0.15]
    averaged = [0.7, 0.8, 0.55, 0.65]
    expected = spearmanr(gap, averaged)
    assert ner.ours["Fine-tuned"] == pytest.approx(expected.statistic)
    # four languages: the exact p-value of xling.analysis.spearman, not scipy's t approximation
    assert ner.ours["p fine-tuned"] == pytest.approx(spearman(gap, averaged)[1])
    assert ner.ours["p fine-tuned"] != pytest.approx(expected.pvalue)
    assert ner.ours["Pretrained"] == pytest.approx(expected.statistic)  # halved: same ranks
    assert ner.paper == {"Fine-tuned": 0.47, "Pretrained": 0.43}
    assert "n = 4" in " ".join(table.description)
    assert compact_cell(table, _row(table, "Parsing"), "Fine-tuned") == f"{NOT_COMPUTED} (0.760)"
    few = muller_tables.build_table4(*_correlation_inputs(("fr", "de")))
    assert _row(few, "NER").ours["Fine-tuned"] is None  # 2 languages: n/c, not a crash


def test_table4_has_a_robustness_row_per_other_measure():
    scores, similarity = _correlation_inputs()
    similarity["cka_debiased"] = similarity["cka"] * 2  # the same order: the same rho
    # length-controlled: the order reversed, so its rho has the other sign
    similarity["cka_length_controlled"] = 1 - similarity["cka"]
    table = muller_tables.build_table4(scores, similarity)
    main = _row(table, "NER").ours["Fine-tuned"]
    assert _row(table, "NER, debiased CKA").ours["Fine-tuned"] == pytest.approx(main)
    assert _row(table, "NER, length-controlled").ours["Fine-tuned"] == pytest.approx(-main)
    assert _row(table, "NER, debiased CKA").paper == {}
    assert "robustness rows" in " ".join(table.description)
    plain = muller_tables.build_table4(*_correlation_inputs())  # debiased all empty: no row
    assert [row.label for row in plain.rows] == ["Parsing", "POS", "NER"]


def test_table4_diff_compares_our_signed_rho_with_the_paper_negated():
    table = muller_tables.build_table4(*_correlation_inputs())
    rho = _row(table, "NER").ours["Fine-tuned"]
    assert rho < 0  # a larger similarity, a smaller gap
    ner = to_frame(table).set_index("row").loc["NER"]
    assert ner["Fine-tuned paper"] == 0.47  # printed as the paper prints it
    assert ner["Fine-tuned diff"] == pytest.approx(rho + 0.47, abs=1e-5)  # not rho - 0.47
    assert ner["Pretrained diff"] == pytest.approx(ner["Pretrained"] + 0.43, abs=1e-5)
    assert pd.isna(ner["p fine-tuned diff"])  # no p-value in the paper
    assert any("diff = ours + paper" in note for note in table.notes)


# --- files -------------------------------------------------------------------------------------


def test_csv_reading_keeps_group_names_as_text(tmp_path):
    _scores().to_csv(tmp_path / "scores.csv", index=False)
    scores = muller_scores.read_scores(tmp_path / "scores.csv")
    assert {"ref", "1-2", "3-4"} <= set(scores["group"])
    frame = pd.DataFrame([_score("parsing", 1, 1, "en", 0.5)])  # a single layer written as 1
    assert muller_scores.prepare_scores(frame)["group"].iloc[0] == "1"
    _, similarity = _correlation_inputs()
    similarity.to_csv(tmp_path / "similarity.csv", index=False)
    back = muller_scores.read_similarity(tmp_path / "similarity.csv")
    assert back["task"].iloc[0] == "" and back["cka_debiased"].isna().all()
    with pytest.raises(ValueError, match=r"missing column.*score"):
        muller_scores.prepare_scores(frame.drop(columns=["score"]))


def _outputs(tmp_path, kinds, names):
    return {f"{n}_{k}": str(tmp_path / f"{n}.{k}") for n in names for k in kinds}


def _figure_similarity(targets=("fr", "ru", "zh")):
    rows = []
    for target in targets:
        for layer in range(4):
            base = {"source": "en", "target": target, "layer": layer, "cka_debiased": None}
            pretrained = {"model": "pretrained", "task": "", "group": "ref", "seed": 0}
            rows.append(base | pretrained | {"cka": 0.5 + 0.05 * layer})
            for task in paper.TASKS:
                for group, shift in (("ref", 0.1), ("1-2", -0.2)):
                    for seed in (1, 2):
                        model = {"model": "finetuned", "task": task, "group": group, "seed": seed}
                        rows.append(base | model | {"cka": 0.5 + shift + 0.01 * seed})
    return pd.DataFrame(rows)


def test_every_table_is_written_in_three_forms(tmp_path):
    scores, _ = _correlation_inputs()
    scores = pd.concat([_scores(), scores], ignore_index=True)
    outputs = _outputs(tmp_path, ("csv", "md", "tex"), muller_tables.TABLE_NAMES)
    settings = muller_tables.TableSettings(study="demo")
    written = muller_tables.write_tables(scores, _figure_similarity(), outputs, settings)
    assert written == list(muller_tables.TABLE_NAMES)
    for path in outputs.values():
        assert Path(path).stat().st_size > 0
    table1 = pd.read_csv(tmp_path / "table1.csv")
    assert {"Ref", "Ref std", "Ref paper", "Ref diff"} <= set(table1.columns)
    assert "85.00 ± 7.07 (88.98)" in (tmp_path / "table1.md").read_text()
    assert r"\toprule" in (tmp_path / "table6.tex").read_text()


def test_outputs_name_every_file_of_a_table_or_figure_or_none():
    kinds = ("csv", "md", "tex")
    outputs = {"table1_csv": "1.csv", "table1_md": "1.md", "table1_tex": "1.tex", "table4_md": "4"}
    assert muller_scores.named_outputs(outputs, muller_tables.TABLE_NAMES, kinds) == {
        "table1": ("1.csv", "1.md", "1.tex")  # no table4_csv: Table 4 is not written
    }
    outputs["table2_csv"] = "2.csv"
    with pytest.raises(ValueError, match="table2_csv but not table2_md, table2_tex"):
        muller_scores.named_outputs(outputs, muller_tables.TABLE_NAMES, kinds)


@pytest.fixture(autouse=True)
def _small_pngs(monkeypatch):
    monkeypatch.setattr(muller_figures, "DPI", 40)  # the tests check files, not looks


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    scores, _ = _correlation_inputs()
    outputs = _outputs(out, ("png", "pdf", "csv"), muller_figures.FIGURE_NAMES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(muller_figures, "DPI", 40)
        drawn = muller_figures.write_figures(scores, _figure_similarity(), outputs)
    return out, drawn


def test_every_figure_is_written_as_png_pdf_and_csv(figures):
    out, drawn = figures
    assert drawn == list(muller_figures.FIGURE_NAMES)
    for name in drawn:
        assert (out / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
        assert (out / f"{name}.pdf").read_bytes()[:4] == b"%PDF"
        assert len(pd.read_csv(out / f"{name}.csv")) > 0


def test_figure_numbers_are_the_seed_means(figures):
    out, _ = figures
    figure2 = pd.read_csv(out / "figure2.csv")
    assert set(figure2["target"]) == {"ru"} and set(figure2["task"]) == {"ner"}
    ref = figure2[figure2["curve"] == "ref"]
    assert ref["cka"].to_numpy() == pytest.approx([0.615] * 4)  # 0.6 + mean(0.01, 0.02)
    assert set(figure2["curve"]) == {"ref", "random-init 1-2"}
    figure3 = pd.read_csv(out / "figure3.csv")
    assert set(figure3["kind"]) == {"finetuned", "pretrained"}
    assert set(figure3["layer"]) == {0, 1, 2, 3}
    figure8 = pd.read_csv(out / "figure8.csv")
    assert set(figure8["task"]) == {"ner"} and set(figure8["group"]) == {"ref", "1-2"}


@pytest.fixture
def kept_figures(monkeypatch):
    """The figures drawn, kept past ``_save`` (which closes them) to read their Axes."""
    kept = []
    save = muller_figures._save

    def keep(fig, *args):
        kept.append(fig)
        save(fig, *args)

    monkeypatch.setattr(muller_figures, "_save", keep)
    return kept


def test_figure3_gives_each_task_its_own_line_style_and_marker(tmp_path, kept_figures):
    scores, similarity = _correlation_inputs()
    # POS's scores and fine-tuned similarity are NER's: the same ρ at every layer in both panels
    scores = pd.concat([scores, scores.assign(task="pos")], ignore_index=True)
    finetuned = similarity[similarity["model"] == "finetuned"]
    similarity = pd.concat([similarity, finetuned.assign(task="pos")], ignore_index=True)
    files = muller_figures.FigureFiles(*(tmp_path / f"f3.{kind}" for kind in ("png", "pdf", "csv")))
    muller_figures.figure3(scores, similarity, files)
    for ax in kept_figures[0].axes:
        lines = {line.get_label(): line for line in ax.get_lines()}  # and the axhline's "_child"
        assert {"POS", "NER"} == {label for label in lines if not label.startswith("_")}
        pos, ner = lines["POS"], lines["NER"]
        assert list(pos.get_ydata()) == list(ner.get_ydata())  # one on the other
        assert pos.get_linestyle() != ner.get_linestyle()
        assert pos.get_marker() != ner.get_marker()
        assert pos.get_color() != ner.get_color()


def _en_ru_similarity(layers=range(7)):
    rows = []
    for layer in layers:
        base = {"source": "en", "target": "ru", "layer": layer, "cka_debiased": None}
        rows.append(base | {"model": "pretrained", "task": "", "group": "ref", "seed": 0})
        for task in paper.TASKS:
            rows.append(base | {"model": "finetuned", "task": task, "group": "ref", "seed": 1})
    return pd.DataFrame(rows).assign(cka=0.5)


def test_figure1_marks_the_papers_three_peaks_once_with_each_number(tmp_path, kept_figures):
    files = muller_figures.FigureFiles(*(tmp_path / f"f1.{kind}" for kind in ("png", "pdf", "csv")))
    muller_figures.figure1(_en_ru_similarity(), files)
    ax = kept_figures[0].axes[0]
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    peaks = [label for label in labels if label.startswith("paper")]
    assert peaks == ["paper peak (x100): Parsing 78.1, POS 78.1, NER 78.2"]
    assert [text.get_text() for text in ax.texts] == ["paper: 78.1-78.2 at layer 5"]
    kept_figures.clear()
    muller_figures.figure1(_en_ru_similarity(range(5)), files)  # no layer 5: no paper peak
    labels = [text.get_text() for text in kept_figures[0].axes[0].get_legend().get_texts()]
    assert not [label for label in labels if label.startswith("paper")]


def test_figures_fall_back_to_the_first_target_present(tmp_path):
    similarity = _figure_similarity(targets=("fr", "de"))
    means = muller_figures.mean_similarity(similarity)
    source, target, note = muller_figures.choose_pair(means, "en", "ru")
    assert (source, target) == ("en", "fr") and "en-ru not computed" in note
    files = muller_figures.FigureFiles(
        tmp_path / "f1.png", tmp_path / "f1.pdf", tmp_path / "f1.csv"
    )
    data = muller_figures.figure1(similarity, files)
    assert set(data["target"]) == {"fr"}
    files = muller_figures.FigureFiles(
        tmp_path / "f2.png", tmp_path / "f2.pdf", tmp_path / "f2.csv"
    )
    nothing = muller_figures.figure2(similarity.iloc[0:0], files)
    assert nothing.empty and (tmp_path / "f2.pdf").stat().st_size > 0


# --- the adapters ------------------------------------------------------------------------------


class _Smk:
    def __init__(self, inputs, outputs, params):
        from snakemake.iocontainers import Namedlist

        self.input = Namedlist(fromdict=inputs)
        self.output = Namedlist(fromdict=outputs)
        self.params = Namedlist(fromdict=params)
        self.log = Namedlist()
        self.resources = Namedlist()  # no GPUs asked (read by _bootstrap.run)


@pytest.mark.parametrize(
    ("script", "kinds", "names", "params"),
    [
        ("muller_tables.py", ("csv", "md", "tex"), ("table1", "table4"), {"study": "demo"}),
        ("muller_figures.py", ("png", "pdf", "csv"), ("figure2",), {"figure2_group": "1-2"}),
    ],
)
def test_adapters_read_the_named_inputs_and_write_the_named_outputs(
    tmp_path, monkeypatch, script, kinds, names, params
):
    monkeypatch.syspath_prepend(str(REPO / "workflow" / "scripts"))  # for `import _bootstrap`
    scores, _ = _correlation_inputs()
    scores.to_csv(tmp_path / "scores.csv", index=False)
    _figure_similarity().to_csv(tmp_path / "similarity.csv", index=False)
    inputs = {name: str(tmp_path / f"{name}.csv") for name in ("scores", "similarity")}
    outputs = _outputs(tmp_path, kinds, names)
    smk = _Smk(inputs, outputs, params)
    runpy.run_path(str(REPO / "workflow" / "scripts" / script), {"snakemake": smk})
    for path in outputs.values():
        assert Path(path).stat().st_size > 0
    if script == "muller_tables.py":
        assert "(study: demo)" in (tmp_path / "table4.md").read_text()
        assert "NER" in to_markdown(muller_tables.build_table4(scores, _figure_similarity()))
    else:
        assert not math.isnan(pd.read_csv(tmp_path / "figure2.csv")["cka"].iloc[0])
