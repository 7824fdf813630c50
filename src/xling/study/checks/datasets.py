"""Checks of the datasets each task reads: every language of a pair (Table 1's, Wu section 5's
transfer pairs) finds the splits it needs in the dataset ``tasks.<task>.datasets`` names for it,
in the toy world's files or among the imports of a download study. :class:`StudyDatasets` answers
the same question for Muller et al.'s runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from xling.contracts import layout
from xling.contracts.layout import TASK_SPLITS
from xling.study.checks.sources import toyworld_files
from xling.study.keys import (
    ConfigError,
    pair_languages,
    selected,
    task_dataset,
    ud_languages,
    ud_source,
)


def check(config: dict) -> None:
    """XNLI's test languages, the per-pair dataset overrides, the UD datasets and every pair's
    data of each task."""
    check_xnli_languages(config)
    check_task_datasets(config)
    check_ud(config)
    check_pair_task_data(config)


# Tasks whose data is a dataset of `tasks.<task>.datasets` (XNLI has one dataset only).
DATASET_TASKS = ("ner", "parsing", "pos")


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
        self.toy_files = toyworld_files(config)

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
