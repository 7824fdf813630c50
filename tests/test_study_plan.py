"""The study's plan (xling.study.plan): Table 1's models, runs and cells, and what the parts of
the study share, planned from the config alone."""

import copy
from pathlib import Path

import pytest

from xling import study
from xling.finetune.grid import grid_points, hp_id

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo():
    return study.load(REPO / "config/demo.yaml")


def test_table1_plans_every_pair_with_every_selected_variant(demo):
    config = copy.deepcopy(demo)
    config["select"] = {"variants": ["default", "wiki_cc"], "tasks": ["ner", "pos"]}
    table1 = study.plan(config).table1
    assert table1.models == [
        (pair, variant) for pair in demo["pairs"] for variant in ("default", "wiki_cc")
    ]
    # POS is fine-tuned but is no column of Table 1
    cells = table1.cells()
    assert {cell["task"] for cell in cells} == {"ner"}
    assert cells[0] == {"variant": "default", "pair": "en-fr", "task": "ner", "target": "fr"}
    assert len(cells) == len(demo["pairs"]) * 2


def test_each_task_s_grid_is_planned_under_the_ids_of_its_run_folders(demo):
    grids = study.plan(demo).table1.grids
    for task, settings in demo["tasks"].items():
        points = grid_points(task, settings["grid"])
        assert list(grids[task]) == [hp_id(point) for point in points]
        assert list(grids[task].values()) == points


def test_the_corpora_are_those_the_models_read_and_en_prime_reads_english(demo):
    plan = study.plan(demo)
    prime = plan.section5.english_prime
    assert (f"en-{prime}", demo["monolingual"]["english_prime_variant"]) in plan.bilingual_models
    assert set(plan.table1.models) <= set(plan.bilingual_models)
    languages = {lang for _, lang in plan.corpora}
    assert prime not in languages and "en" in languages
    # the Wiki-CC row reads Common Crawl on its target side only
    domains = demo["variants"]["wiki_cc"]["domains"].split("-")
    assert domains == ["wiki", "cc"] and ("cc", "fr") in plan.corpora
    assert ("cc", "en") not in plan.corpora


def test_without_section_5_only_table1_s_models_and_corpora(demo):
    config = copy.deepcopy(demo)
    config.pop("monolingual")
    config["select"] = {"variants": ["default"]}
    plan = study.plan(config)
    assert plan.section5 is None
    assert plan.bilingual_models == tuple((pair, "default") for pair in demo["pairs"])
    assert plan.corpora == tuple(
        sorted({("wiki", lang) for pair in demo["pairs"] for lang in pair.split("-")})
    )
