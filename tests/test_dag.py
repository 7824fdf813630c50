"""The plans of both studies: job counts per rule, computed here from the config itself."""

from itertools import product

import pytest
import yaml

from tests.dag import plan

GRID_SIZE = {"ner": lambda g: len(g["batch_size"]) * len(g["lr"])}


def load(repo, name):
    return yaml.safe_load((repo / "config" / name).read_text())


def expected_counts(config):
    pairs, variants = config["pairs"], config["variants"]
    tasks = config["tasks"]
    corpora = set()
    for pair, settings in product(pairs, variants.values()):
        source, target = pair.split("-")
        source_domain, target_domain = settings["domains"].split("-")
        corpora |= {(source_domain, source), (target_domain, target)}
    pair_languages = {lang for pair in pairs for lang in pair.split("-")}
    vocabularies = {(p, v["domains"], v["vocab"]) for p, v in product(pairs, variants.values())}
    cka_variants = [v for v in config["analysis"]["cka"]["variants"] if v in variants]
    shards = config["preprocess"].get("shards", 1)
    counts = {
        "shard_corpus": len(corpora),
        "tokenize_shard": len(corpora) * shards,
        "split_corpus": len(corpora),
        "tokenize_parallel": len(pair_languages),
        "build_vocab": len(vocabularies),
        "pretrain_model": len(pairs) * len(variants),
        "finetune_run": sum(
            len(pairs) * len(variants) * GRID_SIZE[t](s["grid"]) for t, s in tasks.items()
        ),
        "select_finetune": len(pairs) * len(variants) * len(tasks),
        "cka": len(pairs) * len(cka_variants),
        "table1": 1,
        "figure_cka": 1,
        "all": 1,
    }
    return counts, corpora, pair_languages


def test_demo_plan_matches_the_config(repo, tmp_path):
    config = load(repo, "demo.yaml")
    counts = plan([repo / "config/demo.yaml"], tmp_path)
    expected, _, _ = expected_counts(config)
    expected["toyworld"] = 1
    assert dict(counts) == expected


def test_paper_plan_matches_the_config_and_includes_downloads(repo, tmp_path):
    config = load(repo, "config.yaml")
    counts = plan([repo / "config/config.yaml"], tmp_path)
    expected, corpora, _ = expected_counts(config)
    wiki_languages = {lang for domain, lang in corpora if domain == "wiki"}
    ner = config["tasks"]["ner"]["datasets"]
    ner_imports = {
        (lang, ner.get("pairs", {}).get(pair, {}).get(lang, ner["default"]))
        for pair in config["pairs"]
        for lang in pair.split("-")
    }
    expected.update(
        download=len(wiki_languages) + 2,  # the dumps, XNLI-1.0 and XNLI-MT-1.0
        unpack=2,
        extract_wikipedia=len(wiki_languages),
        import_xnli=1,
        xnli_parallel=1,
        import_ner=len(ner_imports),
    )
    assert dict(counts) == expected


@pytest.mark.parametrize("stage", ["data", "preprocess", "vocab", "pretrain", "analysis"])
def test_each_stage_is_a_target_that_stops_at_its_stage(repo, tmp_path, stage):
    counts = plan([repo / "config/demo.yaml"], tmp_path, targets=(stage,))
    later = {
        "data": {"split_corpus", "build_vocab", "pretrain_model", "finetune_run", "table1"},
        "preprocess": {"build_vocab", "pretrain_model", "finetune_run", "table1"},
        "vocab": {"pretrain_model", "finetune_run", "table1"},
        "pretrain": {"finetune_run", "cka", "table1"},
        "analysis": {"finetune_run", "table1"},
    }[stage]
    assert counts[stage] == 1
    assert not later & set(counts), f"target {stage} pulls in {later & set(counts)}"


def test_configfile_word_after_option_selects_the_stage(repo, tmp_path):
    # `snakemake --configfile config/demo.yaml vocab` hands `vocab` over as a config file.
    counts = plan([repo / "config/demo.yaml", repo / "vocab"], tmp_path, targets=())
    assert "build_vocab" in counts and "pretrain_model" not in counts


def test_one_pair_reduces_every_per_pair_stage(repo, tmp_path):
    counts = plan([repo / "config/demo.yaml"], tmp_path, config={"pairs": ["en-fr"]})
    assert counts["pretrain_model"] == len(load(repo, "demo.yaml")["variants"])
    assert counts["tokenize_parallel"] == 2
