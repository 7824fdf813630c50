"""Every setting of one fine-tuning job: the keys of a config ``tasks.<task>`` section, plus the
seed and source language the workflow gives each run.

Field names are the config keys (config/schema.yaml, ``tasks``), so a section goes in as it is:
``FinetuneSettings.from_config("ner", config["tasks"]["ner"], seed=0)``. Defaults are the paper's
(Wu, Conneau et al. 2020, section 3.2) or, where it names none, the authors' code's. Torch-free, so
that a bad config fails in milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any

from xling.base.errors import SettingsError
from xling.finetune.grid import TASK_HP_KEYS

# Keys of a tasks.<task> section that describe the grid and the selection over it, not one run.
GRID_LEVEL_KEYS = ("grid", "best_k", "datasets")
# Fields each run gets from the workflow (study seed, the pair's source), never from the section.
RUN_FIELDS = ("seed", "source_lang")
MIN_LENGTH = 3  # two boundary tokens and one word


def run_settings(section: Mapping[str, Any]) -> dict:
    """A ``tasks.<task>`` section without its ``GRID_LEVEL_KEYS``: what each of its runs trains
    with, the settings in a run's params and fingerprint, so that a new grid point or another
    ``best_k`` leaves the finished runs alone (the data files are inputs of their own)."""
    return {key: value for key, value in section.items() if key not in GRID_LEVEL_KEYS}


class FinetuneSettingError(SettingsError):
    """One setting with a value that cannot work: names the setting and the fix."""

    def __init__(self, key: str, problem: str, fix: str) -> None:
        self.key, self.problem, self.fix = key, problem, fix
        super().__init__(f"fine-tuning setting {key}: {problem}. Fix: {fix}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class FinetuneSettings:
    """Settings of one fine-tuning job (a model, a task, a grid point).

    ``max_length`` limits training inputs in subwords, boundaries included (evaluation uses the
    model's ``max_positions``). ``epoch_size``: training examples per epoch (XLM's XNLI epochs of
    20k pairs); None = one pass. ``head_dropout`` None takes the encoder's dropout. ``labels``: the
    NER tag inventory; None takes the tags of the training file. ``arc_dim``/``label_dim``: the
    biaffine parser's MLP sizes; ``exclude_punct`` scores LAS without PUNCT/SYM words.
    ``group_by_length`` trains on batches of similar length (less padding to compute) in random
    order instead of random batches. Options of another task are ignored.
    """

    epochs: int
    max_length: int
    seed: int
    source_lang: str = "en"
    epoch_size: int | None = None
    head_dropout: float | None = None
    labels: tuple[str, ...] | None = None
    arc_dim: int = 512  # not stated in the paper; the authors' code (crosslingual-nlp)
    label_dim: int = 128
    exclude_punct: bool = False  # CoNLL 2018 scores every word, punctuation included
    eval_batch_size: int = 64
    group_by_length: bool = False  # batches of similar length (training.group_by_length)

    def __post_init__(self) -> None:
        self._check_counts()
        if not _is_int(self.seed):
            raise FinetuneSettingError("seed", f"{self.seed!r} is not a whole number", "use one")
        if not isinstance(self.source_lang, str) or not self.source_lang:
            raise FinetuneSettingError(
                "source_lang", f"{self.source_lang!r} is not a language code", "use one, e.g. en"
            )
        dropout = self.head_dropout
        if dropout is not None and not (_is_number(dropout) and 0 <= dropout <= 1):
            raise FinetuneSettingError(
                "head_dropout",
                f"{dropout!r} is not a probability",
                "use a number in [0, 1], or leave it out to take the encoder's dropout",
            )
        if self.labels is not None:
            object.__setattr__(self, "labels", self._checked_labels(self.labels))
        for key in ("exclude_punct", "group_by_length"):
            if not isinstance(getattr(self, key), bool):
                raise FinetuneSettingError(
                    key, f"{getattr(self, key)!r} is not true or false", "use a boolean"
                )

    def _check_counts(self) -> None:
        minimums = {"epochs": 1, "max_length": MIN_LENGTH, "arc_dim": 1, "label_dim": 1}
        minimums |= {"eval_batch_size": 1}
        if self.epoch_size is not None:
            minimums["epoch_size"] = 1
        for key, minimum in minimums.items():
            value = getattr(self, key)
            if not _is_int(value) or value < minimum:
                fix = f"use a whole number >= {minimum}"
                if key == "epoch_size":
                    fix += ", or leave it out for one pass over the training file per epoch"
                if key == "max_length":
                    fix += " (two boundary tokens and at least one word)"
                raise FinetuneSettingError(key, f"{value!r} is not allowed", fix)

    @staticmethod
    def _checked_labels(labels: object) -> tuple[str, ...]:
        fix = "give a list of distinct tags, e.g. [O, B-PER, I-PER], or leave it out"
        if isinstance(labels, str | bytes) or not isinstance(labels, list | tuple):
            raise FinetuneSettingError("labels", f"{labels!r} is not a list of tags", fix)
        if not labels or not all(isinstance(tag, str) and tag for tag in labels):
            raise FinetuneSettingError("labels", f"{labels!r} is not a list of tags", fix)
        if len(set(labels)) != len(labels):
            raise FinetuneSettingError("labels", f"{list(labels)} repeats a tag", fix)
        return tuple(labels)

    @classmethod
    def config_keys(cls) -> list[str]:
        """The keys of a ``tasks.<task>`` section for one run: every field but ``RUN_FIELDS``."""
        return [f.name for f in fields(cls) if f.name not in RUN_FIELDS]

    @classmethod
    def from_config(
        cls, task: str, section: Mapping[str, Any], *, seed: int, source_lang: str = "en"
    ) -> FinetuneSettings:
        """Settings from the config section ``tasks.<task>`` as it is.

        ``GRID_LEVEL_KEYS`` are skipped (the workflow reads them); any other key must be a field.
        Errors name the config key, e.g. ``tasks.ner.epochs``.
        """
        if task not in TASK_HP_KEYS:
            raise SettingsError(
                f"unknown task {task!r}; expected one of {', '.join(TASK_HP_KEYS)} "
                "(config key 'tasks')"
            )
        known = cls.config_keys()
        for key in section:
            if key not in known and key not in GRID_LEVEL_KEYS:
                raise SettingsError(
                    f"config key 'tasks.{task}.{key}' is not a fine-tuning setting; "
                    f"known keys: {', '.join([*known, *GRID_LEVEL_KEYS])}"
                )
        required = [f.name for f in fields(cls) if f.default is MISSING and f.name in known]
        for key in required:
            if key not in section:
                raise SettingsError(f"config key 'tasks.{task}.{key}' is missing; add it")
        values = run_settings(section)
        try:
            return cls(**values, seed=seed, source_lang=source_lang)
        except FinetuneSettingError as error:
            where = f"config key 'tasks.{task}.{error.key}'"
            if error.key in RUN_FIELDS:
                where = f"fine-tuning {error.key} for tasks.{task}"
            raise SettingsError(f"{where}: {error.problem}. Fix: {error.fix}") from None
