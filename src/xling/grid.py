"""Readable ids of hyperparameter settings, used in file paths (see xling.finetune.grid).

Kept free of heavy imports: the Snakefile calls it at parse time, and every cluster job parses it.
"""

from __future__ import annotations

from collections.abc import Mapping

# Short names keep the paths readable; unknown keys are used as they are.
SHORT_NAMES = {"batch_size": "bs", "lr": "lr", "encoder_lr": "elr", "classifier_lr": "clr"}


def format_value(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return format(value, "g")


def grid_id(point: Mapping[str, object]) -> str:
    """``{"batch_size": 16, "lr": 5e-05}`` -> ``"bs16_lr5e-05"`` (keys in the given order)."""
    return "_".join(f"{SHORT_NAMES.get(k, k)}{format_value(v)}" for k, v in point.items())
