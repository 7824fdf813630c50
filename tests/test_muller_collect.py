"""The Muller collector: best grid point per (setup, group) over the seeds, scores and similarity
rows."""

import csv
import json

import pytest

from xling.muller.collect import (
    SCORE_COLUMNS,
    SIMILARITY_COLUMNS,
    score_rows,
    select_runs,
    similarity_rows,
)


def _run(tmp_path, group, seed, hp, dev, tests, similarity=False):
    run_dir = tmp_path / group / f"s{seed}" / hp
    run_dir.mkdir(parents=True)
    metrics = {"dev": {"en": dev}, "test": tests, "hp_id": hp}
    fingerprint = {"group": group, "seed": seed}
    (run_dir / "done.json").write_text(json.dumps({"fingerprint": fingerprint, "metrics": metrics}))
    if similarity:
        with open(run_dir / "similarity.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, ["source", "target", "layer", "cka", "cka_debiased"])
            writer.writeheader()
            writer.writerow({"source": "en", "target": "fr", "layer": 0, "cka": dev})
    return {
        "experiment": "transfer", "task": "pos", "source": "en", "group": group,
        "seed": seed, "hp_id": hp, "dir": str(run_dir), "similarity": similarity,
    }  # fmt: skip


def test_one_grid_point_per_group_by_the_mean_dev_over_seeds_and_every_seed_at_it(tmp_path):
    runs = [
        _run(tmp_path, "ref", 1, "a", 0.9, {"en": 0.9, "fr": 0.4}, similarity=True),
        _run(tmp_path, "ref", 1, "b", 0.6, {"en": 0.8, "fr": 0.6}, similarity=True),
        _run(tmp_path, "ref", 2, "a", 0.1, {"en": 0.7, "fr": 0.5}),
        _run(tmp_path, "ref", 2, "b", 0.6, {"en": 0.6, "fr": 0.3}),
        _run(tmp_path, "1-2", 1, "a", 0.4, {"en": 0.3, "fr": 0.1}),
        _run(tmp_path, "1-2", 1, "b", 0.4, {"en": 0.2, "fr": 0.2}),
    ]
    selected = select_runs(runs)
    # ref: b's mean 0.6 beats a's 0.5, though a is seed 1's best; 1-2: a tie goes to the first
    assert [(r["group"], r["seed"], r["hp_id"]) for r, _ in selected] == [
        ("ref", 1, "b"), ("ref", 2, "b"), ("1-2", 1, "a"),
    ]  # fmt: skip
    rows = score_rows(selected, {"transfer/pos/en": {"en": "en", "fr": "fr"}})
    assert set(rows[0]) == set(SCORE_COLUMNS)
    ref1 = {(r["evaluation"], r["split"]): r["score"] for r in rows if r["group"] == "ref"
            and r["seed"] == 1}  # fmt: skip
    assert ref1 == {("en", "dev"): 0.6, ("en", "test"): 0.8, ("fr", "test"): 0.6}
    pretrained = tmp_path / "pretrained.csv"
    pretrained.write_text("source,target,layer,cka,cka_debiased\nen,fr,0,0.3,\n")
    similarity = similarity_rows(selected, pretrained)
    assert [(r["model"], r["seed"], r["cka"]) for r in similarity] == [
        ("pretrained", 0, "0.3"), ("finetuned", 1, "0.6"),
    ]  # fmt: skip


def test_another_runs_done_file_is_an_error_naming_it(tmp_path):
    run = _run(tmp_path, "ref", 1, "a", 0.5, {})
    other = _run(tmp_path, "1-2", 2, "b", 0.5, {})
    moved = {**run, "dir": other["dir"]}
    with pytest.raises(ValueError, match=r"1-2/s2/b/done.json is another run's .*'group': '1-2'"):
        select_runs([moved])


def test_an_unfinished_run_is_an_error_naming_it(tmp_path):
    run = _run(tmp_path, "ref", 1, "a", 0.5, {})
    (tmp_path / "ref" / "s1" / "a" / "done.json").unlink()
    with pytest.raises(FileNotFoundError, match="did not finish"):
        select_runs([run])


def test_similarity_rows_of_another_source_are_an_error_naming_the_run(tmp_path):
    run = _run(tmp_path, "ref", 1, "a", 0.5, {}, similarity=True)
    with open(tmp_path / "ref" / "s1" / "a" / "similarity.csv", "a", newline="") as handle:
        handle.write("ru,fr,0,0.9,\n")  # what a run of the English model wrote before 3d721b7
    pretrained = tmp_path / "pretrained.csv"
    pretrained.write_text("source,target,layer,cka,cka_debiased\n")
    with pytest.raises(ValueError, match=r"source\(s\) \['ru'\].*delete .*ref/s1/a"):
        similarity_rows(select_runs([run]), pretrained)


def test_the_length_control_is_collected_beside_the_pretrained_rows(tmp_path):
    """The pretrained model's file lists the length control too (its `model` column `length`):
    similarity.csv gets it as model `length`, no task, group ref, seed 0, as the claims read it,
    and every row gets the length-controlled CKA, empty where a file has none."""
    run = _run(tmp_path, "ref", 1, "a", 0.5, {"en": 0.5}, similarity=True)
    pretrained = tmp_path / "pretrained.csv"
    pretrained.write_text(
        "source,target,layer,cka,cka_debiased,cka_length_controlled,n_sentences,model\n"
        "en,fr,0,0.3,0.2,0.1,40,\n"
        "en,fr,1,0.4,0.3,0.2,40,\n"
        "en,fr,0,0.9,0.8,,40,length\n"
        "en,fr,1,0.9,0.8,,40,length\n"
    )
    rows = similarity_rows(select_runs([run]), pretrained)
    assert [(r["model"], r["task"], r["group"], r["seed"], r["layer"]) for r in rows] == [
        ("pretrained", "", "ref", 0, "0"), ("pretrained", "", "ref", 0, "1"),
        ("length", "", "ref", 0, "0"), ("length", "", "ref", 0, "1"),
        ("finetuned", "pos", "ref", 1, "0"),
    ]  # fmt: skip
    assert [r["cka_length_controlled"] for r in rows] == ["0.1", "0.2", "", "", None]
    assert all(list(r) == list(SIMILARITY_COLUMNS) for r in rows)
