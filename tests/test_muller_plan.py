"""Muller et al.'s runs as the config asks for them, and config errors naming the key."""

import copy
from pathlib import Path

import pytest

from xling import study
from xling.muller import REFERENCE
from xling.study import ConfigError
from xling.study.checks.muller import check_group
from xling.study.plan.muller import plan

CONFIGS = Path(__file__).resolve().parents[1] / "config"


@pytest.fixture(scope="module")
def demo():
    return study.load(CONFIGS / "demo.yaml")


@pytest.fixture(scope="module")
def paper():
    return study.load(CONFIGS / "config.yaml")


def test_every_source_runs_table1_groups_and_the_table5_source_runs_table5_groups(demo):
    mplan = plan(demo)
    en = mplan.setup("transfer", "parsing", "en")
    ru = mplan.setup("transfer", "parsing", "ru")
    assert en.groups[0] == ru.groups[0] == REFERENCE
    assert set(demo["muller"]["groups"]["table1"]) <= set(ru.groups)
    assert set(demo["muller"]["groups"]["table5"]) <= set(en.groups)
    assert "all" not in ru.groups and len(en.groups) == len(set(en.groups))
    assert [e.lang for e in en.evaluations] == demo["muller"]["languages"]
    domain = mplan.setup("domain", "ner", "en")
    assert {e.name for e in domain.evaluations} == {"en", "en_cc", "fr"}
    assert domain.groups == (REFERENCE, *demo["muller"]["groups"]["table2"])


def test_runs_cover_groups_seeds_and_grid_and_jobs_follow_runs_per_job(demo, paper):
    mplan = plan(demo)
    setup = mplan.setup("transfer", "pos", "ru")
    runs = mplan.runs(setup)
    assert len(runs) == len(setup.groups) * len(demo["muller"]["seeds"])
    assert mplan.jobs(setup) == ["all"]
    paper_study = plan(paper)
    setup = paper_study.setup("transfer", "parsing", "ar")
    assert len(paper_study.jobs(setup)) == len(setup.groups) * 5 * 6  # seeds x grid points
    assert paper_study.jobs(setup)[0] == "ref/s1/" + next(iter(paper_study.grids["parsing"]))


def test_a_domain_setup_reads_the_transfer_runs_it_would_train_again(demo):
    mplan = plan(demo)
    transfer = mplan.setup("transfer", "ner", "en")
    domain = mplan.setup("domain", "ner", "en")
    assert domain.runs_of == transfer.key and mplan.jobs(domain) == []
    assert {r.path for r in mplan.runs(domain)} <= {r.path for r in mplan.runs(transfer)}
    # the transfer runs also score the other domain, but report only their own sets
    assert [e.name for e in transfer.shared_evaluations] == ["en_cc"]
    assert [e.name for e in transfer.evaluations] == demo["muller"]["languages"]
    assert not mplan.setup("transfer", "ner", "ru").shared_evaluations


@pytest.mark.parametrize(
    "change",
    [
        {"train": "toy_cc"},  # another training set: other runs
        {"evaluations": {"en": {"lang": "en", "dataset": "toy_cc"}}},  # one name, two sets
    ],
)
def test_a_domain_setup_that_differs_trains_its_own_runs(demo, change):
    config = copy.deepcopy(demo)
    config["muller"]["domain"]["tasks"]["ner"].update(change)
    mplan = plan(config)
    assert mplan.setup("domain", "ner", "en").runs_of == ""
    assert mplan.jobs(mplan.setup("domain", "ner", "en")) == ["all"]
    assert not mplan.setup("transfer", "ner", "en").shared_evaluations
    assert mplan.setup("domain", "pos", "en").runs_of  # the other tasks still share


def test_a_domain_group_the_transfer_does_not_run_keeps_its_own_runs(demo):
    config = copy.deepcopy(demo)
    config["muller"]["groups"]["table2"] = ["0-1"]
    assert all(not setup.runs_of for setup in plan(config).setups)


def test_similarity_is_measured_by_the_reference_and_figure2_runs_of_its_sources(demo):
    mplan = plan(demo)
    measured = {
        (run.setup.source, run.group)
        for setup in mplan.setups
        for run in mplan.runs(setup)
        if mplan.measures_similarity(run)
    }
    assert measured == {
        ("en", REFERENCE),
        ("en", demo["muller"]["similarity"]["random_init_group"]),
    }


@pytest.mark.parametrize(
    ("group", "message"),
    [("13", "beyond the model's 12 layers"), ("3-1", "empty range"), ("x", "not a layer group")],
)
def test_bad_groups_are_rejected_naming_the_key(demo, group, message):
    config = study.load_yaml(CONFIGS / "demo.yaml")
    config["muller"]["groups"]["table5"] = ["1-2", group]
    with pytest.raises(ConfigError, match=r"muller\.groups\.table5\[1\]") as error:
        study.validate(config)
    assert message in str(error.value)


def test_group_zero_is_the_embedding_layer_and_all_is_accepted():
    check_group("0-1", 12, "k")
    check_group("all", 12, "k")
    with pytest.raises(ConfigError, match="k"):
        check_group("0-13", 12, "k")


def test_a_source_without_training_data_is_rejected_naming_the_key(paper):
    config = study.load_yaml(CONFIGS / "config.yaml")
    config["muller"]["sources"] = ["en", "ru", "ar", "fr"]
    with pytest.raises(ConfigError, match=r"muller\.tasks\.parsing\.train.*'fr'"):
        study.validate(config)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda m: m.update(sources=["en", "xx"]), "muller.sources"),
        (lambda m: m.update(table5_source="zh"), "muller.table5_source"),
        (lambda m: m["similarity"].update(random_init_group="20-21"), "random_init_group"),
        (lambda m: m["tasks"]["ner"].update(epochs=0), "muller.tasks.ner.epochs"),
        (lambda m: m["model"].update(architecture={"depth": 3}), "muller.model.architecture"),
        (lambda m: m["tasks"]["pos"].update(best_k=2), "muller.tasks.pos.best_k"),
    ],
)
def test_inconsistent_settings_are_rejected_naming_the_key(demo, change, key):
    config = study.load_yaml(CONFIGS / "demo.yaml")
    change(config["muller"])
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        study.validate(config)


def test_without_the_section_nothing_is_planned(demo):
    config = study.load_yaml(CONFIGS / "demo.yaml")
    del config["muller"]
    assert plan(study.validate(config)) is None
