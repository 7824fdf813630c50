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
    # `finetune.runs_per_job`: 1 = one job per (pair, variant, task, grid point), as a cluster
    # wants; "model" = every task and grid point of one pretrained model in one process (the demo)
    runs_per_job: int | str

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
