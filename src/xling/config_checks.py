"""The checks of a study config that a JSON schema cannot express: keys that refer to each other.

:func:`xling.config.validate` runs them after the schema, :func:`check_data` before it expands
the paper's rows under ``variants`` and :func:`check_study` after. Each failure is one
:class:`~xling.config.ConfigError` that names the key, what was found and the fix, so that a
config that cannot run stops before any job does, not inside a job hours later.
"""

from __future__ import annotations

import functools
import json
import string
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from xling.config import (
    URL_FIELDS,
    ConfigError,
    pair_languages,
    selected,
    task_dataset,
    template_file_names,
    ud_languages,
    ud_source,
)
from xling.contracts import layout
from xling.contracts.layout import TASK_SPLITS

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
# Tasks whose data is a dataset of `tasks.<task>.datasets` (XNLI has one dataset only).
DATASET_TASKS = ("ner", "parsing", "pos")


# --------------------------------------------------------------------------- before expansion
def check_data(config: dict) -> None:
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


def _toyworld_files(config: Mapping[str, Any]) -> frozenset[str] | None:
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
    toy_files = _toyworld_files(config)
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


# --------------------------------------------------------------------------- after expansion
def check_study(config: dict) -> None:
    """Rows, tasks, their datasets and the training settings."""
    check_variants(config)
    check_xnli_languages(config)
    check_task_datasets(config)
    check_ud(config)
    check_pair_task_data(config)
    check_selection(config)
    check_grids(config)
    check_training(config)


# The 15 languages of XNLI-1.0's dev and test sets (Conneau et al. 2018).
XNLI_LANGUAGES = ("ar", "bg", "de", "el", "en", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur",
                  "vi", "zh")  # fmt: skip


def check_xnli_languages(config: dict) -> None:
    """A pair fine-tuned on XNLI is evaluated on its target's XNLI test set, which must exist
    (the downloaded release has 15 languages; the demo's toy world writes its own)."""
    if "xnli" not in selected(config, "tasks") or config["data"]["source"] != "download":
        return
    for index, pair in enumerate(config["pairs"]):
        target = pair_languages(pair)[1]
        if target not in XNLI_LANGUAGES:
            raise ConfigError(
                f"config key 'pairs' (item {index}, {pair!r}): XNLI has no {target!r} test set "
                f"(its languages: {', '.join(XNLI_LANGUAGES)}); leave xnli out with "
                "select: {tasks: [ner, parsing]} or choose another target"
            )


def check_variants(config: dict) -> None:
    schemes = config["vocab"]["schemes"]
    layers = config["model"]["layers"]
    for name, variant in config["variants"].items():
        if variant["vocab"] not in schemes:
            raise ConfigError(
                f"config key 'variants.{name}.vocab': scheme {variant['vocab']!r} has no settings "
                f"in 'vocab.schemes'; configured schemes: {', '.join(sorted(schemes))}"
            )
        if variant["sep_layers"] > layers:
            raise ConfigError(
                f"config key 'variants.{name}.sep_layers': {variant['sep_layers']} separate "
                f"layers, but the model has model.layers={layers}"
            )


def check_selection(config: dict) -> None:
    for key, configured in (("variants", config["variants"]), ("tasks", config["tasks"])):
        for name in config.get("select", {}).get(key, []):
            if name not in configured:
                raise ConfigError(
                    f"config key 'select.{key}': {name!r} is not configured under '{key}' "
                    f"(configured: {', '.join(configured)})"
                )


def check_task_datasets(config: dict) -> None:
    """A per-pair override of ``tasks.<task>.datasets`` names a pair and that pair's languages."""
    for task, settings in config.get("tasks", {}).items():
        for pair, override in settings.get("datasets", {}).get("pairs", {}).items():
            key = f"tasks.{task}.datasets.pairs.{pair}"
            if pair not in config["pairs"]:
                raise ConfigError(
                    f"config key '{key}': {pair!r} is not in 'pairs' ({', '.join(config['pairs'])})"
                )
            languages = pair_languages(pair)
            for lang in override:
                if lang not in languages:
                    raise ConfigError(
                        f"config key '{key}.{lang}': {lang!r} is not a language of the pair "
                        f"{pair}, so the override would never be read; key it by "
                        f"{' or '.join(languages)}"
                    )


def check_ud(config: dict) -> None:
    """The UD datasets of ``data.ud`` can be built."""
    data = config["data"]
    if data["source"] != "download":
        return
    known = sorted(config["languages"])
    for name, dataset in data["ud"].items():
        key = f"data.ud.{name}"
        if dataset.get("manual"):
            for extra in ("download", "treebanks"):
                if extra in dataset:
                    raise ConfigError(
                        f"config key '{key}.{extra}': a manual dataset (manual: true) is put "
                        f"under data.manual_dir by hand and has no {extra}; remove one or the other"
                    )
        elif dataset["download"] not in data["downloads"]:
            raise ConfigError(
                f"config key '{key}.download': {dataset['download']!r} is not a download in "
                f"'data.downloads' (configured: {', '.join(sorted(data['downloads']))})"
            )
        for lang in ud_languages(dataset):
            if lang not in config["languages"]:
                part = "languages" if dataset.get("manual") else "treebanks"
                raise ConfigError(
                    f"config key '{key}.{part}': language {lang!r} is not in 'languages' "
                    f"({', '.join(known)}); add it there with its segmenter"
                )


def check_pair_task_data(config: dict) -> None:
    """Every language of a pair finds its data of each task in the dataset that
    ``tasks.<task>.datasets`` names for it: the source language all three splits (fine-tuning),
    the target language its test split. Wu §5's transfer pairs (with a `monolingual` section)
    read theirs the same way."""
    data = StudyDatasets(config)
    transfer = config.get("analysis", {}).get("contextual_transfer", {})
    for task in DATASET_TASKS:
        if task not in config["tasks"]:
            continue
        pairs = list(config["pairs"])
        if "monolingual" in config and task in transfer.get("tasks", []):
            # a malformed transfer pair, or one of an unknown language: the `monolingual` check
            # names its key
            languages = set(config["languages"])
            pairs += [
                pair
                for pair in transfer["pairs"]
                if pair not in pairs and pair.count("-") == 1 and set(pair.split("-")) <= languages
            ]
        datasets = config["tasks"][task]["datasets"]
        for pair in pairs:
            source, target = pair_languages(pair)
            for lang, splits in ((source, TASK_SPLITS), (target, ("test",))):
                chosen = "pairs." + pair + "." + lang
                if lang not in datasets.get("pairs", {}).get(pair, {}):
                    chosen = "default"
                where = f"config key 'tasks.{task}.datasets.{chosen}' (pair {pair}, {lang})"
                data.check(task, task_dataset(config, task, pair, lang), lang, splits, where)


class StudyDatasets:
    """Which datasets of a task the study's data stage writes, in which languages and splits:
    the toy world's files, or the imports of the datasets a download study configures."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config
        self.toy_files = _toyworld_files(config)

    def check(self, task: str, dataset: str, lang: str, splits: Iterable[str], where: str) -> None:
        """A ConfigError starting with ``where`` unless ``dataset`` has ``splits`` in ``lang``."""
        splits = list(splits)
        if self.toy_files is not None:
            self._check_toyworld(task, dataset, lang, splits, where)
        elif task == "ner":
            self._check_ner(dataset, lang, where)
        else:
            self._check_ud(dataset, lang, splits, where)

    def check_parallel_words(self, lang: str, where: str) -> None:
        if self.toy_files is None:
            raise ConfigError(
                f"{where}: `words` are the toy world's parallel gold words, and this study "
                "downloads its data (data.source download); write {ud: <dataset>}, e.g. {ud: pud}"
            )
        if layout.parallel_words(lang) not in self.toy_files:
            raise ConfigError(f"{where}: the toy world writes no parallel words in {lang!r}")

    def _check_toyworld(self, task, dataset, lang, splits, where) -> None:
        from xling.toyworld.api import DATASET, DOMAIN_DATASETS

        files = layout.task_files(task, dataset, lang, splits)
        missing = [split for split, path in files.items() if path not in self.toy_files]
        if not missing:
            return
        written = [
            name
            for name in (DATASET, *DOMAIN_DATASETS)
            if layout.task_files(task, name, lang, ["test"])["test"] in self.toy_files
        ]
        if dataset not in written:
            raise ConfigError(
                f"{where}: {dataset!r} is not a {task} dataset of the toy world (data.source "
                f"toyworld) in {lang!r}; it writes {', '.join(written) or 'none'} there"
            )
        raise ConfigError(
            f"{where}: the toy world's {dataset!r} has no {', '.join(missing)} split in {lang!r} "
            f"(toy_cc has dev and test only); name a dataset with that split"
        )

    def _check_ner(self, dataset: str, lang: str, where: str) -> None:
        from xling.acquire.manual import NER_FILES, NER_LANGUAGE

        if dataset not in NER_FILES:
            raise ConfigError(
                f"{where}: {dataset!r} is not a NER dataset this workflow imports; known: "
                f"{', '.join(sorted(NER_FILES))}"
            )
        only = NER_LANGUAGE.get(dataset)
        if only is not None and lang != only:
            raise ConfigError(
                f"{where}: {dataset!r} has {only!r} sentences only, not {lang!r}; name another "
                "dataset for this language (wikiann has every language)"
            )

    def _check_ud(self, dataset: str, lang: str, splits: list[str], where: str) -> None:
        ud = self.config["data"]["ud"]
        if dataset not in ud:
            raise ConfigError(
                f"{where}: UD dataset {dataset!r} is not defined under 'data.ud' "
                f"(defined: {', '.join(sorted(ud))}); name one of them or define it there"
            )
        try:
            ud_source(self.config, dataset, lang)
        except ValueError as error:
            raise ConfigError(f"{where}: {error}") from None
        missing = [split for split in splits if split not in ud[dataset]["splits"]]
        if missing:
            raise ConfigError(
                f"{where}: {lang} needs the {', '.join(missing)} split(s), and config key "
                f"'data.ud.{dataset}.splits' has only {', '.join(ud[dataset]['splits'])}"
            )


def check_grids(config: dict) -> None:
    """Each task's grid expands as the workflow expands it, and best_k fits in it."""
    from xling.finetune.grid import grid_points, hp_id

    for task, settings in config["tasks"].items():
        try:
            points = grid_points(task, settings["grid"])
        except ValueError as error:
            raise ConfigError(f"config key 'tasks.{task}.grid': {error}") from None
        if settings["best_k"] > len(points):
            raise ConfigError(
                f"config key 'tasks.{task}.best_k': {settings['best_k']} grid points to average, "
                f"but tasks.{task}.grid has {len(points)} "
                f"({', '.join(hp_id(point) for point in points)}); lower best_k to at most "
                f"{len(points)} or add values to the grid"
            )


def check_architecture(architecture: Mapping[str, Any], key: str) -> None:
    """What xling.model.EncoderConfig would refuse inside the first pretraining job."""
    dim, heads = architecture.get("dim", 768), architecture.get("heads", 12)
    if dim % heads:
        raise ConfigError(
            f"config key '{key}': dim {dim} is not a multiple of heads {heads} (each head gets "
            "dim / heads dimensions); change one of them"
        )


def _check_muller_warmup(config: Mapping[str, Any]) -> None:
    """The multilingual MLM's schedule: config `pretrain` with muller.model.pretrain on top."""
    own = config["muller"]["model"].get("pretrain") or {}
    settings = {**config["pretrain"], **own}
    warmup, total = settings["warmup_steps"], settings["total_steps"]
    if warmup <= total:
        return
    if "warmup_steps" in own:
        where = (
            "(muller.model.pretrain.total_steps)"
            if "total_steps" in own
            else "(pretrain.total_steps, which muller.model.pretrain keeps)"
        )
        raise ConfigError(
            f"config key 'muller.model.pretrain.warmup_steps': {warmup} warmup steps exceed the "
            f"{total} steps of training {where}, so the learning rate would never reach its "
            "peak; lower warmup_steps or raise total_steps under muller.model.pretrain"
        )
    raise ConfigError(
        f"config key 'muller.model.pretrain.total_steps': {total} steps of training are fewer "
        f"than the {warmup} warmup steps kept from pretrain.warmup_steps, so the learning rate "
        "would never reach its peak; raise total_steps or set a lower warmup_steps under "
        "muller.model.pretrain"
    )


def check_training(config: dict) -> None:
    """Settings that would otherwise fail inside a job, hours into a run: rejected here, naming
    the key and the fix."""
    model, pretrain = config["model"], config["pretrain"]
    check_architecture(model, "model")
    positions = model.get("max_positions", 512)
    if pretrain["seq_len"] > positions:
        raise ConfigError(
            f"config key 'pretrain.seq_len': {pretrain['seq_len']} tokens do not fit the model's "
            f"{positions} positions (model.max_positions); shorten seq_len or raise max_positions"
        )
    if pretrain["warmup_steps"] > pretrain["total_steps"]:
        raise ConfigError(
            f"config key 'pretrain.warmup_steps': {pretrain['warmup_steps']} warmup steps exceed "
            f"the {pretrain['total_steps']} steps of training (pretrain.total_steps), so the "
            "learning rate would never reach its peak; lower warmup_steps or raise total_steps"
        )
    for task, settings in config["tasks"].items():
        if settings.get("max_length", 0) > positions:
            raise ConfigError(
                f"config key 'tasks.{task}.max_length': {settings['max_length']} tokens do not "
                f"fit the model's {positions} positions (model.max_positions); lower it"
            )
    _check_muller_training(config)
    trained = set(selected(config, "variants"))
    for variant in config["analysis"]["cka"]["variants"]:
        if variant not in trained:
            raise ConfigError(
                f"config key 'analysis.cka.variants': {variant!r} is not a trained variant, so "
                f"its CKA would be an empty figure; trained: {', '.join(sorted(trained))} "
                "(config keys 'variants' and 'select')"
            )


def _check_muller_training(config: dict) -> None:
    """The multilingual MLM Muller et al.'s stage trains (muller.model.source pretrain): config
    `model` and `pretrain` with muller.model.architecture and muller.model.pretrain on top."""
    muller = config.get("muller") or {}
    muller_model = muller.get("model") or {}
    architecture = muller_model.get("architecture") or {}
    if architecture:
        check_architecture({**config["model"], **architecture}, "muller.model.architecture")
    if muller_model.get("source") != "pretrain":
        return  # a transformers model's positions are its own: the job checks them
    positions = architecture.get("max_positions", config["model"].get("max_positions", 512))
    where = (
        "muller.model.architecture.max_positions"
        if "max_positions" in architecture
        else "model.max_positions, which muller.model.architecture keeps"
    )
    seq_len = config["pretrain"]["seq_len"]
    if seq_len > positions:
        raise ConfigError(
            f"config key 'pretrain.seq_len': {seq_len} tokens, which the multilingual MLM of "
            f"muller.model also trains on, do not fit its {positions} positions ({where}); "
            "shorten seq_len or raise max_positions under muller.model.architecture"
        )
    for task, settings in (muller.get("tasks") or {}).items():
        if settings.get("max_length", 0) > positions:
            raise ConfigError(
                f"config key 'muller.tasks.{task}.max_length': {settings['max_length']} tokens "
                f"do not fit the multilingual MLM's {positions} positions ({where}); lower it"
            )
    _check_muller_warmup(config)
