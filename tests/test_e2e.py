"""The reduced demo (one pair) through Snakemake, from the toy world to Table 1 and the figure."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.background import BackgroundRun
from xling.contracts.items import parse_items_string, read_test_items
from xling.finetune.metrics import ratio

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.e2e


RUN_TIMEOUT = 1500  # seconds from the start; the slice takes about four minutes on two cores


def start_demo_run(workdir: Path) -> BackgroundRun:
    """Start the reduced demo in ``workdir`` and return at once.

    tests/conftest.py starts it when the session starts, wherever a collected test needs
    ``demo_run``: it then runs on the core that the one-threaded unit tests leave idle."""
    snakemake = Path(sys.executable).with_name("snakemake")
    command = [
        str(snakemake), "--cores", "2", "--directory", str(workdir),
        "--snakefile", str(REPO / "Snakefile"),
        "--configfile", str(REPO / "config/demo.yaml"), str(REPO / "tests/config/e2e.yaml"),
        "--", "all",
    ]  # fmt: skip
    return BackgroundRun.start(command, workdir, RUN_TIMEOUT)


@pytest.fixture(scope="module")
def demo_run(reduced_demo_in_background):
    reduced_demo_in_background.wait()
    return reduced_demo_in_background.workdir / "results" / "demo"


def test_table1_fills_the_cells_this_slice_computes(demo_run):
    table = pd.read_csv(demo_run / "tables" / "table1.csv").set_index("variant")
    ner = table.loc["default", "NER fr"]
    assert 0 < ner <= 100
    assert table.loc["default", "NER fr paper"] == pytest.approx(79.8)
    assert table.loc["default", "NER fr diff"] == pytest.approx(ner - 79.8, abs=0.01)
    # tasks and targets this slice does not run stay empty, never a number
    assert pd.isna(table.loc["default", "XNLI fr"]) and pd.isna(table.loc["default", "Parsing fr"])
    assert pd.isna(table.loc["default", "NER ru"]) and pd.isna(table.loc["default", "NER Δ"])
    ours = [c for c in table.columns if c.startswith("NER ") and c.count(" ") == 1]
    assert table.drop(index="default")[ours].isna().all().all()
    markdown = (demo_run / "tables" / "table1.md").read_text()
    assert "| Default |" in markdown and "n/c (60.9)" in markdown
    assert (demo_run / "tables" / "table1.tex").read_text().startswith(r"\begin{table}")
    # The same cell on the bootstrap resamples of its test set, rescored from the run's counts.
    resamples = pd.read_csv(demo_run / "tables" / "table1_resamples.csv")
    assert list(resamples.columns) == ["replicate", "variant", "NER fr"]
    assert len(resamples) == 200 and resamples["replicate"].nunique() == 200
    assert abs(resamples["NER fr"].mean() - ner) < 3 * resamples["NER fr"].std() / 200**0.5 + 0.5
    assert 0 < resamples["NER fr"].std() < 10
    runs = sorted((demo_run / "finetune/en-fr/default/ner").glob("*/test_items.json"))
    assert len(runs) == 2  # the best two grid points, both resampled in the cell
    for run in runs:  # a count pair per sentence of the test set
        assert len(read_test_items(run)["fr"]) == 150


def test_figure3_claims_and_the_html_report(demo_run):
    for suffix, magic in (("png", b"\x89PNG"), ("pdf", b"%PDF")):
        assert (demo_run / f"figures/wu_figure3.{suffix}").read_bytes()[:4] == magic
    drawn = pd.read_csv(demo_run / "figures/wu_figure3.csv")  # the numbers behind the bars
    table1 = pd.read_csv(demo_run / "tables/table1.csv")
    assert list(drawn.columns) == ["row", "column", "ours", "paper", "paper_suspect"]
    assert len(drawn) == 3 * len(table1) and drawn["paper"].notna().all()  # three columns a row
    document = json.loads((demo_run / "report/claims.json").read_text())
    verdicts = {claim["id"]: claim["verdict"] for claim in document["claims"]}
    # one variant and one pair: no ablation to compare, section 5 of one pair, no Muller et al.
    assert verdicts["wu-4.1-domain"] == "not computed"
    assert verdicts["muller-4.3-spearman"] == "not computed"
    assert verdicts["wu-5.2-similarity-order"] in ("supported", "not supported")
    workdir = demo_run.parents[1]
    html = workdir / "results/demo/report.html"
    command = [
        str(Path(sys.executable).with_name("snakemake")), "--report", str(html),
        "--directory", str(workdir), "--snakefile", str(REPO / "Snakefile"),
        "--configfile", str(REPO / "config/demo.yaml"), str(REPO / "tests/config/e2e.yaml"),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    text = html.read_text(encoding="utf-8")
    for caption in ("Table 1 of Wu", "Figure 3 of Wu", "claims, checked against this run"):
        assert caption in text
    assert "Muller et al. (2021) Table 1" in text


def test_the_run_summary_reads_the_slice(demo_run):
    from xling.report.run_summary import NOT_COMPUTED, summarize

    summary = summarize(demo_run)
    # the slice computes section 5 for en-fr and Table 1's Default NER, not XNLI
    from xling.report.claims import CLAIMS

    assert summary["claims supported"].endswith(f"of {len(CLAIMS)}")
    assert summary["Figure 7: layers, bilingual model above the random encoder"].endswith("of 18")
    assert summary["Pearson r of CKA and Tatoeba P@1, over the pairs"] != NOT_COMPUTED
    assert summary["English XNLI dev of Table 1's models: min / mean / max"] == NOT_COMPUTED


def test_muller_tables_figures_and_scores(demo_run):
    scores = pd.read_csv(demo_run / "muller/scores.csv")
    # transfer: ref, 1-2, all; domain: ref, 1-2 (Table 2's Δ0-1); every task, one seed
    groups = scores.groupby("experiment")["group"].agg(lambda g: set(g.astype(str)))
    assert groups.to_dict() == {"transfer": {"ref", "1-2", "all"}, "domain": {"ref", "1-2"}}
    assert set(scores["task"]) == {"parsing", "pos", "ner"}
    # Table 2 trains on the transfer set: its runs are the transfer runs, not trained again
    assert not (demo_run / "muller/finetune/domain").exists()
    same = scores[(scores["evaluation"] == "en") & (scores["split"] == "test")]
    by_experiment = same.set_index(["experiment", "task", "source", "group"])["score"]
    domain = by_experiment["domain"]
    assert domain.equals(by_experiment["transfer"].loc[domain.index])
    assert "en_cc" not in set(scores[scores["experiment"] == "transfer"]["evaluation"])
    assert (scores[scores["experiment"] == "domain"]["evaluation"] == "en_cc").any()
    assert scores["score"].between(0, 1).all()
    similarity = pd.read_csv(demo_run / "muller/similarity.csv")
    assert set(similarity["model"]) == {"pretrained", "finetuned", "length"}  # length: control
    assert set(similarity["layer"]) == set(range(5))  # L0..L4 of the 4-layer model
    table1 = (demo_run / "muller/tables/table1.md").read_text()
    assert "(88.98)" in table1  # the paper's En-En parsing Ref beside ours
    for n in (1, 2, 3, 4):
        assert (demo_run / f"muller/figures/figure{n}.png").read_bytes()[:4] == b"\x89PNG"


def test_pretraining_loss_fell_and_beats_unigram(demo_run):
    summary = json.loads((demo_run / "pretrain/en-fr/default/summary.json").read_text())
    assert summary["last_train_loss"] < summary["first_train_loss"] - 1.0
    assert summary["dev_acc"] > summary["unigram_acc"]
    curve = pd.read_csv(demo_run / "pretrain/en-fr/default/curve.csv")
    assert len(curve) > 1


def test_selection_uses_both_grid_points(demo_run):
    selected = json.loads((demo_run / "finetune/en-fr/default/ner/selected.json").read_text())
    assert len(selected["best_hp_ids"]) == 2
    assert 0.0 <= selected["test"]["fr"] <= 1.0 and selected["dev"]["en"] > 0.5


def test_cka_per_layer_and_figure(demo_run):
    cka = pd.read_csv(demo_run / "analysis/cka/en-fr/default.csv")
    assert sorted(cka["encoder"].unique()) == ["random", "trained"]
    assert sorted(cka["layer"].unique()) == list(range(9))  # L0 (embeddings) .. L8
    assert cka["cka"].between(0, 1).all()
    assert (demo_run / "figures/cka_layers.png").read_bytes()[:4] == b"\x89PNG"


def test_anchor_table_covers_every_scheme(demo_run):
    anchors = pd.read_csv(demo_run / "tables" / "anchors.csv").set_index("scheme")
    assert set(anchors.index) == {"joint", "per_language", "per_language_prefixed", "codeswitch"}
    assert anchors.loc["per_language_prefixed", "shared_types"] == 0
    assert anchors.loc["joint", "shared_types"] > 0
    # code-switching puts dictionary translations into both corpora: more shared types
    assert anchors.loc["codeswitch", "shared_types"] > anchors.loc["joint", "shared_types"]


def test_section5_figures_and_their_tables(demo_run):
    for figure in (4, 5, 6, 7, 8):
        assert (demo_run / f"figures/wu_figure{figure}.png").read_bytes()[:4] == b"\x89PNG"
        assert (demo_run / f"figures/wu_figure{figure}.pdf").read_bytes()[:5] == b"%PDF-"
        assert len(pd.read_csv(demo_run / f"figures/wu_figure{figure}.csv")) > 0
    similarity = pd.read_csv(demo_run / "analysis/similarity/en-fr.csv")
    # the three encoders and the length-only control
    encoders = ["bilingual", "length", "monolingual", "random"]
    assert sorted(similarity["encoder"].unique()) == encoders
    assert len(similarity) == 4 * 9 and similarity["cka"].between(0, 1).all()
    assert similarity["cka_length_controlled"].notna().sum() == 3 * 9
    assert len(pd.read_csv(demo_run / "analysis/similarity/en-enp.csv")) == 4 * 9
    # the same CKA on resamples of the parallel sentences, gathered as Figure 7 for the claims
    cka_resamples = pd.read_csv(demo_run / "analysis/similarity/resamples/en-fr.csv")
    assert len(cka_resamples) == 200 * 4 * 9 and cka_resamples["cka"].between(0, 1).all()
    figure7 = pd.read_csv(demo_run / "figures/wu_figure7.csv")
    figure7_resamples = pd.read_csv(demo_run / "figures/wu_figure7_resamples.csv")
    assert list(figure7_resamples.columns) == ["replicate", *figure7.columns]
    # the resamples are the CKA's: Figure 7's own rows, not the other measures
    assert len(figure7_resamples) == 200 * (figure7["measure"] == "cka").sum()
    assert set(figure7["measure"]) == {"cka", "cka_debiased", "cka_length_controlled"}
    words = pd.read_csv(demo_run / "analysis/words/en-fr.csv", dtype={"hits": str})
    assert set(words["method"]) == {"embeddings", "fasttext_subset", "fasttext", "contextual"}
    # Figure 4a's fastText baseline scores the embeddings' words only ("the same subset")
    test_words = words.groupby("method")["n_test_words"].max()
    assert test_words["fasttext_subset"] == test_words["embeddings"] < test_words["fasttext"]
    assert set(words["mapped"]) == {True, False}
    # one hit mark per test word, its P@1 over the words it scored; resampled for the claims
    assert words["hits"].str.len().nunique() == 1
    scored = words["hits"].str.count("[yn]")
    assert (scored == words["n_test_words"]).all()
    assert np.allclose(words["hits"].str.count("y") / scored, words["p_at_1"])
    resamples = pd.read_csv(demo_run / "figures/wu_figure4_resamples.csv")
    assert len(resamples) == 200 * len(words) and resamples["replicate"].nunique() == 200
    assert "hits" not in pd.read_csv(demo_run / "figures/wu_figure4.csv")
    retrieval = pd.read_csv(demo_run / "analysis/sentences/en-fr.csv")
    assert set(retrieval["direction"]) == {"en-fr", "fr-en"}
    # after Procrustes, sentence retrieval beats chance (1 in n_test) in some layer
    assert retrieval["p_at_1"].max() > 5 / retrieval["n_test"].iloc[0]
    assert retrieval["p_at_1_unmapped"].between(0, 1).all()
    # a hit mark per Tatoeba sentence, their mean the P@1; resampled for the claims check
    assert (retrieval["hits"].str.len() == retrieval["n_test"]).all()
    assert np.allclose(retrieval["hits"].str.count("y") / retrieval["n_test"], retrieval["p_at_1"])
    resamples = pd.read_csv(demo_run / "figures/wu_figure6_resamples.csv")
    assert len(resamples) == 200 * len(retrieval)
    assert len(pd.read_csv(demo_run / "tables/wu_cka_retrieval_resamples.csv")) == 200
    transfer = pd.read_csv(demo_run / "analysis/transfer/bilingual/en-fr/ner.csv")
    assert set(transfer["evaluation"]) == {"source", "bimlm", "bimlm_align"}
    assert sorted(transfer["layer"].unique()) == list(range(9))
    # the per-sentence counts behind each score; Figures 5 and 8 resampled from them
    for text, score in zip(transfer["test_items"], transfer["score"], strict=True):
        assert ratio(parse_items_string(text, "e2e")) == pytest.approx(score)
    figure5 = pd.read_csv(demo_run / "figures/wu_figure5.csv")
    resampled = pd.read_csv(demo_run / "figures/wu_figure5_resamples.csv")
    assert len(resampled) == 200 * len(figure5) and "test_items" not in figure5
    assert len(pd.read_csv(demo_run / "figures/wu_figure8_resamples.csv")) == 200 * len(
        pd.read_csv(demo_run / "figures/wu_figure8.csv")
    )


def test_the_paper_studys_aligner_feeds_the_same_mappings(demo_run):
    """The demo maps on the toy world's gold alignments; the paper study's eflomal path (rule
    align_parallel) must run on the same files. Last in this module: it rewrites one mapping."""
    workdir = demo_run.parents[1]
    mapping = "results/demo/analysis/mappings/mono/en-fr.npz"
    gold_pairs = int(np.load(workdir / mapping)["word_pairs"])
    command = [
        str(Path(sys.executable).with_name("snakemake")), "--cores", "2",
        "--directory", str(workdir), "--snakefile", str(REPO / "Snakefile"),
        "--configfile", str(REPO / "config/demo.yaml"), str(REPO / "tests/config/e2e.yaml"),
        "--config", 'analysis={"word_aligner": "eflomal"}', "--forcerun", "contextual_mappings",
        "--", mapping,
    ]  # fmt: skip
    env = dict(os.environ, OMP_NUM_THREADS="1")
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "align_parallel" in result.stdout + result.stderr
    links = (demo_run / "analysis/alignments/en-fr.txt").read_text().splitlines()
    assert len(links) == 300  # analysis.parallel_sentences of the slice
    # eflomal and the gold links agree closely on the toy world (AER about 0.02)
    assert abs(int(np.load(workdir / mapping)["word_pairs"]) - gold_pairs) < 0.2 * gold_pairs
