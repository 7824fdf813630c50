"""The runs of Muller et al. (2021) as the config ``muller`` asks for them.

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

Torch-free: the Snakefile plans from :func:`plan` at parse time (:mod:`xling.study.checks.muller`
rejects a bad config, naming the key, before).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from xling.finetune.grid import grid_points, hp_id
from xling.muller import REFERENCE
from xling.study.keys import ConfigError

EXPERIMENTS = ("transfer", "domain")


TASK_KEYS = ("train", "test")  # keys of muller.tasks.<task> that are not fine-tuning settings


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
class MullerPlan:
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


def _dataset_for(section: Mapping[str, Any], task: str, key: str, lang: str, what: str) -> str:
    """The dataset ``muller.tasks.<task>.<key>`` names for ``lang``: one name for every language,
    or a mapping by language with a ``default``."""
    datasets = section["tasks"][task][key]
    if isinstance(datasets, str):
        return datasets
    dataset = datasets.get(lang, datasets.get("default"))
    if dataset is None:
        raise ConfigError(
            f"config key 'muller.tasks.{task}.{key}' names no {what} {lang!r}: "
            f"add `{lang}: <dataset>` or a `default`"
        )
    return dataset


def train_dataset(section: Mapping[str, Any], task: str, source: str) -> str:
    """The dataset whose train and dev splits the runs of ``source`` fine-tune on."""
    return _dataset_for(section, task, "train", source, "training dataset for source language")


def test_dataset(section: Mapping[str, Any], task: str, lang: str) -> str:
    """The dataset whose test split ``lang`` is scored on (UD has no Slovenian PUD treebank, so
    a language may have its own)."""
    return _dataset_for(section, task, "test", lang, "test dataset for")


def similarity_languages(section: Mapping[str, Any]) -> list[str]:
    """The languages of the similarity analysis: ``similarity.languages``, else every one."""
    return list(section["similarity"].get("languages") or section["languages"])


def plan(config: Mapping[str, Any]) -> MullerPlan | None:
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
                    train_dataset(section, task, source),
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
    return MullerPlan(
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


def finetune_fields(section: Mapping[str, Any], task: str) -> dict:
    """The ``FinetuneSettings`` keys of ``muller.tasks.<task>``, without its grid (a new grid
    point must not retrain the runs of the others)."""
    from xling.finetune.settings import run_settings  # torch-free

    fields = run_settings(section["tasks"][task])
    return {key: value for key, value in fields.items() if key not in TASK_KEYS}
