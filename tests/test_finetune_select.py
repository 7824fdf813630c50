"""Grid points and their ids, and the paper's mean over the best two grid points."""

import json

import pytest

from xling.finetune import grid_points, hp_id, normalize_hp, parse_hp_id, select_best

PAPER_GRIDS = {
    "ner": {"batch_size": [16, 32], "lr": [2e-5, 3e-5, 5e-5]},
    "parsing": {"batch_size": [16, 32], "lr": [2e-5, 3e-5, 5e-5]},
    "xnli": {
        "batch_size": [4, 8],
        "encoder_lr": [1.25e-6, 2.5e-6, 5e-6],
        "classifier_lr": [5e-6, 2.5e-5, 1.25e-4],
    },
}


@pytest.mark.parametrize(("task", "size"), [("ner", 6), ("parsing", 6), ("xnli", 18)])
def test_paper_grids_round_trip_through_ids(task, size):
    points = grid_points(task, PAPER_GRIDS[task])
    ids = [hp_id(point) for point in points]
    assert len(set(ids)) == size
    assert all(parse_hp_id(i) == point for i, point in zip(ids, points, strict=True))
    assert all(set(i) <= set("abcdeilrs0123456789.-_") for i in ids)  # path-safe


def test_ids_are_readable_and_independent_of_key_order():
    assert hp_id({"batch_size": 16, "lr": 5e-5}) == "bs16_lr5e-05"
    assert hp_id({"lr": 5e-5, "batch_size": 16}) == "bs16_lr5e-05"
    xnli = {"classifier_lr": 5e-6, "batch_size": 4, "encoder_lr": 1.25e-6}
    assert hp_id(xnli) == "bs4_elr1.25e-06_clr5e-06"


def test_yaml_strings_are_numbers():
    # PyYAML reads 2e-5 (no dot) as a string.
    assert grid_points("ner", {"batch_size": ["16"], "lr": ["2e-5"]}) == [
        {"batch_size": 16, "lr": 2e-5}
    ]


@pytest.mark.parametrize(
    ("task", "grid", "message"),
    [
        ("ner", {"batch_size": [16]}, "exactly"),
        ("ner", {"batch_size": [16], "lr": []}, "non-empty list"),
        ("ner", {"batch_size": [16.5], "lr": [1e-3]}, "whole number"),
        ("ner", {"batch_size": [16], "lr": [-1e-3]}, "positive"),
        ("ner", {"batch_size": [16], "lr": ["fast"]}, "not a number"),
        ("ner", {"batch_size": [16, 16], "lr": [1e-3]}, "repeats"),
        ("qa", {"batch_size": [16], "lr": [1e-3]}, "unknown task"),
    ],
)
def test_bad_grids_are_rejected(task, grid, message):
    with pytest.raises(ValueError, match=message):
        grid_points(task, grid)


def test_bad_ids_and_hps_are_rejected():
    for text in ("bs16_x5", "bs16-lr5e-05", "lr5e-05_bs16", "bs16_lr0.00005"):
        with pytest.raises(ValueError):
            parse_hp_id(text)
    with pytest.raises(ValueError, match="exactly"):
        normalize_hp("xnli", {"batch_size": 4, "lr": 1e-5})


def write_metrics(directory, hp, dev_en, test, task="ner", metric="span_f1"):
    path = directory / hp_id(hp) / "metrics.json"
    path.parent.mkdir(parents=True)
    dev = {"en": dev_en, "fr": dev_en / 2}
    metrics = {"task": task, "pair": "en-fr", "variant": "default", "hp": hp, "hp_id": hp_id(hp)}
    metrics |= {"metric": metric, "selected_epoch": 3, "dev": dev, "test": test, "epochs": []}
    path.write_text(json.dumps(metrics))
    return path


def test_select_best_averages_the_best_two_by_english_dev(tmp_path):
    dev_en = {16: [0.70, 0.90, 0.80], 32: [0.85, 0.60, 0.75]}
    paths = []
    for batch_size, scores in dev_en.items():
        for lr, score in zip([2e-5, 3e-5, 5e-5], scores, strict=True):
            hp = {"batch_size": batch_size, "lr": lr}
            # Test scores that would rank the points differently: selection must not look at them.
            test = {"en": 1 - score, "fr": lr * 1e4}
            paths.append(write_metrics(tmp_path, hp, score, test))
    selected = select_best(paths, k=2)
    assert selected["metric"] == "span_f1"
    assert selected["best_hp_ids"] == ["bs16_lr3e-05", "bs32_lr2e-05"]
    assert selected["test"]["en"] == pytest.approx(((1 - 0.90) + (1 - 0.85)) / 2)
    assert selected["test"]["fr"] == pytest.approx((0.3 + 0.2) / 2)
    assert selected["dev"] == pytest.approx({"en": 0.875, "fr": 0.4375})
    assert select_best(paths, k=1)["best_hp_ids"] == ["bs16_lr3e-05"]


def test_select_best_breaks_ties_by_id_and_checks_input(tmp_path):
    a = write_metrics(tmp_path, {"batch_size": 32, "lr": 1e-5}, 0.5, {"en": 0.1})
    b = write_metrics(tmp_path, {"batch_size": 16, "lr": 1e-5}, 0.5, {"en": 0.3})
    assert select_best([a, b], k=1)["best_hp_ids"] == ["bs16_lr1e-05"]
    with pytest.raises(ValueError, match="best 3"):
        select_best([a, b], k=3)
    c = write_metrics(tmp_path, {"batch_size": 8, "lr": 1e-5}, 0.5, {"en": 0.3}, metric="las")
    with pytest.raises(ValueError, match="mix metrics"):
        select_best([a, c])
    broken = tmp_path / "broken.json"
    broken.write_text('{"task": "ner",\n  "metric": }')
    with pytest.raises(ValueError, match=r"broken\.json:2: not valid JSON"):
        select_best([a, broken], k=1)
    with pytest.raises(ValueError, match="no de dev score"):
        select_best([a, b], k=1, source_lang="de")
