"""The plans of both studies: job counts per rule, computed here from the config itself."""

from itertools import product

import pytest
import yaml

from tests.dag import plan, rule_inputs, rule_settings, rules_settings
from xling import study


def grid_size(grid):
    size = 1
    for values in grid.values():
        size *= len(values)
    return size


# One job per grid point, as the paper study plans them (the demo runs one job per model).
PER_GRID_POINT = {"finetune": {"runs_per_job": 1}}


def load(repo, name):
    """The config as the workflow sees it: validated, its `paper` rows expanded."""
    return study.load(repo / "config" / name, repo / "config" / "schema.yaml")


def section5_models(config):
    """Wu section 5's bilingual (pair, variant) models and the languages of its monolingual ones,
    read from the config here, independently of the workflow's own planning."""
    section = config.get("monolingual")
    if not section:
        return set(), set(), None
    prime = section["english_prime"]["lang"]
    bilingual = {(pair, section["bilingual_variant"]) for pair in section["pairs"]}
    bilingual.add((f"en-{prime}", section["english_prime_variant"]))
    return bilingual, set(section["languages"]), prime


def expected_counts(config):
    pairs = config["pairs"]
    chosen = config.get("select", {})
    variants = {v: s for v, s in config["variants"].items() if v in chosen.get("variants", [v])}
    tasks = {t: s for t, s in config["tasks"].items() if t in chosen.get("tasks", [t])}
    s5_bilingual, s5_languages, prime = section5_models(config)
    models = set(product(pairs, variants)) | s5_bilingual
    text_of = {prime: "en"} if prime else {}  # en' models read English
    corpora = {("wiki", lang) for lang in s5_languages}
    for pair, variant in models:
        source, target = pair.split("-")
        source_domain, target_domain = config["variants"][variant]["domains"].split("-")
        corpora |= {(source_domain, source), (target_domain, text_of.get(target, target))}
    pair_languages = {lang for pair, _ in models for lang in pair.split("-")}
    vocabularies = {
        (p, config["variants"][v]["domains"], config["variants"][v]["vocab"]) for p, v in models
    }
    vocabularies |= {
        (p, "wiki-wiki", scheme) for p in pairs for scheme in config["vocab"]["schemes"]
    }
    cka_variants = [v for v in config["analysis"]["cka"]["variants"] if v in variants]
    shards = config["preprocess"].get("shards", 1)
    counts = {
        "shard_corpus": len(corpora),
        "tokenize_shard": len(corpora) * shards,
        "split_corpus": len(corpora),
        "tokenize_parallel": len(pair_languages),
        "build_vocab": len(vocabularies),
        "pretrain_model": len(models),
        **finetune_counts(config, len(pairs) * len(variants), tasks),
        "select_finetune": len(pairs) * len(variants) * len(tasks),
        "cka": len(pairs) * len(cka_variants),
        "table1": 1,
        "anchors": 1,
        "figure_cka": 1,
        "wu_figure3": 1,
        "claims": 1,
        "all": 1,
    }
    if prime:
        s5_pairs = config["monolingual"]["pairs"]
        analysis = config["analysis"]
        transfer = analysis["contextual_transfer"]
        word_pairs = analysis["word_alignment"].get("pairs", s5_pairs)
        counts |= {
            "build_monolingual_vocab": len(s5_languages),
            "pretrain_monolingual": len(s5_languages) + 1,
            "contextual_word_vectors": len(word_languages(config)),
            "word_alignment": len(word_pairs),
            "tokenize_tatoeba": 2 * len(s5_pairs),
            "sentence_retrieval": len(s5_pairs),
            "similarity": len(s5_pairs) + 1,
            "contextual_mappings": 2 * len(transfer["pairs"]),
            "contextual_transfer": 2 * len(transfer["pairs"]) * len(transfer["tasks"]),
            "wu_figure": 3,
            "wu_transfer_figures": 1,
            "wu_cka_retrieval_correlation": 1,
            # Figures 4, 6 (with the correlation), 5 and 8 on resamples of their test sets
            "wu_figure4_resamples": 1,
            "wu_sentence_resamples": 1,
            "wu_transfer_resamples": 1,
        }
        if analysis.get("word_aligner", "eflomal") == "eflomal":  # gold: the toy world's own
            counts["align_parallel"] = len(transfer["pairs"])
    if config.get("muller"):
        counts |= muller_counts(config)
    return counts, corpora, pair_languages


def finetune_rule(config):
    """The rule that fine-tunes Table 1's models under ``finetune.runs_per_job``."""
    return {1: "finetune_run", "model": "finetune_model"}[config["finetune"]["runs_per_job"]]


def finetune_counts(config, models, tasks):
    """One job per grid point, or one per model."""
    if finetune_rule(config) == "finetune_model":
        return {"finetune_model": models}
    return {"finetune_run": models * sum(grid_size(s["grid"]) for s in tasks.values())}


def muller_counts(config):
    """Jobs of Muller et al.'s stage: one encoding per setup that trains runs (not one that reads
    another's), its jobs, one of the rest."""
    from xling.study.plan.muller import plan as muller_plan

    mplan = muller_plan(config)
    counts = {"muller_encode": sum(not setup.runs_of for setup in mplan.setups)}
    counts["muller_finetune"] = sum(len(mplan.jobs(setup)) for setup in mplan.setups)
    for rule in ("parallel", "similarity_pretrained", "collect", "resamples", "tables", "figures"):
        counts[f"muller_{rule}"] = 1
    if config["muller"]["model"]["source"] == "pretrain":
        counts |= {"build_multilingual_vocab": 1, "pretrain_multilingual": 1}
    return counts


def word_languages(config):
    """The languages whose word vectors Figure 4 reads: English and its pairs' targets."""
    pairs = config["analysis"]["word_alignment"].get("pairs", config["monolingual"]["pairs"])
    return {"en"} | {pair.split("-")[1] for pair in pairs}


def test_demo_plan_matches_the_config(repo, tmp_path):
    config = load(repo, "demo.yaml")
    counts = plan([repo / "config/demo.yaml"], tmp_path)
    expected, _, _ = expected_counts(config)
    expected["toyworld"] = 1
    expected["train_fasttext"] = len(word_languages(config))
    assert dict(counts) == expected


def test_figure_4_pairs_leave_a_pair_out_of_word_translation_only(repo, tmp_path):
    """analysis.word_alignment.pairs leaves en-zh out of Figure 4 only: its monolingual model,
    Tatoeba retrieval, CKA and contextual transfer stay planned."""
    config = load(repo, "demo.yaml")
    assert "en-zh" in config["monolingual"]["pairs"]
    overlay = tmp_path / "figure4.yaml"
    overlay.write_text("analysis: {word_alignment: {pairs: [en-fr, en-de, en-ru]}}\n")
    counts = plan([repo / "config/demo.yaml", overlay], tmp_path)
    assert counts["word_alignment"] == len(config["monolingual"]["pairs"]) - 1
    assert counts["sentence_retrieval"] == len(config["monolingual"]["pairs"])


def test_the_demo_segments_chinese_with_the_toy_worlds_dictionary(repo, tmp_path):
    """Every job that segments Chinese (or stores how in a tokenizer) reads the dictionary the
    toy world writes; no other language's job does."""
    dictionary = "results/demo/data/segmenter/zh.dict.txt"
    assert "{data}/segmenter/zh.dict.txt" in (repo / "config/demo.yaml").read_text()
    targets = (
        "results/demo/preprocess/wiki/zh.train.txt",
        "results/demo/preprocess/wiki/fr.train.txt",
        "results/demo/preprocess/tatoeba/en-zh.zh.txt",
        "results/demo/vocab/mono/zh",
        "results/demo/vocab/en-zh/wiki-wiki/joint",
        "results/demo/vocab/en-fr/wiki-wiki/joint",
    )
    configs = [repo / "config/demo.yaml"]
    for rule in ("tokenize_shard", "tokenize_tatoeba", "build_vocab", "build_monolingual_vocab"):
        jobs = rule_inputs(configs, tmp_path, rule, targets)
        assert jobs, rule
        for inputs in jobs:
            reads_chinese = any("zh" in path for path in inputs if path != dictionary)
            assert (dictionary in inputs) == reads_chinese, (rule, inputs)
    (params, _), *_ = rule_settings(configs, tmp_path, "build_monolingual_vocab", targets[3:4])
    assert params["pipelines"]["zh"]["user_dictionary"] == dictionary


def test_paper_plan_matches_the_config_and_includes_downloads(repo, tmp_path):
    config = load(repo, "config.yaml")
    counts = plan([repo / "config/config.yaml"], tmp_path)
    expected, corpora, _ = expected_counts(config)
    wiki_languages = {lang for domain, lang in corpora if domain == "wiki"}
    cc_languages = {lang for domain, lang in corpora if domain == "cc"}

    def imports(task):
        datasets = config["tasks"][task]["datasets"]
        return {
            (lang, datasets.get("pairs", {}).get(pair, {}).get(lang, datasets["default"]))
            for pair in config["pairs"]
            for lang in pair.split("-")
        }

    s5_pairs = config["monolingual"]["pairs"]
    # the train dictionaries of the codeswitch scheme; train and test of section 5's pairs
    muse = {(pair, "train") for pair in config["pairs"]}
    muse |= {(pair, split) for pair in s5_pairs for split in ("train", "test")}
    expected.update(
        download=3,  # XNLI-1.0, XNLI-MT-1.0, UD v2.3
        download_wikipedia=len(wiki_languages),
        unpack=3,
        extract_wikipedia=len(wiki_languages),
        download_commoncrawl=len(cc_languages),
        sample_commoncrawl=len(cc_languages),
        download_muse=len(muse),
        download_tatoeba=2 * len(s5_pairs),
        download_fasttext=len(word_languages(config)),
        keep_fasttext_vocabulary=len(word_languages(config)),
        download_transformers_file=len(config["data"]["transformers"]["files"]),  # mBERT
        import_paraphrases=1,
        import_xnli=1,
        xnli_parallel=1,
        import_ner=len(imports("ner")),
        import_ud=len(imports("parsing")),
    )
    # Muller et al.: their treebanks from UD v2.4 (test-only ones through import_ud_test), and
    # WikiANN / CoNLL-2003 in their languages
    ud, ner = muller_imports(config)
    ud_wu = {(dataset, lang) for lang, dataset in imports("parsing")}
    test_only = {name for name, d in config["data"]["ud"].items() if d["splits"] == ["test"]}
    expected["import_ud"] = len({key for key in ud | ud_wu if key[0] not in test_only})
    expected["import_ud_test"] = len({key for key in ud if key[0] in test_only})
    expected["import_ner"] = len(ner | {(dataset, lang) for lang, dataset in imports("ner")})
    expected["download"] += 1  # UD v2.4
    expected["unpack"] += 1
    assert dict(counts) == expected


def muller_imports(config):
    """(dataset, lang) of every UD and NER file Muller et al.'s setups read."""
    from xling.study.plan.muller import plan as muller_plan
    from xling.study.plan.muller import similarity_languages

    ud, ner = set(), set()
    for setup in muller_plan(config).setups:
        files = ner if setup.task == "ner" else ud
        files.add((setup.train, setup.source))
        files |= {(evaluation.dataset, evaluation.lang) for evaluation in setup.evaluations}
    parallel = config["muller"]["similarity"]["parallel"]
    if isinstance(parallel, dict):
        ud |= {(parallel["ud"], lang) for lang in similarity_languages(config["muller"])}
    return ud, ner


@pytest.mark.parametrize("stage", ["data", "preprocess", "vocab", "pretrain", "analysis"])
def test_each_stage_is_a_target_that_stops_at_its_stage(repo, tmp_path, stage):
    counts = plan([repo / "config/demo.yaml"], tmp_path, targets=(stage,))
    finetune = {"finetune_run", "finetune_model"}
    later = {
        "data": {"split_corpus", "build_vocab", "pretrain_model", "table1"} | finetune,
        "preprocess": {"build_vocab", "pretrain_model", "table1"} | finetune,
        "vocab": {"pretrain_model", "table1"} | finetune,
        "pretrain": {"cka", "table1"} | finetune,
        "analysis": {"table1"} | finetune,
    }[stage]
    assert counts[stage] == 1
    assert not later & set(counts), f"target {stage} pulls in {later & set(counts)}"


def test_one_pair_reduces_every_per_pair_stage(repo, tmp_path):
    counts = plan([repo / "config/demo.yaml"], tmp_path, config={"pairs": ["en-fr"]})
    config = load(repo, "demo.yaml")
    config["pairs"] = ["en-fr"]
    expected, _, _ = expected_counts(config)
    assert counts["pretrain_model"] == expected["pretrain_model"]
    rule = finetune_rule(config)
    assert counts[rule] == expected[rule]
    assert counts["select_finetune"] == len(config["variants"]) * len(config["tasks"])


def test_selection_builds_only_the_chosen_rows_and_tasks(repo, tmp_path):
    reduced = yaml.safe_load((repo / "tests/config/e2e.yaml").read_text())
    files = [repo / "config/demo.yaml", repo / "tests/config/e2e.yaml"]
    counts = plan(files, tmp_path, config=PER_GRID_POINT)
    # the selected row, and the en-en' model of the reduced section 5
    assert counts["pretrain_model"] == 2 and counts["select_finetune"] == 1
    assert counts["finetune_run"] == grid_size(reduced["tasks"]["ner"]["grid"])


def test_a_configured_pos_task_is_fine_tuned_but_kept_out_of_table1(repo, tmp_path):
    """POS (Muller et al. 2021) is not one of Table 1's tasks: `all` and `finetune` fine-tune it,
    Table 1 never reads it."""
    reduced = yaml.safe_load((repo / "tests/config/e2e.yaml").read_text())
    pos = {"datasets": {"default": "toy_wiki"}, "epochs": 1, "max_length": 64, "best_k": 1}
    pos["grid"] = {"batch_size": [16], "lr": [0.001, 0.002]}
    extra = {"tasks": {"pos": pos}, "select": {"variants": ["default"], "tasks": ["ner", "pos"]}}
    extra |= PER_GRID_POINT
    files = [repo / "config/demo.yaml", repo / "tests/config/e2e.yaml"]
    counts = plan(files, tmp_path, config=extra)
    assert counts["select_finetune"] == 2 and counts["table1"] == 1
    assert counts["finetune_run"] == grid_size(reduced["tasks"]["ner"]["grid"]) + 2
    (table1,) = rule_inputs(files, tmp_path, "table1", config=extra)
    assert [path for path in table1 if "/finetune/" in path] == [
        "results/demo/finetune/en-fr/default/ner/selected.json"
    ]
    assert plan(files, tmp_path, targets=("finetune",), config=extra)["select_finetune"] == 2


def test_the_demo_fine_tunes_each_model_in_one_job_with_every_task_and_grid_point(repo, tmp_path):
    reduced = yaml.safe_load((repo / "tests/config/e2e.yaml").read_text())
    pos = {"datasets": {"default": "toy_wiki"}, "epochs": 1, "max_length": 64, "best_k": 1}
    pos["grid"] = {"batch_size": [16], "lr": [0.001, 0.002, 0.003]}
    extra = {"tasks": {"pos": pos}, "select": {"variants": ["default"], "tasks": ["ner", "pos"]}}
    files = [repo / "config/demo.yaml", repo / "tests/config/e2e.yaml"]
    counts = plan(files, tmp_path, config=extra)
    assert counts["finetune_model"] == 1 and "finetune_run" not in counts
    assert counts["select_finetune"] == 2
    jobs = rules_settings(files, tmp_path, ["finetune_model", "select_finetune"], config=extra)
    ((params, _),) = jobs["finetune_model"]
    runs = params["runs"]
    assert [run["task"] for run in runs] == ["ner"] * grid_size(reduced["tasks"]["ner"]["grid"]) + [
        "pos"
    ] * 3
    assert {run["hp"]["lr"] for run in runs if run["task"] == "pos"} == {0.001, 0.002, 0.003}
    for run in runs:
        assert run["out_dir"].startswith(f"results/demo/finetune/en-fr/default/{run['task']}/")
        assert set(run["test"]) == {"en", "fr"} and set(run["dev"]) == {"en"}
    # select_finetune reads the grid points' metrics that the one job wrote
    for params, _ in jobs["select_finetune"]:
        assert len(params["metrics"]) in (grid_size(reduced["tasks"]["ner"]["grid"]), 3)
    (inputs,) = rule_inputs(files, tmp_path, "select_finetune", config=extra)[:1]
    assert inputs == ["results/demo/finetune/en-fr/default/runs.json"]


def test_paper_plan_of_muller_data_finds_the_import_jobs(repo, tmp_path):
    # PUD (test only) and English-EWT (train, dev, test) from the one UD v2.4 release; WikiANN
    # in a language only Muller et al. read.
    targets = (
        "results/paper/data/ud/pud/ar/test.conllu",
        "results/paper/data/ud/ewt/en/train.conllu",
        "results/paper/data/ner/wikiann/ja/test.txt",
    )
    counts = plan([repo / "config/config.yaml"], tmp_path, targets=targets)
    assert dict(counts) == {
        "download": 1,  # ud24
        "unpack": 1,
        "import_ud_test": 1,
        "import_ud": 1,
        "import_ner": 1,
    }


def test_paper_plan_of_an_unconfigured_ud_language_names_the_key(repo, tmp_path):
    from snakemake.exceptions import InputFunctionException

    with pytest.raises(InputFunctionException, match=r"data\.ud\.pud\.treebanks' has no 'sl'"):
        plan(
            [repo / "config/config.yaml"],
            tmp_path,
            targets=("results/paper/data/ud/pud/sl/test.conllu",),
        )


def test_one_table_plans_only_what_it_needs(repo, tmp_path):
    """Table 1 alone: its fine-tuning and what that needs; no section 5, CKA, figures or claims."""
    config = load(repo, "demo.yaml")
    counts = plan([repo / "config/demo.yaml"], tmp_path, targets=("results/demo/tables/table1.md",))
    expected, _, _ = expected_counts({**config, "monolingual": None})
    finetune = finetune_rule(config)
    needed = {
        "toyworld", "shard_corpus", "tokenize_shard", "split_corpus", "build_vocab",
        "pretrain_model", finetune, "select_finetune", "table1",
    }  # fmt: skip
    assert set(counts) == needed
    assert counts["table1"] == 1
    for rule in ("pretrain_model", finetune, "select_finetune"):
        assert counts[rule] == expected[rule], rule
    # the vocabularies of Table 1's models only (anchors.csv compares every scheme: not needed)
    models = {(pair, v) for pair in config["pairs"] for v in config["variants"]}
    vocabularies = {
        (p, config["variants"][v]["domains"], config["variants"][v]["vocab"]) for p, v in models
    }
    assert counts["build_vocab"] == len(vocabularies)


def test_muller_runs_one_job_per_setup_in_the_demo_and_one_per_run_in_the_paper(repo, tmp_path):
    from xling.study.plan.muller import plan as muller_plan

    demo = muller_plan(study.load(repo / "config/demo.yaml"))
    counts = plan([repo / "config/demo.yaml"], tmp_path, targets=("muller",))
    # Table 2 trains on the demo's transfer set: its domain setups read the transfer runs
    training = [s for s in demo.setups if not s.runs_of]
    assert {s.experiment for s in training} == {"transfer"}
    assert counts["muller_finetune"] == counts["muller_encode"] == len(training) == 6
    assert counts["pretrain_multilingual"] == counts["muller_collect"] == 1
    assert counts["muller_tables"] == counts["muller_figures"] == 1
    assert "pretrain_model" not in counts  # the multilingual model alone, no Table 1 model
    paper = muller_plan(study.load(repo / "config/config.yaml"))
    counts = plan([repo / "config/config.yaml"], tmp_path, targets=("muller",))
    training = [s for s in paper.setups if not s.runs_of]  # all but Table 2's NER (WikiAnn)
    assert [s.key for s in paper.setups if s.runs_of] == ["domain/ner/en"]
    assert counts["muller_finetune"] == sum(len(paper.runs(s)) for s in training) == 3210
    assert "pretrain_multilingual" not in counts  # mBERT is loaded, not trained


def test_the_paper_studys_mbert_is_downloaded_once_and_read_from_its_directory(repo, tmp_path):
    """Compute nodes may have no internet: the hub id's files are local jobs, and every Muller
    job that loads the model takes them as inputs; a model directory is read where it is."""
    paper = [repo / "config/config.yaml"]
    config = load(repo, "config.yaml")
    folder = "results/paper/raw/transformers/bert-base-multilingual-cased"
    files = [f"{folder}/{name}" for name in config["data"]["transformers"]["files"]]
    for rule in ("muller_encode", "muller_parallel", "muller_similarity_pretrained"):
        inputs = rule_inputs(paper, tmp_path / "hub", rule, targets=("muller",))
        assert inputs and all(set(files) <= set(job) for job in inputs), rule
    (params, _), *_ = rule_settings(paper, tmp_path / "hub", "muller_parallel", ("muller",))
    assert params["model"] == folder
    saved = tmp_path / "mbert"
    saved.mkdir()
    override = {"muller": {**config["muller"], "model": {**config["muller"]["model"]}}}
    override["muller"]["model"]["name"] = str(saved)
    counts = plan(paper, tmp_path / "local", targets=("muller",), config=override)
    assert "download_transformers_file" not in counts
    inputs = rule_inputs(paper, tmp_path / "local", "muller_parallel", ("muller",), override)
    assert str(saved) in inputs[0]


def test_a_repeated_key_in_a_config_file_stops_the_plan_naming_the_line(repo, tmp_path):
    """Snakemake's reader keeps the last of two equal keys; the workflow refuses the file."""
    from xling.study import ConfigError

    configfile = tmp_path / "demo.yaml"
    configfile.write_text((repo / "config/demo.yaml").read_text() + "study: demo\n")
    with pytest.raises(ConfigError, match=rf"{configfile}, line \d+.*'study' is repeated"):
        plan([configfile], tmp_path)


def test_a_nested_command_line_override_keeps_its_number(repo, tmp_path):
    """`--config 'report={"resamples": 0}'`: Snakemake parses the nested value with YAML's
    BaseLoader (every scalar a string); the config validation reads the number back."""
    from snakemake.cli import parse_config

    extra = parse_config(['report={"resamples": 0}', 'pairs=["en-fr"]'])
    assert extra["report"] == {"resamples": "0"}  # what Snakemake hands over
    ((params, _),) = rule_settings([repo / "config/demo.yaml"], tmp_path, "table1", config=extra)
    assert params["resamples"] == 0
