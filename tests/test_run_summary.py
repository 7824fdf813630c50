"""The headline numbers of a run, read from a results folder written here in the study's formats."""

import json

import pandas as pd
import pytest

from xling.report.run_summary import NOT_COMPUTED, NUMBERS, main, summarize

LAYERS = [f"L{i}" for i in range(3)]


def _write_json(path, document):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


def _csv(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)


@pytest.fixture
def run(tmp_path):
    verdicts = ["supported", "not supported", "supported", "not computed"]
    _write_json(
        tmp_path / "report/claims.json",
        {"study": "demo", "claims": [{"id": str(i), "verdict": v} for i, v in enumerate(verdicts)]},
    )
    cka = {  # (pair, encoder) -> L0..L2; AVER is their mean
        ("en-fr", "bilingual"): [0.9, 0.8, 0.7],
        ("en-fr", "monolingual"): [0.8, 0.5, 0.6],  # above random in L0 and L2
        ("en-fr", "random"): [0.7, 0.6, 0.5],
        ("en-zh", "bilingual"): [0.6, 0.6, 0.6],
        ("en-zh", "monolingual"): [0.2, 0.3, 0.2],  # never above random
        ("en-zh", "random"): [0.4, 0.3, 0.2],
    }
    _csv(
        tmp_path / "figures/wu_figure7.csv",
        [
            {"pair": p, "encoder": e, **dict(zip(LAYERS, v, strict=True)), "AVER": sum(v) / 3}
            for (p, e), v in cka.items()
        ],
    )
    _csv(
        tmp_path / "tables/wu_cka_retrieval_pearson.csv",
        [{"pair": "en-fr", "pearson_r": 0.912}, {"pair": "en-zh", "pearson_r": 0.744}],
    )
    _csv(
        tmp_path / "figures/wu_figure6.csv",
        [
            {"layer": 0, "direction": "en-fr", "p_at_1": 0.3, "p_at_1_unmapped": 0.01},
            {"layer": 1, "direction": "en-fr", "p_at_1": 0.5, "p_at_1_unmapped": 0.02},
            {"layer": 0, "direction": "fr-en", "p_at_1": 0.25, "p_at_1_unmapped": 0.004},
        ],
    )
    for name, acc in (("en-fr/default", 0.3), ("en-fr/no_anchors", 0.2)):
        _write_json(tmp_path / f"pretrain/{name}/summary.json", {"dev_acc": acc})
    _write_json(tmp_path / "pretrain/mono/en/summary.json", {"dev_acc": 0.9})  # not bilingual
    for name, acc in (("default", 0.61), ("sep_emb", 0.45), ("no_anchors", 0.5)):
        _write_json(tmp_path / f"finetune/en-fr/{name}/xnli/selected.json", {"dev": {"en": acc}})
    _csv(
        tmp_path / "tables/table1.csv",
        [{"variant": "default", "XNLI fr": 43.66, "XNLI fr paper": 73.6, "NER fr": 41.04,
          "Parsing fr": 36.15}, {"variant": "sep_emb", "XNLI fr": 1, "NER fr": 2, "Parsing fr": 3}],
    )  # fmt: skip
    _csv(
        tmp_path / "muller/tables/table1.csv",
        [{"group": "Parsing (LAS)", "row": "EN - EN", "Ref": 84.6},
         {"group": "Parsing (LAS)", "row": "EN - X", "Ref": 28.74},
         {"group": "NER (F1)", "row": "EN - X", "Ref": 25.09}],
    )  # fmt: skip
    return tmp_path


def test_every_number_reads_as_the_files_give_it(run):
    summary = summarize(run)
    assert list(summary) == [label for label, _ in NUMBERS]
    assert list(summary.values()) == [
        "2 of 4",
        "2 of 6",  # en-fr L0 and L2
        "6 of 6",
        "0.30 to 0.60",  # random layer averages: en-zh 0.30, en-fr 0.60
        "0.74 to 0.91",
        "0.25 to 0.50 (unmapped at most 0.020)",  # best layer per direction
        "0.250 (2 models)",  # the monolingual model left out
        "0.45 / 0.52 / 0.61 (3 models)",
        "fr: 43.7 / 41.0 / 36.1",
        "Parsing 28.7 / NER 25.1",
    ]


def test_a_missing_input_reads_not_computed_and_the_rest_stays(run, capsys):
    (run / "figures/wu_figure7.csv").unlink()
    for path in run.glob("finetune/*/*/xnli/selected.json"):
        path.unlink()
    summary = summarize(run)
    missing = [label for label, value in summary.items() if value == NOT_COMPUTED]
    assert len(missing) == 4 and all("Figure 7" in m or "XNLI" in m for m in missing)
    assert summary["claims supported"] == "2 of 4"
    assert main([str(run), str(run)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0] == f"| | {run} | {run} |"
    assert table[2] == "| claims supported | 2 of 4 | 2 of 4 |"
    assert len(table) == 2 + len(NUMBERS)


def test_not_a_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nowhere: no such folder"):
        summarize(tmp_path / "nowhere")
