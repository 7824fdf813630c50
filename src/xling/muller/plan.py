"""The runs of Muller et al. (2021) as the config ``muller`` asks for them, and its checks.

Two fine-tuning experiments:

* ``transfer`` (Tables 1, 4-8): fine-tune on each source language's training set, score the test
  set of every language. Every source runs the reference model and the Table 1 groups (pairs of
  layers); ``table5_source`` also runs the Table 5 groups.
* ``domain`` (Table 2): fine-tune on English in-domain data, score same-language sets of other
  domains and cross-language sets, with the Table 2 groups.

Where the two would train the same runs (the demo: ``domain`` trains on the transfer set of its
source, and Table 2's groups are Table 1's), ``domain`` reads the transfer runs, which also score
its other-domain sets (:func:`share_runs`), instead of training them again.

A run is one (experiment, task, source, RANDOM-INIT group, seed, grid point); every group runs the
same grid as the reference model (Muller, footnote 1). A job runs one run (``runs_per_job: 1``,
clusters) or every run of an (experiment, task, source) in one process (``all``: torch starts and
the data is read once, which the demo needs to fit its time budget).

Torch-free: the Snakefile plans from :func:`plan` at parse time, and :func:`check` rejects a bad
config, naming the key, before any job runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from xling.config import ConfigError
from xling.config_checks import StudyDatasets
from xling.finetune.grid import grid_points, hp_id
from xling.muller import REFERENCE

EXPERIMENTS = ("transfer", "domain")
TASK_KEYS = ("train", "test")  # keys of muller.tasks.<task> that are not fine-tuning settings
_GROUP = re.compile(r"^(all|\d+|\d+-\d+)$")


@dataclass(frozen=True)
class Evaluation:
    """A set a fine-tuned model is scored on: its name in tables, language and dataset."""

    name: str
    lang: str
    dataset: str


@dataclass(frozen=True)
class Setup:
    """One (experiment, task, source): its training dataset, evaluation sets and groups."""

    experiment: str
    task: str
    source: str
    train: str  # dataset of the source language's train and dev splits
    evaluations: tuple[Evaluation, ...]
    groups: tuple[str, ...]  # REFERENCE first
    # Sets the runs also score for a setup that reads them (share_runs), not reported as this one's
    shared_evaluations: tuple[Evaluation, ...] = ()
    runs_of: str = ""  # key of the setup whose runs this one reads; "" = its own runs

    @property
    def key(self) -> str:
        return f"{self.experiment}/{self.task}/{self.source}"

    @property
    def scored_evaluations(self) -> tuple[Evaluation, ...]:
        """Every set the setup's runs score: its own, then those of the setups reading them."""
        return self.evaluations + self.shared_evaluations


@dataclass(frozen=True)
class Run:
    setup: Setup
    group: str
    seed: int
    hp: str  # grid point id (xling.finetune.grid.hp_id)

    @property
    def path(self) -> str:
        """Where the run's outputs live, under ``muller/finetune/`` (a shared run's: under the
        setup that trains it)."""
        return f"{self.setup.runs_of or self.setup.key}/{self.group}/s{self.seed}/{self.hp}"


@dataclass(frozen=True)
class Study:
    """Everything the Muller stage builds for one config."""

    setups: tuple[Setup, ...]
    seeds: tuple[int, ...]
    grids: dict[str, dict[str, dict]]  # task -> hp id -> grid point
    runs_per_job: int | str
    layers: int
    similarity_sources: tuple[str, ...]
    similarity_groups: tuple[str, ...]  # REFERENCE and Figure 2's group

    def runs(self, setup: Setup) -> list[Run]:
        return [
            Run(setup, group, seed, hp)
            for group in setup.groups
            for seed in self.seeds
            for hp in self.grids[setup.task]
        ]

    def jobs(self, setup: Setup) -> list[str]:
        """Job ids of a setup: ``all``, or one per run (its path below the setup); none for a
        setup that reads another's runs."""
        if setup.runs_of:
            return []
        if self.runs_per_job == "all":
            return ["all"]
        return [run.path.removeprefix(setup.key + "/") for run in self.runs(setup)]

    def setup(self, experiment: str, task: str, source: str) -> Setup:
        for setup in self.setups:
            if (setup.experiment, setup.task, setup.source) == (experiment, task, source):
                return setup
        raise KeyError(f"no Muller setup {experiment}/{task}/{source}")

    def measures_similarity(self, run: Run) -> bool:
        """Whether a run also writes the cross-lingual similarity of its fine-tuned model."""
        return (
            run.setup.experiment == "transfer"
            and run.setup.source in self.similarity_sources
            and run.group in self.similarity_groups
        )


def _unique(items) -> tuple:
    return tuple(dict.fromkeys(items))


def _train_dataset(section: Mapping[str, Any], task: str, source: str) -> str:
    train = section["tasks"][task]["train"]
    dataset = train.get(source, train.get("default"))
    if dataset is None:
        raise ConfigError(
            f"config key 'muller.tasks.{task}.train' names no training dataset for source "
            f"language {source!r}: add `{source}: <dataset>` or a `default`"
        )
    return dataset


def test_dataset(section: Mapping[str, Any], task: str, lang: str) -> str:
    """The dataset whose test split ``lang`` is scored on: ``test`` is one name, or a mapping
    by language with a ``default`` (UD has no Slovenian PUD treebank)."""
    test = section["tasks"][task]["test"]
    if isinstance(test, str):
        return test
    dataset = test.get(lang, test.get("default"))
    if dataset is None:
        raise ConfigError(
            f"config key 'muller.tasks.{task}.test' names no test dataset for {lang!r}: "
            f"add `{lang}: <dataset>` or a `default`"
        )
    return dataset


def similarity_languages(section: Mapping[str, Any]) -> list[str]:
    """The languages of the similarity analysis: ``similarity.languages``, else every one."""
    return list(section["similarity"].get("languages") or section["languages"])


def plan(config: Mapping[str, Any]) -> Study | None:
    """The Muller study of a validated config, or None without a ``muller`` section."""
    section = config.get("muller")
    if not section:
        return None
    groups = section["groups"]
    setups = []
    for task in section["tasks"]:
        for source in section["sources"]:
            extra = groups["table5"] if source == section["table5_source"] else []
            evaluations = tuple(
                Evaluation(lang, lang, test_dataset(section, task, lang))
                for lang in section["languages"]
            )
            setups.append(
                Setup(
                    "transfer",
                    task,
                    source,
                    _train_dataset(section, task, source),
                    evaluations,
                    _unique([REFERENCE, *groups["table1"], *extra]),
                )
            )
    domain = section["domain"]
    for task, settings in domain["tasks"].items():
        evaluations = tuple(
            Evaluation(name, spec["lang"], spec["dataset"])
            for name, spec in settings["evaluations"].items()
        )
        groups_2 = _unique([REFERENCE, *groups["table2"]])
        setups.append(
            Setup("domain", task, domain["source"], settings["train"], evaluations, groups_2)
        )
    grids = {
        task: {hp_id(point): point for point in grid_points(task, settings["grid"])}
        for task, settings in section["tasks"].items()
    }
    similarity = section["similarity"]
    return Study(
        setups=share_runs(setups),
        seeds=tuple(section["seeds"]),
        grids=grids,
        runs_per_job=section["runs_per_job"],
        layers=model_layers(config),
        similarity_sources=tuple(similarity["sources"]),
        similarity_groups=_unique([REFERENCE, similarity["random_init_group"]]),
    )


def share_runs(setups: list[Setup]) -> tuple[Setup, ...]:
    """The setups, each ``domain`` setup that would train exactly some ``transfer`` setup's runs
    reading those instead: same task, source and training set (so the same settings, seeds and
    grid, which are per task), its groups among the transfer's, and each of its evaluation sets
    either one of the transfer's or a name the transfer does not use. The transfer setup then
    also scores the other sets (``shared_evaluations``); its own tables do not see them."""
    shared = list(setups)
    for index, setup in enumerate(shared):
        if setup.experiment != "domain":
            continue
        found = (i for i, other in enumerate(shared) if _can_read_runs(setup, other))
        trainer_index = next(found, None)
        if trainer_index is None:
            continue
        trainer = shared[trainer_index]
        extra = tuple(e for e in setup.evaluations if e not in trainer.scored_evaluations)
        shared[trainer_index] = replace(
            trainer, shared_evaluations=trainer.shared_evaluations + extra
        )
        shared[index] = replace(setup, runs_of=trainer.key)
    return tuple(shared)


def _can_read_runs(reader: Setup, trainer: Setup) -> bool:
    if trainer.experiment != "transfer" or trainer.runs_of:
        return False
    if (reader.task, reader.source, reader.train) != (trainer.task, trainer.source, trainer.train):
        return False
    if not set(reader.groups) <= set(trainer.groups):
        return False
    by_name = {e.name: e for e in trainer.scored_evaluations}
    return all(by_name.get(e.name, e) == e for e in reader.evaluations)


def model_layers(config: Mapping[str, Any]) -> int:
    model = config["muller"]["model"]
    if model["source"] == "pretrain":
        return model.get("architecture", {}).get("layers", config["model"]["layers"])
    return model["layers"]


# ----------------------------------------------------------------------------- checks
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
            dataset = _train_dataset(section, task, source)
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


def _sim_group_key() -> str:
    return "muller.similarity.random_init_group"


def _check_tasks(section: Mapping[str, Any]) -> None:
    from xling.errors import SettingsError
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
            _train_dataset(section, task, source)
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


def finetune_fields(section: Mapping[str, Any], task: str) -> dict:
    """The ``FinetuneSettings`` keys of ``muller.tasks.<task>``, without its grid (a new grid
    point must not retrain the runs of the others)."""
    from xling.finetune.settings import run_settings  # torch-free

    fields = run_settings(section["tasks"][task])
    return {key: value for key, value in fields.items() if key not in TASK_KEYS}
