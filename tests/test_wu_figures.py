"""Figures 4 to 8 of Wu et al. from hand-made analysis tables."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from xling.report import wu_figures

LAYERS = range(9)


def png(path):
    return path.read_bytes()[:4] == b"\x89PNG"


def test_figure7_lays_out_pairs_by_encoder_with_the_average_column(tmp_path):
    tables = {
        pair: pd.DataFrame(
            [
                {"encoder": encoder, "layer": layer, "cka": base - 0.01 * layer}
                for encoder, base in (("monolingual", 0.8), ("bilingual", 0.9), ("random", 0.3))
                for layer in LAYERS
            ]
        )
        for pair in ("en-enp", "en-fr")
    }
    grid = wu_figures.figure7(tables, tmp_path / "f7.png")
    assert png(tmp_path / "f7.png")
    assert list(grid["pair"]) == ["en-enp"] * 3 + ["en-fr"] * 3
    assert list(grid["encoder"][:3]) == ["bilingual", "monolingual", "random"]
    assert grid["AVER"].iloc[0] == pytest.approx(np.mean([0.9 - 0.01 * n for n in LAYERS]))


def test_cka_retrieval_correlation_is_pearson_over_layers():
    cka = [0.9, 0.85, 0.7, 0.6, 0.62, 0.5, 0.4, 0.35, 0.3]
    similarity = {
        "en-fr": pd.DataFrame(
            [{"encoder": "monolingual", "layer": n, "cka": value} for n, value in enumerate(cka)]
            + [{"encoder": "random", "layer": n, "cka": 0.1} for n in LAYERS]
        )
    }
    forward = [0.5, 0.6, 0.4, 0.3, 0.35, 0.2, 0.1, 0.15, 0.05]
    backward = [0.45, 0.5, 0.45, 0.2, 0.3, 0.25, 0.15, 0.1, 0.1]
    retrieval = {
        "en-fr": pd.DataFrame(
            [{"layer": n, "direction": "en-fr", "p_at_1": v} for n, v in enumerate(forward)]
            + [{"layer": n, "direction": "fr-en", "p_at_1": v} for n, v in enumerate(backward)]
        )
    }
    table = wu_figures.cka_retrieval_correlation(similarity, retrieval)
    expected = pearsonr(cka, (np.array(forward) + np.array(backward)) / 2)
    assert table.loc[0, "pearson_r"] == pytest.approx(expected.statistic)
    assert table.loc[0, "p_value"] == pytest.approx(expected.pvalue)


def test_transfer_figures_keep_their_own_lines(tmp_path):
    sweeps = {}
    for kind, evaluations in (("mono", ["mlm_align"]), ("bilingual", ["bimlm", "bimlm_align"])):
        rows = []
        for layer in LAYERS:
            rows.append({"layer": layer, "evaluation": "source", "lang": "en", "score": 0.8})
            rows += [
                {"layer": layer, "evaluation": name, "lang": "fr", "score": 0.1 * (layer % 5)}
                for name in evaluations
            ]
        sweeps[(kind, "en-fr", "ner")] = pd.DataFrame(rows)
    data = wu_figures.transfer_table(sweeps)
    five = wu_figures.figure5(data, tmp_path / "f5.png")
    eight = wu_figures.figure8(data, tmp_path / "f8.png")
    assert png(tmp_path / "f5.png") and png(tmp_path / "f8.png")
    assert set(five["line"]) == {"mlm_align", "bimlm"}
    assert set(eight["line"]) == {"bimlm", "bimlm_align"}
    assert len(five) == 2 * len(LAYERS)


def test_figures_4_and_6_draw_from_their_tables(tmp_path):
    words = pd.DataFrame(
        [{"method": "embeddings", "layer": None, "p_at_1": 0.3},
         {"method": "fasttext_subset", "layer": None, "p_at_1": 0.25},
         {"method": "fasttext", "layer": None, "p_at_1": 0.4}]
        + [{"method": "contextual", "layer": n, "p_at_1": 0.02 * n} for n in LAYERS]
    )  # fmt: skip
    paths = [tmp_path / "f4.png", tmp_path / "f4.pdf"]  # one figure, each format its suffix's
    data = wu_figures.figure4({"en-fr": words, "en-ru": words}, paths)
    assert png(tmp_path / "f4.png") and set(data["pair"]) == {"en-fr", "en-ru"}
    assert (tmp_path / "f4.pdf").read_bytes()[:5] == b"%PDF-"
    sentences = pd.DataFrame(
        [{"layer": n, "direction": d, "p_at_1": 0.5} for n in LAYERS for d in ("en-fr", "fr-en")]
    )
    data = wu_figures.figure6({"en-fr": sentences}, tmp_path / "f6.png")
    assert png(tmp_path / "f6.png") and len(data) == 18


@pytest.fixture
def drawn(monkeypatch):
    """The figures' matplotlib Figure objects, kept instead of closed."""
    figures = []
    monkeypatch.setattr(wu_figures, "_save", lambda fig, out_path: figures.append(fig))
    return figures


def _ticks(labels):
    return [label.get_text() for label in labels]


def test_figures_read_as_the_paper_writes_them(drawn, tmp_path):
    names = {"enp": "en'"}
    cka = pd.DataFrame(
        [{"encoder": e, "layer": n, "cka": 0.5} for e in ("bilingual", "random") for n in LAYERS]
    )
    wu_figures.figure7({"en-enp": cka, "en-fr": cka}, tmp_path / "f7.png", names)
    heat_map = drawn[-1].axes[0]
    # the paper's layout: a row per layer and the average row, a column per pair and encoder
    assert _ticks(heat_map.get_yticklabels()) == [f"L{n}" for n in LAYERS] + ["AVER"]
    assert _ticks(heat_map.get_xticklabels())[0] == "en-en'\nbilingual"
    words = pd.DataFrame(
        [{"method": m, "layer": None, "p_at_1": p, "n_test_words": 15}
         for m, p in (("embeddings", 0.0), ("fasttext_subset", 0.2), ("fasttext", 0.4))]
        + [{"method": "contextual", "layer": n, "p_at_1": 0.02 * n} for n in LAYERS]
    )  # fmt: skip
    wu_figures.figure4({"en-fr": words}, tmp_path / "f4.png", names)
    bars = drawn[-1].axes[0]
    assert _ticks(bars.get_xticklabels()) == ["en-fr\n15 words"]
    assert sorted(_ticks(bars.texts)) == ["0", "20"]  # a zero bar is labelled, not invisible
    sentences = pd.DataFrame(
        [{"layer": n, "direction": d, "p_at_1": 0.5} for n in LAYERS for d in ("en-fr", "fr-en")]
    )
    wu_figures.figure6({"en-fr": sentences}, tmp_path / "f6.png", names)
    legend = drawn[-1].axes[0].get_legend()
    assert _ticks(legend.get_texts()) == ["en→fr", "fr→en"]
    assert legend.get_title().get_text() == "query→retrieved"
    rows = [
        {"layer": n, "evaluation": e, "lang": "fr", "score": 0.3}
        for n in LAYERS
        for e in ("mlm_align", "bimlm")
    ]
    sweeps = {(kind, pair, task): pd.DataFrame(rows)
              for kind in ("mono", "bilingual") for pair in ("en-fr", "en-ru")
              for task in ("ner", "parsing")}  # fmt: skip
    wu_figures.figure5(wu_figures.transfer_table(sweeps), tmp_path / "f5.png")
    panels = drawn[-1].axes
    assert [ax.get_ylabel() for ax in panels] == ["span F1", "", "LAS", ""]
    assert panels[0].get_shared_y_axes().joined(panels[0], panels[1])
