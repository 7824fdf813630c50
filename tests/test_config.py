"""Config validation: both shipped configs pass; bad ones fail with a message naming the key."""

import copy

import pytest

from xling import study
from xling.papers.wu2020 import TABLE1_ROWS
from xling.study import keys

# A row that is not the paper's (the README's example).
NEW_ROW = {
    "domains": "wiki-wiki",
    "vocab": "joint",
    "sep_embeddings": False,
    "sep_layers": 2,
    "label": "Sep L1-2",
}


@pytest.fixture(params=["config/demo.yaml", "config/config.yaml"])
def shipped(request, repo):
    return study.load_yaml(repo / request.param)


def test_shipped_configs_validate(shipped, repo):
    validated = study.validate(shipped, repo / "config/schema.yaml")
    assert validated["study"] in {"demo", "paper"}
    assert validated["preprocess"]["shards"] >= 1  # default filled in when absent


def _error(config, repo):
    with pytest.raises(study.ConfigError) as info:
        study.validate(config, repo / "config/schema.yaml")
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
    bad["variants"]["sep_l1_2"] = dict(NEW_ROW, domains="wiki")
    message = _error(bad, repo)
    assert "variants.sep_l1_2.domains" in message and "'wiki-cc'" in message


def test_unknown_key_is_reported_with_known_keys(shipped, repo):
    bad = copy.deepcopy(shipped)
    bad["model"]["layer"] = 8
    message = _error(bad, repo)
    assert "model" in message and "'layer'" in message and "layers" in message


def test_a_user_dictionary_needs_a_segmenter_that_reads_it(shipped, repo):
    bad = copy.deepcopy(shipped)
    bad["languages"]["fr"] = {"segmenter": "moses", "user_dictionary": "fr.dict.txt"}
    message = _error(bad, repo)
    assert "languages.fr.segmenter" in message and "'jieba'" in message


def test_variant_with_unconfigured_scheme(shipped, repo):
    bad = copy.deepcopy(shipped)
    bad["variants"]["extra"] = dict(NEW_ROW, vocab="nonexistent")
    assert "variants.extra.vocab" in _error(bad, repo)


def test_shipped_configs_train_exactly_the_papers_ten_rows(shipped, repo):
    validated = study.validate(shipped, repo / "config/schema.yaml")
    assert validated["variants"] == {name: row.settings() for name, row in TABLE1_ROWS.items()}
    assert list(validated["variants"]) == list(TABLE1_ROWS)


def test_paper_expands_to_the_papers_row(shipped, repo):
    config = copy.deepcopy(shipped)
    config["variants"] = {"sep_emb_l1_3": "paper"}
    config["analysis"]["cka"]["variants"] = []
    config.pop("select", None)
    config.pop("monolingual", None)  # section 5 names the Default and Sep Emb rows
    validated = study.validate(config, repo / "config/schema.yaml")
    assert validated["variants"] == {
        "sep_emb_l1_3": {
            "domains": "wiki-wiki",
            "vocab": "per_language",
            "sep_embeddings": True,
            "sep_layers": 3,
        }
    }


def test_full_mapping_under_a_paper_name_must_be_the_papers_row(shipped, repo):
    config = copy.deepcopy(shipped)
    config["variants"]["sep_l1_3"] = dict(TABLE1_ROWS["sep_l1_3"].settings(), label="Ours")
    validated = study.validate(config, repo / "config/schema.yaml")
    assert validated["variants"]["sep_l1_3"]["label"] == "Ours"  # a label only renames the row
    config["variants"]["sep_l1_3"]["sep_layers"] = 2
    message = _error(config, repo)
    assert "variants.sep_l1_3.sep_layers" in message
    assert "sep_layers=3" in message  # the paper's value
    assert "'sep_l1_3: paper'" in message and "another name" in message


def test_new_row_is_a_full_mapping(shipped, repo):
    config = copy.deepcopy(shipped)
    config["variants"]["sep_l1_2"] = NEW_ROW
    validated = study.validate(config, repo / "config/schema.yaml")
    assert validated["variants"]["sep_l1_2"] == NEW_ROW
    config["variants"]["sep_l1_2"] = "paper"
    message = _error(config, repo)
    assert "variants.sep_l1_2" in message and "sep_l1_3" in message  # lists the paper's rows
    config["variants"]["sep_l1_2"] = "papers"
    assert "variants.sep_l1_2" in _error(config, repo)


def test_pair_with_itself_and_duplicates(shipped, repo):
    bad = copy.deepcopy(shipped)
    bad["pairs"] = ["en-en"]
    assert "with itself" in _error(bad, repo)
    bad["pairs"] = ["en-fr", "en-fr"]
    assert "twice" in _error(bad, repo)


def test_task_dataset_lookup(repo):
    config = study.load(repo / "config/config.yaml", repo / "config/schema.yaml")
    assert keys.task_dataset(config, "ner", "en-zh", "zh") == "levow2006"
    assert keys.task_dataset(config, "ner", "en-zh", "en") == "conll2003"
    assert keys.task_dataset(config, "ner", "en-fr", "en") == "wikiann"


def test_a_pos_task_section_validates_like_ner(shipped, repo):
    config = copy.deepcopy(shipped)
    pos = dict(config["tasks"]["parsing"])
    for key in ("arc_dim", "label_dim", "exclude_punct"):
        pos.pop(key, None)
    config["tasks"]["pos"] = pos
    config["select"] = {"tasks": ["pos"]}
    validated = study.validate(config, repo / "config/schema.yaml")
    assert keys.selected(validated, "tasks") == ["pos"]
    assert "pos" not in shipped["tasks"]  # the shipped configs are Wu's Table 1 tasks only
    bad = copy.deepcopy(config)
    bad["tasks"]["pos"]["arc_dim"] = 64  # a parsing option
    assert "tasks.pos" in _error(bad, repo)
    bad = copy.deepcopy(config)
    del bad["tasks"]["pos"]["datasets"]  # POS reads treebanks: which ones must be said
    assert "tasks.pos" in _error(bad, repo)


@pytest.fixture
def paper(repo):
    return study.load_yaml(repo / "config/config.yaml")


def test_ud_datasets_fill_their_splits(paper, repo):
    ud = study.validate(paper, repo / "config/schema.yaml")["data"]["ud"]
    assert ud["ud23"]["splits"] == ["train", "dev", "test"]  # the default
    assert ud["pud"]["splits"] == ["test"]
    assert keys.ud_splits({"splits": ["test", "train"]}) == ["train", "test"]


def test_ud_dataset_with_an_unknown_download_names_the_key(paper, repo):
    paper["data"]["ud"]["pud"]["download"] = "ud99"
    message = _error(paper, repo)
    assert "'data.ud.pud.download'" in message and "'ud99'" in message and "ud24" in message


def test_ud_treebank_of_an_unconfigured_language_names_the_key(paper, repo):
    paper["data"]["ud"]["pud"]["treebanks"]["ko"] = "UD_Korean-PUD"
    message = _error(paper, repo)
    assert "'data.ud.pud.treebanks'" in message and "'ko'" in message and "'languages'" in message


def test_parsing_language_without_a_treebank_names_the_keys(paper, repo):
    del paper["data"]["ud"]["ud23"]["treebanks"]["zh"]
    message = _error(paper, repo)
    assert "'tasks.parsing.datasets.default' (pair en-zh, zh)" in message
    assert "'data.ud.ud23.treebanks' has no 'zh'" in message


def test_parsing_dataset_missing_from_data_ud_or_its_splits(paper, repo):
    bad = copy.deepcopy(paper)
    bad["tasks"]["parsing"]["datasets"]["default"] = "ud22"
    message = _error(bad, repo)
    assert "'tasks.parsing.datasets.default'" in message and "'ud22'" in message
    assert "pud" in message
    # a test-only dataset can be a target's, not a source's (fine-tuning reads train and dev)
    bad = copy.deepcopy(paper)
    bad["tasks"]["parsing"]["datasets"]["pairs"] = {"en-fr": {"en": "pud", "fr": "pud"}}
    message = _error(bad, repo)
    assert "'tasks.parsing.datasets.pairs.en-fr.en' (pair en-fr, en)" in message
    assert "'data.ud.pud.splits'" in message
    good = copy.deepcopy(paper)
    good["tasks"]["parsing"]["datasets"]["pairs"] = {"en-fr": {"fr": "pud"}}
    study.validate(good, repo / "config/schema.yaml")


def test_manual_ud_dataset_has_languages_and_no_download(paper, repo):
    bad = copy.deepcopy(paper)
    del bad["data"]["ud"]["lexnorm"]["languages"]
    assert "'data.ud.lexnorm'" in _error(bad, repo) and "languages" in _error(bad, repo)
    bad = copy.deepcopy(paper)
    bad["data"]["ud"]["lexnorm"]["download"] = "ud24"
    assert "'data.ud.lexnorm.download'" in _error(bad, repo)
    bad = copy.deepcopy(paper)
    del bad["data"]["ud"]["ewt"]["treebanks"]
    assert "'data.ud.ewt'" in _error(bad, repo) and "treebanks" in _error(bad, repo)


def test_every_muller_language_is_configured(paper):
    muller = [  # Muller et al. A.1.2: the sources en, ru, ar and fourteen targets
        "en", "ru", "ar", "zh", "cs", "fi", "fr", "id", "it",
        "ja", "de", "hi", "pl", "pt", "sl", "es", "tr",
    ]  # fmt: skip
    assert set(muller) <= set(paper["languages"])
    assert paper["languages"]["zh"]["segmenter"] == "jieba"
    assert set(paper["data"]["ud"]["pud"]["treebanks"]) == set(muller) - {"sl"}  # no Slovenian PUD


def _with(config, path, value):
    bad = copy.deepcopy(config)
    *parents, last = path.split(".")
    node = bad
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    return bad


@pytest.mark.parametrize(
    ("path", "value", "key", "fix"),
    [
        ("model.heads", 5, "'model'", "not a multiple of heads 5"),
        ("pretrain.seq_len", 4096, "'pretrain.seq_len'", "shorten seq_len"),
        ("pretrain.warmup_steps", 10_000_000, "'pretrain.warmup_steps'", "lower warmup_steps"),
        ("tasks.ner.max_length", 4096, "'tasks.ner.max_length'", "lower it"),
        ("analysis.cka.variants", ["no_such_row"], "'analysis.cka.variants'", "trained:"),
        ("seed", -1, "'seed'", "minimum"),
        ("seed", 2**32, "'seed'", "maximum"),
        ("pairs", ["fr-en"], "'pairs' (item 0, 'fr-en')", "write it as 'en-fr'"),
        ("data.muse.url", "https://x/{src}-{tgt}.{split}.txt", "'data.muse.url'", "{split}"),
        ("data.fasttext.url", "https://x/wiki.{lang.vec", "'data.fasttext.url'", "not a valid"),
    ],
)
def test_settings_that_would_fail_inside_a_job_are_rejected_up_front(
    shipped, repo, path, value, key, fix
):
    message = _error(_with(shipped, path, value), repo)
    assert f"config key {key}" in message and fix in message


def test_rejected_architectures_are_those_the_model_refuses(shipped):
    """The up-front check is no weaker than the model's own (which would fail hours later)."""
    from xling.model.config import EncoderConfig

    with pytest.raises(ValueError, match=r"multiple of model\.heads"):
        EncoderConfig(vocab_size=10, languages=["en"], dim=64, heads=5)
    with pytest.raises(study.ConfigError, match=r"muller\.model\.architecture"):
        bad = _with(shipped, "muller.model.architecture", {"heads": 7})
        study.validate(bad)


def test_a_cka_variant_left_out_by_select_is_not_trained(shipped, repo):
    bad = _with(shipped, "select", {"variants": ["no_anchors"]})
    bad["analysis"]["cka"]["variants"] = ["default"]
    assert "'default' is not a trained variant" in _error(bad, repo)


def test_gold_alignments_exist_only_in_the_toy_world(paper, repo):
    assert (
        study.validate(copy.deepcopy(paper), repo / "config/schema.yaml")["analysis"][
            "word_aligner"
        ]
        == "eflomal"
    )  # the default
    paper["analysis"]["word_aligner"] = "gold"
    message = _error(paper, repo)
    assert "analysis.word_aligner" in message and "eflomal" in message


def test_numbers_and_booleans_spelt_as_strings_are_read_as_values(shipped, repo):
    # Snakemake hands nested --config values over as strings ('report={"resamples": 0}' -> "0")
    spelt = copy.deepcopy(shipped)
    spelt["report"] = {"resamples": "0"}
    spelt["pretrain"]["lr"] = "1e-3"  # YAML 1.1 alone would keep this a string
    spelt["model"]["language_embeddings"] = "false"
    validated = study.validate(spelt, repo / "config/schema.yaml")
    assert validated["report"]["resamples"] == 0
    assert validated["pretrain"]["lr"] == pytest.approx(0.001)
    assert validated["model"]["language_embeddings"] is False
    # a string that spells no value of the wanted type stays an error naming the key
    for key, value in (("resamples", "many"), ("resamples", "2.5")):
        bad = copy.deepcopy(shipped)
        bad["report"] = {key: value}
        assert "'report.resamples'" in _error(bad, repo) and "integer" in _error(bad, repo)


def test_a_pin_keyed_by_a_name_no_download_has_is_rejected(paper):
    hex64 = "ab" * 32
    good = {"zh-Hans.txt.xz": hex64, "fr.txt.xz": hex64}
    paper["data"]["commoncrawl"]["sha256"] = good
    paper["data"]["muse"]["sha256"] = {"en-fr.5000-6500.txt": hex64}
    paper["data"]["tatoeba"]["sha256"] = {"tatoeba.fra-eng.eng": hex64}
    paper["data"]["fasttext"]["sha256"] = {"wiki.zh.vec": hex64}
    paper["data"]["transformers"]["sha256"] = {"model.safetensors": hex64}
    study.validate(copy.deepcopy(paper))
    wrong = copy.deepcopy(paper)
    wrong["data"]["transformers"]["sha256"] = {"pytorch_model.bin": hex64}  # not in its files
    with pytest.raises(study.ConfigError, match=r"data\.transformers\.sha256.*pytorch_model"):
        study.validate(wrong)
    paper["data"]["commoncrawl"]["sha256"] = {**good, "zh.txt.xz": hex64}  # CC-100 says zh-Hans
    with pytest.raises(study.ConfigError, match=r"data\.commoncrawl\.sha256.*\['zh\.txt\.xz'\]"):
        study.validate(paper)
