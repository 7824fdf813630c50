"""The cross-key checks of a study config (xling.study.checks): a config
that could not run fails validation with a message naming the key and the fix, not a job or the
building of the DAG."""

import copy
import subprocess
import sys

import pytest
import yaml

from xling import study
from xling.study.schema import validate_schema


@pytest.fixture(scope="module")
def configs():
    repo = study.DEFAULT_SCHEMA.parents[1]
    return {name: study.load_yaml(repo / f"config/{name}.yaml") for name in ("config", "demo")}


def _with(config, changes):
    changed = copy.deepcopy(config)
    for path, value in changes.items():
        *parents, last = path.split(".")
        node = changed
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return changed


def _error(config, changes) -> str:
    with pytest.raises(study.ConfigError) as info:
        study.validate(_with(config, changes))
    return str(info.value)


def _assert_names(message: str, *parts: str) -> None:
    for part in parts:
        assert part in message, (part, message)


@pytest.mark.parametrize(
    ("section", "url", "missing"),
    [
        ("wikipedia", "https://x/enwiki-20261101-pages-articles.xml.bz2", "{lang}"),
        ("commoncrawl", "https://x/fr.txt.xz", "{lang}"),
        ("muse", "https://x/{src}-{tgt}.txt", "{span}"),
        ("tatoeba", "https://x/tatoeba.{code}-eng", "{side}"),
        ("tatoeba", "https://x/tatoeba.fra-eng.{side}", "{code}"),
        ("fasttext", "https://x/wiki.vec", "{lang}"),
        ("transformers", "https://h/{name}/resolve/{revision}/model.bin", "{file}"),
        ("transformers", "https://h/bert/resolve/{revision}/{file}", "{name}"),
    ],
)
def test_a_url_template_without_a_field_its_downloads_need_is_rejected(
    configs, section, url, missing
):
    message = _error(configs["config"], {f"data.{section}.url": url})
    _assert_names(message, f"config key 'data.{section}.url'", f"has no {missing}", "same file")


@pytest.mark.parametrize("field", ["{}", "{0}"])
def test_a_url_template_with_a_positional_field_is_rejected(configs, field):
    message = _error(configs["config"], {"data.fasttext.url": f"https://x/wiki.{field}.vec"})
    _assert_names(message, "'data.fasttext.url'", f"positional field {field}", "{lang}")


def test_a_transformers_url_may_pin_its_revision_in_the_address(configs):
    url = "https://huggingface.co/{name}/resolve/0123abc/{file}"
    study.validate(_with(configs["config"], {"data.transformers.url": url}))


@pytest.mark.parametrize(
    ("architecture", "key"),
    [
        ({"layers": "x"}, "'muller.model.architecture.layers'"),
        ({"layers": 12, "dropout": 5}, "'muller.model.architecture.dropout'"),
        ({"layers": 12, "layer": 8}, "'muller.model.architecture'"),
    ],
)
def test_the_muller_architecture_has_the_types_of_model(configs, architecture, key):
    message = _error(configs["demo"], {"muller.model.architecture": architecture})
    assert f"config key {key}" in message


def test_the_muller_architecture_takes_the_keys_of_model_without_defaults():
    schema = study.load_yaml(study.DEFAULT_SCHEMA)["properties"]
    architecture = schema["muller"]["properties"]["model"]["properties"]["architecture"]
    assert set(architecture["properties"]) == set(schema["model"]["properties"])
    # a default would replace model's value of a key the architecture leaves out
    assert not any("default" in prop for prop in architecture["properties"].values())


def test_the_muller_model_positions_hold_its_streams_and_task_inputs(configs):
    demo = configs["demo"]
    message = _error(demo, {"muller.model.architecture": {"layers": 12, "max_positions": 16}})
    _assert_names(message, "'pretrain.seq_len'", "16 positions", "muller.model.architecture")
    message = _error(demo, {"muller.model.architecture": {"layers": 12, "max_positions": 32}})
    _assert_names(message, "'muller.tasks.parsing.max_length'", "32 positions", "lower it")
    message = _error(demo, {"muller.tasks.pos.max_length": 1000})
    _assert_names(message, "'muller.tasks.pos.max_length'", "128 positions", "model.max_positions")


def test_the_muller_pretraining_schedule_is_checked_with_what_it_inherits(configs):
    demo = configs["demo"]
    own = {"muller.model.pretrain": {"total_steps": 100, "warmup_steps": 200}}
    _assert_names(_error(demo, own), "'muller.model.pretrain.warmup_steps'", "lower warmup_steps")
    inherited = {"muller.model.pretrain": {"total_steps": 100}}  # warmup 200 from `pretrain`
    message = _error(demo, inherited)
    _assert_names(message, "'muller.model.pretrain.total_steps'", "pretrain.warmup_steps")


@pytest.mark.parametrize(
    ("seeds", "key", "problem"),
    [([1, 1], "'muller.seeds'", "non-unique"), ([-1], "'muller.seeds.0'", "minimum")],
)
def test_muller_seeds_are_distinct_and_not_negative(configs, seeds, key, problem):
    _assert_names(_error(configs["config"], {"muller.seeds": seeds}), key, problem)


@pytest.mark.parametrize(
    ("changes", "names"),
    [
        (
            {"muller.similarity.measure": "rbf"},
            ["'muller.similarity.measure'", "'rbf'", "'linear', 'rbf_windows'"],
        ),
        (
            {"muller.similarity.pooling": "strip"},
            ["'muller.similarity.pooling'", "'subwords', 'framed_twice'"],
        ),
        ({"muller.similarity.windows": 0}, ["'muller.similarity.windows'", "minimum"]),
        (
            {"muller.random_init_scheme": "xavier"},
            ["'muller.random_init_scheme'", "'bert', 'pytorch_default'"],
        ),
        (  # 1000 sentences: 250 windows of 4 at most
            {"muller.similarity.measure": "rbf_windows", "muller.similarity.windows": 251},
            ["'muller.similarity.windows'", "251 windows", "at most 250"],
        ),
    ],
)
def test_the_released_code_options_name_their_key(configs, changes, names):
    _assert_names(_error(configs["demo"], changes), *names)


def test_the_released_code_options_default_to_the_papers_reading(configs):
    demo = copy.deepcopy(configs["demo"])
    for key in ("measure", "windows", "pooling"):
        del demo["muller"]["similarity"][key]
    del demo["muller"]["random_init_scheme"]
    muller = study.validate(demo)["muller"]
    assert muller["random_init_scheme"] == "bert"
    similarity = {key: muller["similarity"][key] for key in ("measure", "windows", "pooling")}
    assert similarity == {"measure": "linear", "windows": 4, "pooling": "subwords"}
    for name in ("demo", "config"):  # both configs write the defaults out
        written = configs[name]["muller"]
        assert written["random_init_scheme"] == "bert"
        assert {key: written["similarity"][key] for key in similarity} == similarity
    released = {"muller.similarity.measure": "rbf_windows", "muller.similarity.windows": 250}
    study.validate(_with(configs["demo"], released | {"muller.similarity.pooling": "framed_twice"}))


def test_best_k_larger_than_the_grid_is_rejected(configs):
    message = _error(configs["config"], {"tasks.ner.best_k": 7})
    _assert_names(message, "'tasks.ner.best_k'", "has 6", "bs16_lr2e-05", "at most 6")
    _assert_names(_error(configs["demo"], {"tasks.parsing.best_k": 2}), "'tasks.parsing.best_k'")


def test_a_grid_is_expanded_as_the_workflow_expands_it(configs):
    paper = configs["config"]
    message = _error(paper, {"tasks.ner.grid.batch_size": [2.5]})
    _assert_names(message, "'tasks.ner.grid.batch_size.0'", "integer", "whole number")
    message = _error(paper, {"tasks.xnli.grid.batch_size": [4, 4.5]})
    assert "'tasks.xnli.grid.batch_size.1'" in message
    message = _error(paper, {"tasks.ner.grid.batch_size": [16, 16]})
    _assert_names(message, "'tasks.ner.grid'", "repeats a value")
    message = _error(paper, {"muller.tasks.pos.grid.batch_size": [8.5]})
    assert "'muller.tasks.pos.grid.batch_size.0'" in message


@pytest.mark.parametrize("key", ["pretrain.adam_betas", "muller.model.pretrain.adam_betas"])
def test_an_adam_beta_of_one_is_rejected(configs, key):
    message = _error(configs["demo"], {key: [0.9, 1.0]})
    _assert_names(message, f"'{key}.1'", "[0, 1)")


@pytest.mark.parametrize(
    ("study", "changes", "names"),
    [
        (
            "config",
            {"tasks.ner.datasets.default": "wikian"},
            ["'tasks.ner.datasets.default' (pair en-fr, en)", "'wikian'", "wikiann"],
        ),
        (
            "config",
            {"tasks.ner.datasets.pairs.en-zh": {"en": "conll2003", "zh": "wikiannn"}},
            ["'tasks.ner.datasets.pairs.en-zh.zh'", "'wikiannn'", "levow2006"],
        ),
        (
            "config",
            {"tasks.ner.datasets.pairs.en-zh": {"en": "conll2003", "hz": "levow2006"}},
            ["'tasks.ner.datasets.pairs.en-zh.hz'", "not a language of the pair en-zh", "en or zh"],
        ),
        (
            "config",
            {"tasks.ner.datasets.pairs.en-zh": {"en": "conll2003", "zh": "conll2003"}},
            ["'tasks.ner.datasets.pairs.en-zh.zh'", "'en' sentences only"],
        ),
        (
            "demo",
            {"tasks.ner.datasets.default": "wikiann"},
            ["'tasks.ner.datasets.default'", "toy world", "toy, toy_wiki, toy_cc"],
        ),
        (
            "config",
            {"muller.tasks.parsing.train": {"en": "ewt", "ru": "gsdd", "ar": "padt"}},
            ["'muller.tasks.parsing.train.ru' (ru)", "'gsdd'", "'data.ud'"],
        ),
        (
            "config",
            {"muller.tasks.parsing.test": {"default": "pudd", "sl": "ssj"}},
            ["'muller.tasks.parsing.test.default'", "'pudd'"],
        ),
        (
            "config",
            {"muller.tasks.parsing.test": {"default": "pud"}},  # UD has no Slovenian PUD
            ["'muller.tasks.parsing.test.default' (sl)", "'data.ud.pud.treebanks' has no 'sl'"],
        ),
        (
            "config",
            {"muller.tasks.ner.test": "wikian"},
            ["'muller.tasks.ner.test' (en)", "'wikian'"],
        ),
        (
            "config",
            {"muller.tasks.pos.train": {"default": "pud"}},  # PUD has a test split only
            ["'muller.tasks.pos.train.default' (en)", "train, dev split(s)"],
        ),
        (
            "config",
            {
                "muller.domain.tasks.parsing.evaluations.en_lit": {
                    "lang": "en",
                    "dataset": "linez",
                }
            },
            ["'muller.domain.tasks.parsing.evaluations.en_lit.dataset' (en)", "'linez'"],
        ),
        (
            "config",
            {"muller.domain.tasks.ner.train": "conll2003x"},
            ["'muller.domain.tasks.ner.train' (en)", "'conll2003x'"],
        ),
        (
            "config",
            {"muller.similarity.parallel": {"ud": "pudd"}},
            ["'muller.similarity.parallel.ud' (en)", "'pudd'"],
        ),
        (
            "config",
            {"muller.similarity.parallel": "words"},
            ["'muller.similarity.parallel'", "toy world", "{ud: pud}"],
        ),
        (
            "demo",
            {"muller.tasks.parsing.train": {"default": "toy_wikii"}},
            ["'muller.tasks.parsing.train.default' (en)", "'toy_wikii'", "toy_wiki"],
        ),
        (
            "demo",
            {"muller.tasks.ner.train": {"default": "toy_cc"}},  # dev and test only
            ["'muller.tasks.ner.train.default' (en)", "no train split"],
        ),
        (
            "demo",
            {"muller.similarity.parallel": {"ud": "pud"}},
            ["'muller.similarity.parallel.ud' (en)", "'pud'", "toy world"],
        ),
        (
            "demo",
            {"muller.domain.tasks.pos.evaluations.en_cc": {"lang": "en", "dataset": "toy_ccc"}},
            ["'muller.domain.tasks.pos.evaluations.en_cc.dataset' (en)", "'toy_ccc'"],
        ),
    ],
)
def test_a_dataset_the_study_does_not_have_is_rejected_naming_the_key(
    configs, study, changes, names
):
    _assert_names(_error(configs[study], changes), *names)


def test_the_single_language_ner_datasets_are_those_of_the_import():
    from xling.acquire.manual import NER_FILES, NER_LANGUAGE

    one_language = {
        name
        for name, files in NER_FILES.items()
        if not any("{lang}" in path for path in files.values())
    }
    assert one_language == set(NER_LANGUAGE)


@pytest.mark.parametrize(
    ("changes", "names"),
    [
        ({"data.xnlii": "x"}, ["config key 'data'", "'xnlii'", "xnli_mt"]),
        ({"data.xnli": "xnlii"}, ["config key 'data.xnli'", "'xnlii'"]),
        ({"data.xnli_mt": "xnli-mt"}, ["config key 'data.xnli_mt'", "'xnli-mt'"]),
    ],
)
def test_data_keys_and_their_download_names_are_checked(configs, changes, names):
    _assert_names(_error(configs["config"], changes), *names)


def test_a_missing_key_is_reported_as_missing_not_as_unevaluated_properties(configs):
    paper = copy.deepcopy(configs["config"])
    del paper["tasks"]["parsing"]["datasets"]
    message = _error(paper, {})
    _assert_names(message, "config key 'tasks.parsing'", "'datasets' is a required property")
    assert "Unevaluated" not in message


def test_an_unevaluated_key_lists_the_known_keys(configs):
    message = _error(configs["config"], {"tasks.ner.epoch": 3})
    _assert_names(message, "config key 'tasks.ner'", "'epoch'", "known keys here:", "epochs")
    _assert_names(message, "labels", "datasets", "best_k")  # from both parts of its allOf
    assert "arc_dim" not in message  # a parsing key


def test_a_pattern_error_ends_with_its_fix(tmp_path):
    schema = tmp_path / "schema.yaml"
    schema.write_text(
        "type: object\n"
        "properties:\n"
        "  code: {type: string, pattern: '^[a-z]{3}$'}\n"
        "  items: {type: array, items: {type: string, pattern: '^x', description: Starts x.}}\n"
    )
    assert str(_schema_error({"code": "FR"}, schema)) == (
        "config key 'code': 'FR' does not match '^[a-z]{3}$'; write a value that matches it "
        "(see config/schema.yaml)"
    )
    assert str(_schema_error({"items": ["y"]}, schema)).endswith("'^x'. Starts x.")


def _schema_error(config, schema):
    with pytest.raises(study.ConfigError) as info:
        validate_schema(config, schema)
    return info.value


def test_every_pattern_of_the_schema_says_what_it_wants():
    undescribed = []

    def walk(node, path):
        if isinstance(node, dict):
            if "pattern" in node and "description" not in node:
                undescribed.append(".".join(map(str, path)))
            for key, value in node.items():
                walk(value, [*path, key])
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, [*path, index])

    walk(study.load_yaml(study.DEFAULT_SCHEMA), [])
    assert undescribed == []


def test_a_user_dictionary_is_a_file_with_known_placeholders(configs, tmp_path):
    demo = configs["demo"]
    key = "languages.zh.user_dictionary"
    message = _error(demo, {key: "{dat}/segmenter/zh.dict.txt"})
    _assert_names(message, f"config key '{key}'", "{dat}", "{data} (results/<study>/data)")
    message = _error(demo, {key: "{}/zh.dict.txt"})
    _assert_names(message, f"config key '{key}'", "positional field {}", "{data}")
    message = _error(demo, {key: str(tmp_path / "none.txt")})
    _assert_names(message, f"config key '{key}'", "none.txt does not exist", "segmenter/zh.dict")
    message = _error(demo, {key: "{data}/segmenter/fr.dict.txt"})  # not a toy-world file
    _assert_names(message, "results/demo/data/segmenter/fr.dict.txt does not exist")
    dictionary = tmp_path / "zh.dict.txt"
    dictionary.write_text("瑰谻 5\n", encoding="utf-8")
    study.validate(_with(demo, {key: str(dictionary)}))  # a file put there by hand


def test_a_config_file_that_is_not_utf8_names_the_file_line_and_fix(tmp_path, capsys):
    path = tmp_path / "study.yaml"
    path.write_bytes("study: demo\nlabel: Caf\xe9\n".encode("latin-1"))
    with pytest.raises(study.ConfigError) as info:
        study.load_yaml(path)
    _assert_names(str(info.value), str(path), "line 2, column 11", "0xe9", "save it as UTF-8")
    assert study.main([str(path)]) == 1
    _assert_names(capsys.readouterr().err, "invalid:", "line 2", "UTF-8")


def test_the_command_line_reports_the_errors_of_every_check(configs, tmp_path):
    """``python -m xling.study`` runs as __main__; the checks of other modules raise
    xling.study.ConfigError, which it must still report as an invalid config."""
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(_with(configs["config"], {"tasks.ner.best_k": 7})))
    done = subprocess.run(
        [sys.executable, "-m", "xling.study", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr
    _assert_names(done.stderr, "invalid: config key 'tasks.ner.best_k'")
    assert "Traceback" not in done.stderr


def test_wikipedia_dumps_named_per_language_get_the_url_template_form(configs):
    message = _error(configs["config"], {"data.wikipedia": {"en": "wiki_en", "fr": "wiki_fr"}})
    _assert_names(message, "config key 'data.wikipedia'", "url template", "{lang}wiki/<date>/")


def test_an_xnli_pair_needs_a_target_with_an_xnli_test_set(configs):
    treebanks = dict(configs["config"]["data"]["ud"]["ud23"]["treebanks"], it="UD_Italian-ISDT")
    changes = {"pairs": ["en-fr", "en-ru", "en-zh", "en-it"], "data.ud.ud23.treebanks": treebanks}
    message = _error(configs["config"], changes)
    _assert_names(message, "config key 'pairs' (item 3, 'en-it')", "XNLI has no 'it'", "select")
    study.validate(_with(configs["config"], {**changes, "select": {"tasks": ["ner", "parsing"]}}))
