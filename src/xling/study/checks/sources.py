"""Checks of where the data comes from: languages and pairs, url templates, download names,
sha256 pins, the toy world's spec and the segmenters' user dictionaries. They run before the
paper's rows are expanded under ``variants``; :func:`check_retired_forms` before the schema."""

from __future__ import annotations

import functools
import json
import string
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from xling.study.keys import URL_FIELDS, ConfigError, template_file_names

# What each field of a url template of config `data` tells apart: a template without one of these
# would fetch one address for all of them. data.transformers.url may leave out {revision}: a commit
# id written into the address pins the model as well.
URL_REQUIRED = {
    "wikipedia": {"lang": "every language"},
    "commoncrawl": {"lang": "every language"},
    "muse": {
        "src": "every source language",
        "tgt": "every target language",
        "span": "the train (0-5000) and test (5000-6500) dictionaries",
    },
    "tatoeba": {"code": "every language", "side": "the two sides of a pair (eng and the other)"},
    "fasttext": {"lang": "every language"},
    "transformers": {
        "name": "every model (muller.model.name)",
        "file": "every file of data.transformers.files",
    },
}


# What config `languages.<lang>.user_dictionary` may contain in braces, and what it stands for.
USER_DICTIONARY_FIELDS = {"data": "results/<study>/data"}


def check(config: dict) -> None:
    """Languages, pairs and where the data comes from."""
    check_pairs(config)
    check_url_templates(config)
    check_download_names(config)
    check_pins(config)
    check_toyworld(config)
    check_user_dictionaries(config)


def check_pairs(config: dict) -> None:
    known = sorted(config["languages"])
    seen = set()
    for index, pair in enumerate(config["pairs"]):
        source, target = pair.split("-")
        for lang in (source, target):
            if lang not in config["languages"]:
                raise ConfigError(
                    f"config key 'pairs' (item {index}, {pair!r}): unknown language {lang!r}; "
                    f"known languages (config key 'languages'): {', '.join(known)}"
                )
        if source == target:
            raise ConfigError(
                f"config key 'pairs' (item {index}): {pair!r} pairs a language with itself"
            )
        if pair in seen:
            raise ConfigError(f"config key 'pairs': {pair!r} is listed twice")
        seen.add(pair)
        if "xnli" in config.get("tasks", {}) and source != "en":
            raise ConfigError(
                f"config key 'pairs' (item {index}, {pair!r}): a pair is source-target and "
                f"fine-tunes on its source, but XNLI (config key 'tasks.xnli') has English "
                f"training data only; write it as 'en-{source}'"
            )


def _braces(fields: Iterable[str]) -> str:
    return ", ".join("{" + field + "}" for field in fields)


def _template_fields(template: str, key: str, allowed: Iterable[str]) -> set[str]:
    """The named fields of a ``str.format`` template; ConfigError naming ``key`` for a template
    that is not one, or for a positional field (``{}``, ``{0}``), which nothing fills in."""
    try:
        parsed = [field for _, field, _, _ in string.Formatter().parse(template)]
    except ValueError as error:
        raise ConfigError(f"{key}: {template!r} is not a valid template ({error})") from None
    fields = {field for field in parsed if field is not None}
    positional = sorted(field for field in fields if field == "" or field.isdigit())
    if positional:
        raise ConfigError(
            f"{key}: {template!r} has the positional field {_braces(positional)}, which nothing "
            f"fills in; name the field in the braces ({_braces(sorted(allowed))}), or double a "
            "brace that is meant literally ({{ or }})"
        )
    return fields


def check_url_templates(config: dict) -> None:
    for section, allowed in URL_FIELDS.items():
        template = (config["data"].get(section) or {}).get("url")
        if template is None:
            continue
        key = f"config key 'data.{section}.url'"
        fields = _template_fields(template, key, allowed)
        unknown = sorted(fields - allowed)
        if unknown:
            raise ConfigError(
                f"{key}: {template!r} uses {_braces(unknown)}, which nothing fills in; it may "
                f"use {_braces(sorted(allowed))}"
            )
        for field, what in URL_REQUIRED[section].items():
            if field not in fields:
                raise ConfigError(
                    f"{key}: {template!r} has no {{{field}}}, so {what} would download the same "
                    f"file; put {{{field}}} where the address names it (the template may use "
                    f"{_braces(sorted(allowed))})"
                )


def check_retired_forms(config: dict) -> None:
    """A key written in a form this project no longer reads gets the new form, not only the
    schema's "unexpected key"."""
    data = config.get("data")
    wikipedia = data.get("wikipedia") if isinstance(data, dict) else None
    per_language = isinstance(wikipedia, dict) and wikipedia and "url" not in wikipedia
    if per_language and all(isinstance(name, str) for name in wikipedia.values()):
        raise ConfigError(
            "config key 'data.wikipedia': a url template for every language now, not a "
            "download name per language; write `wikipedia: {url: https://dumps.wikimedia.org/"
            "{lang}wiki/<date>/{lang}wiki-<date>-pages-articles.xml.bz2}` (config/config.yaml) "
            "and remove the dumps from 'data.downloads'"
        )


def check_download_names(config: dict) -> None:
    """Every key that names a download of ``data.downloads`` names one that is there."""
    data = config["data"]
    if data["source"] != "download":
        return
    downloads = data["downloads"]
    references = [(f"data.{key}", data[key]) for key in ("xnli", "xnli_mt")]
    for key, name in references:
        if name not in downloads:
            raise ConfigError(
                f"config key '{key}': {name!r} is not a download in "
                f"'data.downloads' (configured: {', '.join(sorted(downloads))}); name one of "
                "them or add it there with its url"
            )


def check_pins(config: dict) -> None:
    """A pin under a name no download has would never be checked: say so."""
    for section in URL_FIELDS:
        pins = (config["data"].get(section) or {}).get("sha256") or {}
        if not pins:
            continue
        names = template_file_names(config, section)
        unknown = sorted(set(pins) - names)
        if unknown:
            example = sorted(names)[0] if names else "none"
            raise ConfigError(
                f"config key 'data.{section}.sha256': {unknown} name no file that "
                f"data.{section}.url gives for the configured languages (e.g. {example}), so "
                "these pins would never be checked; key each pin by the downloaded file's name"
            )


def check_toyworld(config: dict) -> None:
    if config["data"]["source"] != "toyworld":
        if config["analysis"].get("word_aligner") == "gold":
            raise ConfigError(
                "config key 'analysis.word_aligner': gold alignments exist only in the toy world "
                f"(data.source toyworld), and data.source is {config['data']['source']!r}; "
                "use eflomal"
            )
        return
    from xling.toyworld import resolve_spec, validate_spec

    try:
        validate_spec(resolve_spec(config["data"]["toyworld"]))
    except ValueError as error:
        raise ConfigError(str(error)) from None
    spec_languages = resolve_spec(config["data"]["toyworld"])["languages"]
    missing = sorted(set(config["languages"]) - set(spec_languages))
    if missing:
        raise ConfigError(
            f"config key 'languages': {missing} have no toy-world data; the toy world writes "
            f"{', '.join(spec_languages)} (config key data.toyworld.languages)"
        )


def toyworld_files(config: Mapping[str, Any]) -> frozenset[str] | None:
    """Every file the toy world writes under R/data (None: the study downloads its data)."""
    if config["data"]["source"] != "toyworld":
        return None
    return _toyworld_files_of(json.dumps(config["data"]["toyworld"], sort_keys=True))


@functools.lru_cache(maxsize=4)
def _toyworld_files_of(spec: str) -> frozenset[str]:
    """Resolving the spec takes tens of ms, and several checks of one validation ask."""
    from xling.toyworld import output_paths, resolve_spec

    return frozenset(output_paths(resolve_spec(json.loads(spec))))


def check_user_dictionaries(config: dict) -> None:
    """A segmenter's user dictionary is a file that exists or that the workflow writes."""
    toy_files = toyworld_files(config)
    study_data = USER_DICTIONARY_FIELDS["data"].replace("<study>", config["study"])
    for lang, settings in config["languages"].items():
        path = settings.get("user_dictionary")
        if path is None:
            continue
        key = f"config key 'languages.{lang}.user_dictionary'"
        fields = _template_fields(path, key, USER_DICTIONARY_FIELDS)
        unknown = sorted(fields - set(USER_DICTIONARY_FIELDS))
        if unknown:
            known = ", ".join(f"{{{f}}} ({what})" for f, what in USER_DICTIONARY_FIELDS.items())
            raise ConfigError(
                f"{key}: {path!r} uses {_braces(unknown)}, which nothing fills in; the only "
                f"placeholder is {known}"
            )
        written = path.startswith("{data}/") and path.removeprefix("{data}/") in (toy_files or ())
        resolved = path.replace("{data}", study_data)
        if not written and not Path(resolved).is_file():
            names = sorted(p for p in toy_files or () if p.startswith("segmenter/"))
            hint = (
                f"; the toy world writes {', '.join('{data}/' + p for p in names)}" if names else ""
            )
            raise ConfigError(
                f"{key}: {resolved} does not exist (relative to the directory Snakemake runs "
                f"in) and no job of the workflow writes it; put the file there, or name one "
                f"that exists{hint}"
            )
