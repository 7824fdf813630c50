"""The Muller collector: best grid point per (setup, group, seed), scores and similarity rows."""

import csv
import json

import pytest

from xling.muller.collect import SCORE_COLUMNS, score_rows, select_runs, similarity_rows


def _run(tmp_path, group, seed, hp, dev, tests, similarity=False):
    run_dir = tmp_path / group / f"s{seed}" / hp
    run_dir.mkdir(parents=True)
    metrics = {"dev": {"en": dev}, "test": tests, "hp_id": hp}
    (run_dir / "done.json").write_text(json.dumps({"fingerprint": {}, "metrics": metrics}))
    if similarity:
        with open(run_dir / "similarity.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, ["source", "target", "layer", "cka", "cka_debiased"])
            writer.writeheader()
            writer.writerow({"source": "en", "target": "fr", "layer": 0, "cka": dev})
    return {
        "experiment": "transfer", "task": "pos", "source": "en", "group": group,
        "seed": seed, "hp_id": hp, "dir": str(run_dir), "similarity": similarity,
    }  # fmt: skip


def test_the_best_source_dev_point_is_kept_per_group_and_seed(tmp_path):
    runs = [
        _run(tmp_path, "ref", 1, "a", 0.5, {"en": 0.9, "fr": 0.4}, similarity=True),
        _run(tmp_path, "ref", 1, "b", 0.7, {"en": 0.8, "fr": 0.6}, similarity=True),
        _run(tmp_path, "ref", 2, "a", 0.6, {"en": 0.7, "fr": 0.5}),
        _run(tmp_path, "1-2", 1, "a", 0.4, {"en": 0.3, "fr": 0.1}),
    ]
    selected = select_runs(runs)
    assert sorted((r["group"], r["seed"], r["hp_id"]) for r, _ in selected) == [
        ("1-2", 1, "a"), ("ref", 1, "b"), ("ref", 2, "a"),
    ]  # fmt: skip
    rows = score_rows(selected, {"transfer/pos/en": {"en": "en", "fr": "fr"}})
    assert set(rows[0]) == set(SCORE_COLUMNS)
    ref1 = {(r["evaluation"], r["split"]): r["score"] for r in rows if r["group"] == "ref"
            and r["seed"] == 1}  # fmt: skip
    assert ref1 == {("en", "dev"): 0.7, ("en", "test"): 0.8, ("fr", "test"): 0.6}
    pretrained = tmp_path / "pretrained.csv"
    pretrained.write_text("source,target,layer,cka,cka_debiased\nen,fr,0,0.3,\n")
    similarity = similarity_rows(selected, pretrained)
    assert [(r["model"], r["seed"], r["cka"]) for r in similarity] == [
        ("pretrained", 0, "0.3"), ("finetuned", 1, "0.7"),
    ]  # fmt: skip


def test_an_unfinished_run_is_an_error_naming_it(tmp_path):
    run = _run(tmp_path, "ref", 1, "a", 0.5, {})
    (tmp_path / "ref" / "s1" / "a" / "done.json").unlink()
    with pytest.raises(FileNotFoundError, match="did not finish"):
        select_runs([run])
