"""Wu section 5 planned from the config, and the config errors it rejects up front."""

import copy
from pathlib import Path

import pytest

from xling import study
from xling.study import ConfigError
from xling.study.plan.section5 import plan

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo():
    return study.load(REPO / "config" / "demo.yaml")


def test_the_demo_plans_every_language_en_prime_and_the_bilingual_models(demo):
    section = plan(demo)
    assert sorted(section.models) == ["de", "en", "enp", "fr", "ru", "zh"]
    # en' reads English text with its own seed
    assert section.models["enp"].lang == "en"
    assert section.models["enp"].seed == demo["monolingual"]["english_prime"]["seed"]
    assert section.models["enp"].seed != section.models["en"].seed
    assert section.bilingual["en-enp"] == "sep_emb" and section.bilingual["en-de"] == "default"
    assert section.similarity_pairs[0] == "en-enp"
    assert section.corpus_language("enp") == "en" and section.corpus_language("fr") == "fr"


def test_without_the_section_nothing_is_planned(demo):
    reduced = {k: v for k, v in demo.items() if k != "monolingual"}
    assert plan(reduced) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["monolingual"].update(languages=["en", "xx"]), "'monolingual.languages'"),
        (lambda c: c["monolingual"].update(languages=["fr", "de"]), "must include en"),
        (lambda c: c["monolingual"].update(pairs=["en-xx"]), "'monolingual.pairs'"),
        (lambda c: c["monolingual"].update(english_prime_variant="default"), "separate embed"),
        (lambda c: c["monolingual"].update(bilingual_variant="nope"), "bilingual_variant"),
        (lambda c: c["analysis"]["contextual_transfer"].update(pairs=["en-it"]), "transfer.pairs"),
        (lambda c: c["analysis"]["word_alignment"].update(pairs=["en-it"]), "alignment.pairs"),
        (lambda c: c["analysis"].pop("word_alignment"), "analysis.word_alignment"),
    ],
)
def test_an_inconsistent_section_is_rejected_naming_the_key(demo, change, message):
    raw = study.load_yaml(REPO / "config" / "demo.yaml")
    broken = copy.deepcopy(raw)
    change(broken)
    with pytest.raises(ConfigError, match=message):
        study.validate(broken)


def test_the_paper_study_needs_tatoeba_and_fasttext_downloads():
    raw = study.load_yaml(REPO / "config" / "config.yaml")
    study.validate(copy.deepcopy(raw))
    del raw["data"]["tatoeba"]
    with pytest.raises(ConfigError, match=r"'data\.tatoeba' is required"):
        study.validate(raw)


def test_a_section_5_pair_without_a_tatoeba_code_names_the_key_and_the_code_s_kind():
    raw = study.load_yaml(REPO / "config" / "config.yaml")
    del raw["data"]["tatoeba"]["codes"]["de"]
    with pytest.raises(ConfigError, match=r"'data\.tatoeba\.codes'.*'en-de'.*e\.g\. es: spa"):
        study.validate(raw)
