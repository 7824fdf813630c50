"""Checks of Muller et al. (2021) (config ``muller``): the model, its languages and sources, the
RANDOM-INIT groups, the tasks' settings and grids, the multilingual MLM's training settings and
the datasets every run reads."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from xling.finetune.grid import grid_points
from xling.study.checks.datasets import StudyDatasets
from xling.study.checks.training import check_architecture
from xling.study.keys import ConfigError
from xling.study.plan.muller import (
    TASK_KEYS,
    model_layers,
    similarity_languages,
    test_dataset,
    train_dataset,
)

_GROUP = re.compile(r"^(all|\d+|\d+-\d+)$")


def check_group(name: str, layers: int, key: str) -> None:
    """A RANDOM-INIT group name that this model can run, or a ConfigError naming ``key``."""
    if not isinstance(name, str) or not _GROUP.match(name):
        raise ConfigError(
            f"config key '{key}': {name!r} is not a layer group; write `all`, a layer (`3`) or a "
            "range (`1-2`); layers count from 1, 0 is the embedding layer"
        )
    if name == "all":
        return
    first, _, last = name.partition("-")
    low, high = int(first), int(last or first)
    if low > high:
        raise ConfigError(
            f"config key '{key}': group {name!r} is an empty range; write {high}-{low}"
        )
    if high > layers:
        raise ConfigError(
            f"config key '{key}': group {name!r} goes beyond the model's {layers} layers; "
            f"use layers 0 (embeddings) to {layers}"
        )


def check(config: Mapping[str, Any]) -> None:
    """Reject a ``muller`` section that cannot run, naming the key and the fix."""
    section = config.get("muller")
    if not section:
        return
    _check_muller_training(config)  # first: a model that cannot be built has no layer groups
    model = section["model"]
    if model["source"] == "transformers":
        for key in ("name", "layers"):
            if key not in model:
                raise ConfigError(
                    f"config key 'muller.model.{key}' is required with source: transformers "
                    "(name: a hub id or a local directory; layers: its depth, e.g. 12)"
                )
    else:
        if "merges" not in model:
            raise ConfigError("config key 'muller.model.merges' is required with source: pretrain")
        unknown = sorted(set(model.get("architecture", {})) - set(config["model"]))
        if unknown:
            raise ConfigError(
                f"config key 'muller.model.architecture': {unknown} are not keys of `model`; "
                f"known: {', '.join(config['model'])}"
            )
        missing = [lang for lang in section["languages"] if lang not in config["languages"]]
        if missing:
            raise ConfigError(
                f"config key 'muller.languages': {missing} are not configured under `languages`; "
                "the multilingual MLM needs each language's text pipeline there"
            )
    languages = section["languages"]
    similarity = section["similarity"]
    for key, values in (
        ("sources", section["sources"]),
        ("similarity.sources", similarity["sources"]),
        ("similarity.languages", similarity.get("languages", [])),
    ):
        outside = [lang for lang in values if lang not in languages]
        if outside:
            raise ConfigError(
                f"config key 'muller.{key}': {outside} are not in muller.languages {languages}"
            )
    if section["table5_source"] not in section["sources"]:
        raise ConfigError(
            f"config key 'muller.table5_source': {section['table5_source']!r} is not one of "
            f"muller.sources {section['sources']}"
        )
    layers = model_layers(config)
    for table, names in section["groups"].items():
        for index, name in enumerate(names):
            check_group(name, layers, f"muller.groups.{table}[{index}]")
    check_group(section["similarity"]["random_init_group"], layers, _sim_group_key())
    _check_similarity_windows(similarity)
    _check_tasks(section)
    domain = section["domain"]
    for task, settings in domain["tasks"].items():
        if task not in section["tasks"]:
            raise ConfigError(
                f"config key 'muller.domain.tasks.{task}': the task has no settings under "
                f"muller.tasks (its grid and epochs); add muller.tasks.{task}"
            )
        for name, spec in settings["evaluations"].items():
            if spec["lang"] not in languages:
                raise ConfigError(
                    f"config key 'muller.domain.tasks.{task}.evaluations.{name}.lang': "
                    f"{spec['lang']!r} is not in muller.languages"
                )
    _check_datasets(config, section)


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


def _by_lang_key(key: str, datasets: Mapping[str, Any] | str, lang: str) -> str:
    """The key that gives ``lang`` its dataset: ``key`` itself (one name for every language),
    ``key.<lang>``, or ``key.default``."""
    if isinstance(datasets, str):
        return key
    return f"{key}.{lang if lang in datasets else 'default'}"


def _check_datasets(config: Mapping[str, Any], section: Mapping[str, Any]) -> None:
    """Every dataset the runs read has the splits they read in their languages: the source
    language's train and dev (fine-tuning), each evaluated language's test."""
    data = StudyDatasets(config)
    for task, settings in section["tasks"].items():
        for source in section["sources"]:
            key = _by_lang_key(f"muller.tasks.{task}.train", settings["train"], source)
            dataset = train_dataset(section, task, source)
            data.check(task, dataset, source, ("train", "dev"), f"config key '{key}' ({source})")
        for lang in section["languages"]:
            key = _by_lang_key(f"muller.tasks.{task}.test", settings["test"], lang)
            dataset = test_dataset(section, task, lang)
            data.check(task, dataset, lang, ("test",), f"config key '{key}' ({lang})")
    domain = section["domain"]
    source = domain["source"]
    for task, settings in domain["tasks"].items():
        where = f"config key 'muller.domain.tasks.{task}.train' ({source})"
        data.check(task, settings["train"], source, ("train", "dev"), where)
        for name, spec in settings["evaluations"].items():
            where = f"config key 'muller.domain.tasks.{task}.evaluations.{name}.dataset'"
            data.check(task, spec["dataset"], spec["lang"], ("test",), f"{where} ({spec['lang']})")
    parallel = section["similarity"]["parallel"]
    for lang in similarity_languages(section):
        if parallel == "words":
            data.check_parallel_words(lang, "config key 'muller.similarity.parallel'")
        else:
            where = f"config key 'muller.similarity.parallel.ud' ({lang})"
            data.check("parsing", parallel["ud"], lang, ("test",), where)


def _check_similarity_windows(similarity: Mapping[str, Any]) -> None:
    """With ``measure: rbf_windows``, every window of the sentences holds at least 4 of them
    (a CKA needs 4): at most ``sentences // 4`` windows."""
    if similarity.get("measure") != "rbf_windows":
        return
    windows, sentences = similarity.get("windows", 4), similarity["sentences"]
    if windows > sentences // 4:
        raise ConfigError(
            f"config key 'muller.similarity.windows': {windows} windows of "
            f"muller.similarity.sentences {sentences} leave a window fewer than 4 sentences, "
            f"which a CKA needs; use at most {sentences // 4} windows or more sentences"
        )


def _sim_group_key() -> str:
    return "muller.similarity.random_init_group"


def _check_tasks(section: Mapping[str, Any]) -> None:
    from xling.base.errors import SettingsError
    from xling.finetune.settings import FinetuneSettings  # torch-free

    if not section["tasks"]:
        raise ConfigError("config key 'muller.tasks' is empty; add parsing, pos and/or ner")
    for task, settings in section["tasks"].items():
        if settings.get("best_k", 1) != 1:
            raise ConfigError(
                f"config key 'muller.tasks.{task}.best_k' is {settings['best_k']}: Muller et al. "
                "report every seed at the one grid point with the best mean source dev score, so "
                "only 1 is meaningful here; drop the key (best_k averages Table 1's grid points)"
            )
        for source in section["sources"]:
            train_dataset(section, task, source)
        for lang in section["languages"]:
            test_dataset(section, task, lang)
        fields = {key: value for key, value in settings.items() if key not in TASK_KEYS}
        try:
            FinetuneSettings.from_config(task, fields, seed=0)
        except SettingsError as error:
            message = str(error).replace("'tasks.", "'muller.tasks.")
            raise ConfigError(message) from None
        try:
            grid_points(task, settings["grid"])
        except ValueError as error:
            raise ConfigError(f"config key 'muller.tasks.{task}.grid': {error}") from None
