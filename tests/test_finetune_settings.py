"""Fine-tuning settings from a config ``tasks.<task>`` section: keys, defaults, and errors that
name the config key. Torch-free, like the module.
"""

import dataclasses
import os
import subprocess
import sys

import pytest

from xling import study
from xling.finetune import FinetuneSettings
from xling.finetune.settings import GRID_LEVEL_KEYS

SECTION = {"epochs": 3, "max_length": 64}


def test_shipped_task_sections_all_build_settings(repo):
    for name in ("config/demo.yaml", "config/config.yaml"):
        config = study.load(repo / name, repo / "config/schema.yaml")
        for task, section in config["tasks"].items():
            settings = FinetuneSettings.from_config(task, section, seed=config["seed"])
            assert (settings.epochs, settings.max_length) == (
                section["epochs"],
                section["max_length"],
            )
            assert settings.seed == config["seed"] and settings.source_lang == "en"
    paper = study.load(repo / "config/config.yaml", repo / "config/schema.yaml")
    xnli = FinetuneSettings.from_config("xnli", paper["tasks"]["xnli"], seed=0, source_lang="fr")
    assert (xnli.epochs, xnli.epoch_size, xnli.source_lang) == (200, 20_000, "fr")
    parsing = FinetuneSettings.from_config("parsing", paper["tasks"]["parsing"], seed=0)
    assert (parsing.arc_dim, parsing.label_dim, parsing.exclude_punct) == (512, 128, False)
    assert not any(
        FinetuneSettings.from_config(task, section, seed=0).group_by_length
        for task, section in paper["tasks"].items()
    )  # the paper study trains on random batches


def test_defaults_are_one_pass_encoder_dropout_and_training_file_tags():
    settings = FinetuneSettings.from_config("ner", SECTION, seed=7)
    assert settings == FinetuneSettings(epochs=3, max_length=64, seed=7)
    assert (settings.epoch_size, settings.head_dropout, settings.labels) == (None, None, None)
    assert (settings.arc_dim, settings.label_dim, settings.eval_batch_size) == (512, 128, 64)


def test_grid_level_keys_are_accepted_and_ignored():
    assert set(GRID_LEVEL_KEYS) == {"grid", "best_k", "datasets"}
    section = {**SECTION, "grid": {"batch_size": [16], "lr": [1e-3]}, "best_k": 2}
    section["datasets"] = {"default": "wikiann"}
    assert FinetuneSettings.from_config("ner", section, seed=0) == FinetuneSettings.from_config(
        "ner", SECTION, seed=0
    )


def test_unknown_key_is_named_with_the_known_keys():
    with pytest.raises(ValueError, match=r"'tasks\.ner\.learning_rate'") as info:
        FinetuneSettings.from_config("ner", {**SECTION, "learning_rate": 1e-3}, seed=0)
    for known in ("epochs", "max_length", "epoch_size", "labels", "arc_dim", "grid", "best_k"):
        assert known in str(info.value)


@pytest.mark.parametrize("key", ["seed", "source_lang"])
def test_per_run_values_are_not_config_keys(key):
    with pytest.raises(ValueError, match=rf"'tasks\.xnli\.{key}' is not a fine-tuning setting"):
        FinetuneSettings.from_config("xnli", {**SECTION, key: 1}, seed=0)


def test_missing_required_key_is_named():
    with pytest.raises(ValueError, match=r"'tasks\.parsing\.max_length' is missing"):
        FinetuneSettings.from_config("parsing", {"epochs": 1}, seed=0)


def test_unknown_task_is_named():
    with pytest.raises(ValueError, match="unknown task 'qa'"):
        FinetuneSettings.from_config("qa", SECTION, seed=0)


@pytest.mark.parametrize(
    ("changes", "key", "fix"),
    [
        ({"epochs": 0}, "epochs", "whole number >= 1"),
        ({"epochs": True}, "epochs", "whole number >= 1"),
        ({"max_length": 2}, "max_length", "boundary tokens"),
        ({"epoch_size": 0}, "epoch_size", "one pass"),
        ({"arc_dim": 1.5}, "arc_dim", "whole number"),
        ({"head_dropout": 1.5}, "head_dropout", r"\[0, 1\]"),
        ({"labels": "O"}, "labels", "list of distinct tags"),
        ({"labels": ["O", "B-PER", "O"]}, "labels", "list of distinct tags"),
        ({"exclude_punct": "yes"}, "exclude_punct", "boolean"),
        ({"group_by_length": 1}, "group_by_length", "boolean"),
    ],
)
def test_bad_values_name_the_config_key_and_the_fix(changes, key, fix):
    with pytest.raises(ValueError, match=rf"'tasks\.ner\.{key}'.*Fix: .*{fix}"):
        FinetuneSettings.from_config("ner", {**SECTION, **changes}, seed=0)
    with pytest.raises(ValueError, match=rf"fine-tuning setting {key}: .*Fix: .*{fix}"):
        FinetuneSettings(**{**SECTION, "seed": 0, **changes})


def test_settings_are_frozen_and_labels_a_tuple():
    settings = FinetuneSettings.from_config("ner", {**SECTION, "labels": ["O", "B-X"]}, seed=0)
    assert settings.labels == ("O", "B-X")
    hash(settings)  # usable as a key: no list inside
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.epochs = 5


def test_settings_import_without_torch(repo):
    code = (
        "import sys, xling.finetune; xling.finetune.FinetuneSettings; print('torch' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(repo / "src")}
    run = [sys.executable, "-c", code]
    result = subprocess.run(run, capture_output=True, text=True, check=True, env=env)
    assert result.stdout.strip() == "False"
