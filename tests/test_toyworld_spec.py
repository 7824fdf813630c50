"""The toy world spec: schema, consistency checks with clear messages, and output_paths."""

import copy
import re

import jsonschema
import pytest

from xling.toyworld import DEMO_SPEC, SPEC_SCHEMA, TINY_SPEC, output_paths, validate_spec


def _spec(**changes):
    """TINY_SPEC with dotted-key changes, e.g. _spec(**{"profiles.fr.scramble": 0.5})."""
    spec = copy.deepcopy(TINY_SPEC)
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = spec
        for key in parents:
            node = node[key]
        node[last] = value
    return spec


def test_schema_is_valid_draft_2020_12_and_accepts_the_shipped_specs():
    jsonschema.Draft202012Validator.check_schema(SPEC_SCHEMA)
    for spec in (DEMO_SPEC, TINY_SPEC):
        jsonschema.Draft202012Validator(SPEC_SCHEMA).validate(spec)
        validate_spec(spec)


def _objects(schema, path="spec"):
    if isinstance(schema, dict):
        if schema.get("type") == "object" and "properties" in schema:
            yield path, schema
        for key, value in schema.items():
            yield from _objects(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for item in schema:
            yield from _objects(item, path)


def test_every_schema_object_is_closed_and_every_property_described():
    objects = list(_objects(SPEC_SCHEMA))
    assert len(objects) > 10
    for path, obj in objects:
        assert obj["additionalProperties"] is False, path
        for name, prop in obj["properties"].items():
            assert prop.get("description"), f"{path}.{name} has no description"


@pytest.mark.parametrize(
    ("changes", "key", "words"),
    [
        ({"sizes.corpus.wikii": 3}, "sizes.corpus", "wikii"),
        ({"profiles.fr.word_order": "OSV"}, "profiles.fr.word_order", "OSV"),
        ({"profiles.fr.anchor_share": 1.5}, "profiles.fr.anchor_share", "1.5"),
        ({"sizes.xnli.dev": 31}, "sizes.xnli.dev", "multiple of 3"),
        ({"languages": ["fr", "de"]}, "languages", "replaces the preset's, so name every language"),
        ({"languages": ["en", "EN"]}, "languages.1", "EN"),
    ],
)
def test_schema_errors_name_the_key(changes, key, words):
    with pytest.raises(ValueError) as err:
        validate_spec(_spec(**changes))
    message = str(err.value)
    assert f"'{key}'" in message and words in message


@pytest.mark.parametrize(
    ("changes", "key", "fix"),
    [
        ({"languages": ["en", "fr", "xx"]}, "profiles.xx", "add a profile"),
        ({"profiles.en.anchor_share": 0.5}, "profiles.en.anchor_share", "set it to 1"),
        ({"domains.cc.topic_weights": [1, 2]}, "domains.cc.topic_weights", "one positive weight"),
        ({"sizes.muse": {"train": 400, "test": 100}}, "sizes.muse", "lower the dictionary"),
        ({"lexicon.persons": 500}, "lexicon.persons", "raise first_names"),
        ({"profiles.zh.plural_suffix": "men"}, "profiles.zh", "plural_suffix"),
        ({"profiles.zh.capitalization": "sentence"}, "profiles.zh.capitalization", "none"),
        ({"profiles.de.scramble": 0.3}, "profiles.de.scramble", "set it to 0"),
        ({"profiles.ru.cognate_rewrites": [["(", "x"]]}, "profiles.ru.cognate_rewrites.0", "regex"),
        ({"profiles.zh.digits": "0000000000"}, "profiles.zh.digits", "distinct"),
    ],
)
def test_inconsistent_specs_raise_with_key_and_fix(changes, key, fix):
    with pytest.raises(ValueError, match=re.escape(f"'{key}'")) as err:
        validate_spec(_spec(**changes))
    assert fix in str(err.value) and f"config key 'data.toyworld.{key}'" in str(err.value)


def test_output_paths_follow_the_contract_layout():
    paths = output_paths(DEMO_SPEC)
    assert len(paths) == len(set(paths))
    langs = DEMO_SPEC["languages"]
    others = [lang for lang in langs if lang != "en"]
    expected = {
        *(f"corpus/{d}/{lang}.txt" for d in ("wiki", "cc") for lang in langs),
        *(f"parallel/{lang}.txt" for lang in langs),
        *(f"parallel/{lang}.words.txt" for lang in langs),
        *(f"parallel/align/en-{lang}.txt" for lang in others),
        "segmenter/zh.dict.txt",  # the one language written without spaces
        *(f"ner/toy/{lang}/{s}.txt" for lang in langs for s in ("train", "dev", "test")),
        *(f"ud/toy/{lang}/{s}.conllu" for lang in langs for s in ("train", "dev", "test")),
        "xnli/xnli.dev.tsv",
        "xnli/xnli.test.tsv",
        "xnli/multinli.train.en.tsv",
        # en' (anchor share 1) writes English's words: no dictionary to translate with.
        *(f"muse/en-{lang}.{s}.txt" for lang in others if lang != "enp" for s in ("train", "test")),
        *(f"tatoeba/en-{lang}.{x}.txt" for lang in others for x in ("en", lang)),
        # One-domain sets (Muller et al. 2021, Table 2): wiki train/dev/test, cc dev/test.
        *(f"ner/toy_wiki/{lang}/{s}.txt" for lang in langs for s in ("train", "dev", "test")),
        *(f"ud/toy_wiki/{lang}/{s}.conllu" for lang in langs for s in ("train", "dev", "test")),
        *(f"ner/toy_cc/{lang}/{s}.txt" for lang in langs for s in ("dev", "test")),
        *(f"ud/toy_cc/{lang}/{s}.conllu" for lang in langs for s in ("dev", "test")),
    }
    assert set(paths) == expected


def test_output_paths_depend_on_languages_only_and_validate():
    two = _spec(languages=["en", "zh"])
    assert "tatoeba/en-zh.zh.txt" in output_paths(two)
    assert not any("/fr" in p or "-fr" in p for p in output_paths(two))
    with pytest.raises(ValueError, match=r"profiles\.xx"):
        output_paths(_spec(languages=["en", "xx"]))
