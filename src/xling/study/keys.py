"""The bottom of the study package: its error, the config's key names that several stages share,
and the small functions that read one setting (which variants to build, a pair's languages, where
a dataset comes from). Everything above (schema, checks, plans) builds on these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xling.contracts.layout import TASK_SPLITS

# Under `variants`, `<name>: paper` stands for the row of that name in Wu et al. (2020) Table 1.
PAPER_ROW = "paper"


# Keys of `pretrain` that say how a cluster job runs, not what it trains: the rules keep them out of
# their params, so that changing them never reruns a finished model (training resumes without them).
# Not `world_size`: with `batch_size` it makes the global batch, what every step trains.
# `micro_batch` cuts each block of `batch_size` streams after it is masked, for memory: the same
# update without dropout.
PRETRAIN_JOB_KEYS = (
    "runtime_minutes", "attempts", "checkpoint_minutes", "stop_margin_minutes", "threads",
    "compile_layers", "max_train_minutes", "signal_stop_attempts", "micro_batch",
)  # fmt: skip


class ConfigError(ValueError):
    """A config that cannot run; the message says which key and how to fix it."""


# The fields each url template of config `data` may use, as the rules fill them in.
URL_FIELDS = {
    "wikipedia": {"lang"},
    "commoncrawl": {"lang"},
    "muse": {"src", "tgt", "span"},
    "tatoeba": {"code", "side"},
    "fasttext": {"lang"},
    "transformers": {"name", "revision", "file"},
}


# MUSE's file of each dictionary split: train = the 0-5000 dictionary, test = 5000-6500.
MUSE_SPANS = {"train": "0-5000", "test": "5000-6500"}


def pair_languages(pair: str) -> tuple[str, str]:
    source, target = pair.split("-")
    return source, target


def selected(config: Mapping[str, Any], key: str) -> list[str]:
    """The variants or tasks to build: config ``select.<key>`` or every configured one."""
    return list(config.get("select", {}).get(key) or config[key])


def task_dataset(config: Mapping[str, Any], task: str, pair: str, lang: str) -> str:
    """The dataset ``pair`` uses for ``task`` in ``lang`` (config ``tasks.<task>.datasets``)."""
    datasets = config["tasks"][task]["datasets"]
    return datasets.get("pairs", {}).get(pair, {}).get(lang, datasets["default"])


def commoncrawl_code(config: Mapping[str, Any], lang: str) -> str:
    """CC-100's name of ``lang`` (data.commoncrawl.codes; Chinese: zh-Hans), else the code."""
    return config["data"]["commoncrawl"].get("codes", {}).get(lang, lang)


def wikipedia_code(config: Mapping[str, Any], lang: str) -> str:
    """Wikipedia's name of ``lang`` (data.wikipedia.codes, the ``<code>wiki`` of its dumps),
    else the code."""
    return config["data"]["wikipedia"].get("codes", {}).get(lang, lang)


def template_file_names(config: Mapping[str, Any], section: str) -> set[str]:
    """Every file name ``data.<section>.url`` gives for the configured languages (a superset of
    those the rules download): what a ``data.<section>.sha256`` pin may be keyed by."""
    data = config["data"][section]
    languages = list(config["languages"])
    if section == "commoncrawl":
        fillings = [{"lang": commoncrawl_code(config, lang)} for lang in languages]
    elif section == "wikipedia":
        fillings = [{"lang": wikipedia_code(config, lang)} for lang in languages]
    elif section == "muse":
        fillings = [
            {"src": src, "tgt": tgt, "span": span}
            for src in languages
            for tgt in languages
            if src != tgt
            for span in MUSE_SPANS.values()
        ]
    elif section == "tatoeba":
        codes = data.get("codes", {}).values()
        fillings = [{"code": code, "side": side} for code in codes for side in (code, "eng")]
    elif section == "transformers":
        return set(data["files"])
    else:
        fillings = [{"lang": lang} for lang in languages]
    return {data["url"].format(**filling).rsplit("/", 1)[-1] for filling in fillings}


def ud_languages(dataset: Mapping[str, Any]) -> list[str]:
    """The languages of one UD dataset of config ``data.ud``: its treebanks', or a manual one's."""
    return list(dataset["languages"] if dataset.get("manual") else dataset["treebanks"])


def ud_source(config: Mapping[str, Any], dataset: str, lang: str) -> dict:
    """Where the UD dataset ``dataset`` of ``lang`` comes from (config ``data.ud.<dataset>``).

    Returns ``{"dataset", "lang", "splits"}`` with either ``download`` (the release's name in
    ``data.downloads``) and ``treebank`` (its folder in the release), or ``manual_dir`` (the
    files were put by hand under it). Raises ValueError naming the config key when the dataset
    or the language is not configured.
    """
    datasets = config["data"].get("ud", {})
    if dataset not in datasets:
        raise ValueError(
            f"no UD dataset {dataset!r} in config key 'data.ud' "
            f"(configured: {', '.join(sorted(datasets)) or 'none'})"
        )
    settings = datasets[dataset]
    if lang not in ud_languages(settings):
        key = "languages" if settings.get("manual") else "treebanks"
        raise ValueError(
            f"config key 'data.ud.{dataset}.{key}' has no {lang!r} (it has: "
            f"{', '.join(ud_languages(settings))}); add the language there or read another dataset"
        )
    source = {"dataset": dataset, "lang": lang, "splits": ud_splits(settings)}
    if settings.get("manual"):
        return source | {"manual_dir": config["data"]["manual_dir"]}
    return source | {"download": settings["download"], "treebank": settings["treebanks"][lang]}


def ud_splits(dataset: Mapping[str, Any]) -> list[str]:
    """The splits of a UD dataset of config ``data.ud``, in the order train, dev, test."""
    return [split for split in TASK_SPLITS if split in dataset["splits"]]
