"""VocabSettings from the config's vocab section: shipped configs, unknown and missing keys."""

from __future__ import annotations

import dataclasses

import pytest

from xling import study
from xling.base.errors import SettingsError
from xling.preprocess import TextPipeline
from xling.vocab import SCHEMES, CodeSwitchSettings, VocabSettings, build_vocabulary

OTHER_VALUES = {"backend": "tokenizers", "bpe_sentences_per_language": 100, "seed": 5}


@pytest.fixture(params=["config/demo.yaml", "config/config.yaml"])
def shipped(request, repo):
    return study.load(repo / request.param, repo / "config/schema.yaml")


def test_every_scheme_of_the_shipped_configs_builds_settings(shipped, tmp_path) -> None:
    vocab = shipped["vocab"]
    assert set(vocab["schemes"]) == set(SCHEMES)
    for scheme, section in vocab["schemes"].items():
        settings = VocabSettings.from_config(shipped, scheme)
        assert settings.backend == vocab["backend"]
        assert settings.bpe_sentences_per_language == vocab["bpe_sentences_per_language"]
        assert settings.seed == shipped["seed"]
        assert settings.min_frequency == 2
        for key, value in section.items():
            assert getattr(settings, key) == value
    codeswitch = VocabSettings.from_config(shipped, "codeswitch")
    section = vocab["schemes"]["codeswitch"]
    dictionaries = {"en-fr": tmp_path / "en-fr.txt"}
    assert codeswitch.codeswitch_settings(dictionaries) == CodeSwitchSettings(
        dictionaries,
        batch_words=section["batch_words"],
        replace_prob=section["replace_prob"],
        max_changed_share=section["max_changed_share"],
    )


def test_settings_are_frozen() -> None:
    settings = VocabSettings.from_scheme_section("joint", {"merges": 10}, **OTHER_VALUES)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.merges = 20


def test_an_unknown_scheme_key_is_named_with_the_known_keys() -> None:
    with pytest.raises(ValueError, match=r"vocab\.schemes\.joint\.merge;.*: merges$"):
        VocabSettings.from_scheme_section("joint", {"merges": 10, "merge": 5}, **OTHER_VALUES)
    section = {"merges": 10, "batch_words": 100, "replace_probability": 0.2}
    with pytest.raises(
        SettingsError,
        match=r"vocab\.schemes\.codeswitch\.replace_probability; .*: "
        r"merges, batch_words, replace_prob, max_changed_share$",
    ):
        VocabSettings.from_scheme_section("codeswitch", section, **OTHER_VALUES)
    # batch_words belongs to codeswitch only.
    with pytest.raises(SettingsError, match=r"vocab\.schemes\.per_language\.batch_words"):
        VocabSettings.from_scheme_section(
            "per_language", {"merges": 10, "batch_words": 100}, **OTHER_VALUES
        )


def test_missing_keys_unknown_schemes_and_bad_values_are_named() -> None:
    with pytest.raises(SettingsError, match=r"vocab\.schemes\.codeswitch\.batch_words is missing"):
        VocabSettings.from_scheme_section("codeswitch", {"merges": 10}, **OTHER_VALUES)
    with pytest.raises(SettingsError, match=r"vocab\.schemes\.joint\.merges is missing"):
        VocabSettings.from_scheme_section("joint", {}, **OTHER_VALUES)
    with pytest.raises(SettingsError, match=r"unknown vocabulary scheme 'shared'"):
        VocabSettings.from_scheme_section("shared", {"merges": 10}, **OTHER_VALUES)
    with pytest.raises(SettingsError, match=r"vocab\.backend"):
        VocabSettings.from_scheme_section(
            "joint", {"merges": 10}, **{**OTHER_VALUES, "backend": "sentencepiece"}
        )
    with pytest.raises(SettingsError, match=r"vocab\.bpe_sentences_per_language must be >= 1"):
        VocabSettings.from_scheme_section(
            "joint", {"merges": 10}, **{**OTHER_VALUES, "bpe_sentences_per_language": 0}
        )
    section = {"merges": 10, "batch_words": 100, "replace_prob": 1.5}
    settings = VocabSettings.from_scheme_section("codeswitch", section, **OTHER_VALUES)
    with pytest.raises(SettingsError, match=r"replace_prob must be within \[0, 1\]"):
        settings.codeswitch_settings({"en-fr": "en-fr.txt"})


def test_a_scheme_missing_from_the_config_is_named(repo) -> None:
    config = study.load(repo / "config/demo.yaml", repo / "config/schema.yaml")
    del config["vocab"]["schemes"]["codeswitch"]
    with pytest.raises(SettingsError, match=r"vocab\.schemes has no section .*'codeswitch'"):
        VocabSettings.from_config(config, "codeswitch")


def test_codeswitch_needs_dictionary_files(tmp_path) -> None:
    section = {"merges": 10, "batch_words": 100}
    settings = VocabSettings.from_scheme_section("codeswitch", section, **OTHER_VALUES)
    corpora = {lang: {"train": tmp_path / f"{lang}.txt"} for lang in ("en", "fr")}
    pipelines = {lang: TextPipeline(lang, "moses") for lang in corpora}
    with pytest.raises(SettingsError, match=r"codeswitch scheme needs .* dictionary files"):
        build_vocabulary(
            "codeswitch", tmp_path / "out", corpora=corpora, pipelines=pipelines, settings=settings
        )
    assert not (tmp_path / "out").exists()
