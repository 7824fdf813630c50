"""Table 1 of Wu, Conneau et al. (2020) as the config asks for it: the bilingual models (every
pair with every variant), each task's grid of fine-tuning runs, and the table's cells.

Torch-free and cheap: the Snakefile plans from :func:`plan` at parse time
(:mod:`xling.study.checks.table1` rejects an inconsistent config before).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xling.finetune.grid import grid_points, hp_id
from xling.papers.wu2020 import WU_TASKS
from xling.study.keys import pair_languages, selected


@dataclass(frozen=True)
class Table1Plan:
    """What Table 1 builds for one study config."""

    pairs: tuple[str, ...]  # config `pairs`
    variants: tuple[str, ...]  # the rows to build: `select.variants`, else every variant
    tasks: tuple[str, ...]  # the tasks to fine-tune: `select.tasks`, else every one (POS too)
    grids: Mapping[str, Mapping[str, dict]]  # task -> grid point id -> hyperparameters
    # `finetune.runs_per_job`: 1 = one job per (pair, variant, task, grid point); N > 1 = the grid
    # points of a (pair, variant, task) N to a job, one after the other (runs too small to fill a
    # GPU share one); "model" = every task and grid point of one pretrained model in one process
    # (the demo)
    runs_per_job: int | str

    @property
    def packs_runs(self) -> bool:
        """Whether jobs hold N > 1 grid points of one task (``finetune.runs_per_job: N``)."""
        return isinstance(self.runs_per_job, int) and self.runs_per_job > 1

    def packs(self, task: str) -> list[tuple[str, ...]]:
        """The grid point ids of ``task`` job by job, for any (pair, variant): runs of one each,
        or consecutive ``runs_per_job`` in grid order (the last job may hold fewer)."""
        if not isinstance(self.runs_per_job, int):
            raise ValueError(
                f"finetune.runs_per_job {self.runs_per_job!r} puts every task in one job"
            )
        size = self.runs_per_job
        points = list(self.grids[task])
        return [tuple(points[first : first + size]) for first in range(0, len(points), size)]

    @property
    def models(self) -> list[tuple[str, str]]:
        """(pair, variant) of every bilingual model of the table."""
        return [(pair, variant) for pair in self.pairs for variant in self.variants]

    def cells(self) -> list[dict[str, str]]:
        """Every (variant, pair, task) cell this study computes, in a fixed order: the tasks
        that are Table 1's (a configured POS task is fine-tuned, not put there)."""
        return [
            {"variant": variant, "pair": pair, "task": task, "target": pair_languages(pair)[1]}
            for pair in self.pairs
            for variant in self.variants
            for task in self.tasks
            if task in WU_TASKS
        ]


def plan(config: Mapping[str, Any]) -> Table1Plan:
    """Table 1 of a validated config."""
    grids = {
        task: {hp_id(point): point for point in grid_points(task, settings["grid"])}
        for task, settings in config["tasks"].items()
    }
    return Table1Plan(
        pairs=tuple(config["pairs"]),
        variants=tuple(selected(config, "variants")),
        tasks=tuple(selected(config, "tasks")),
        grids=grids,
        runs_per_job=config["finetune"]["runs_per_job"],
    )
