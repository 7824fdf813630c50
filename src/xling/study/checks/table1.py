"""Checks of Table 1's rows (``variants``), the selection and the fine-tuning grids; and the
expansion of ``<name>: paper`` under ``variants`` into that row's settings from
:mod:`xling.papers.wu2020`, so that the rest of the workflow only ever sees full mappings."""

from __future__ import annotations

from xling.papers.wu2020 import BUILD_KEYS, TABLE1_ROWS
from xling.study.keys import PAPER_ROW, ConfigError


def check(config: dict) -> None:
    """Rows (after :func:`expand_paper_rows`), the selection and the grids."""
    check_variants(config)
    check_selection(config)
    check_grids(config)


def expand_paper_rows(config: dict) -> None:
    """Replace every ``<name>: paper`` under ``variants`` by the paper's settings of that row.

    A full mapping under the name of a paper row must build the paper's model: the report prints
    the paper's numbers beside it. Only ``label`` may differ (it only renames the row).
    """
    variants = config["variants"]
    for name, variant in variants.items():
        row = TABLE1_ROWS.get(name)
        if variant == PAPER_ROW:
            if row is None:
                raise ConfigError(
                    f"config key 'variants.{name}': {PAPER_ROW!r} stands for a row of Wu et al. "
                    f"(2020) Table 1, and {name!r} is not one (its rows: "
                    f"{', '.join(TABLE1_ROWS)}); give a new row its settings: "
                    f"{{{', '.join(BUILD_KEYS)}}}"
                )
            variants[name] = row.settings()
        elif row is not None:
            for key in BUILD_KEYS:
                if variant[key] != getattr(row, key):
                    raise ConfigError(
                        f"config key 'variants.{name}.{key}': {variant[key]!r}, but Wu et al. "
                        f"(2020) Table 1 builds {name} with {key}={getattr(row, key)!r}; write "
                        f"'{name}: {PAPER_ROW}' for the paper's row, or give this row another "
                        f"name (it is then added to Table 1)"
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
