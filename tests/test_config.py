"""Config validation: both shipped configs pass; bad ones fail with a message naming the key."""

import copy

import pytest

from xling import config as xconfig


@pytest.fixture(params=["config/demo.yaml", "config/config.yaml"])
def shipped(request, repo):
    return xconfig.load_yaml(repo / request.param)


def test_shipped_configs_validate(shipped, repo):
    validated = xconfig.validate(shipped, repo / "config/schema.yaml")
    assert validated["study"] in {"demo", "paper"}
    assert validated["preprocess"]["shards"] >= 1  # default filled in when absent


def _error(config, repo):
    with pytest.raises(xconfig.ConfigError) as info:
        xconfig.validate(config, repo / "config/schema.yaml")
    return str(info.value)


def test_unknown_language_in_pairs_names_pairs_and_known_languages(shipped, repo):
    bad = copy.deepcopy(shipped)
    bad["pairs"] = [*bad["pairs"], "en-xx"]
    message = _error(bad, repo)
    assert "'pairs'" in message and "'xx'" in message
    for lang in shipped["languages"]:
        assert lang in message


def test_enum_error_lists_allowed_values(shipped, repo):
    bad = copy.deepcopy(shipped)
    bad["variants"]["default"]["domains"] = "wiki"
    message = _error(bad, repo)
    assert "variants.default.domains" in message and "'wiki-cc'" in message


def test_unknown_key_is_reported_with_known_keys(shipped, repo):
    bad = copy.deepcopy(shipped)
    bad["model"]["layer"] = 8
    message = _error(bad, repo)
    assert "model" in message and "'layer'" in message and "layers" in message


def test_variant_with_unconfigured_scheme(shipped, repo):
    bad = copy.deepcopy(shipped)
    bad["variants"]["extra"] = dict(bad["variants"]["default"], vocab="nonexistent")
    assert "variants.extra.vocab" in _error(bad, repo)


def test_pair_with_itself_and_duplicates(shipped, repo):
    bad = copy.deepcopy(shipped)
    bad["pairs"] = ["en-en"]
    assert "with itself" in _error(bad, repo)
    bad["pairs"] = ["en-fr", "en-fr"]
    assert "twice" in _error(bad, repo)


def test_task_dataset_lookup(repo):
    config = xconfig.load(repo / "config/config.yaml", repo / "config/schema.yaml")
    assert xconfig.task_dataset(config, "ner", "en-zh", "zh") == "levow2006"
    assert xconfig.task_dataset(config, "ner", "en-zh", "en") == "conll2003"
    assert xconfig.task_dataset(config, "ner", "en-fr", "en") == "wikiann"
