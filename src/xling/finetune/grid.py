"""Hyperparameter grids as lists of grid points with stable ids usable in file paths.

The one id scheme of the workflow. Kept free of torch so that the Snakefile can expand grids in
milliseconds (every cluster job parses it again).

Paper grids (Wu, Conneau et al. 2020, section 3.2)::

    ner, parsing: {batch_size: [16, 32], lr: [2e-5, 3e-5, 5e-5]}
    xnli:         {batch_size: [4, 8], encoder_lr: [1.25e-6, 2.5e-6, 5e-6],
                   classifier_lr: [5e-6, 2.5e-5, 1.25e-4]}

POS tagging (Muller et al. 2021) has the keys of NER and parsing: batch size and one learning rate.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence

# The order of the parts of an id and their short names (short names keep the paths readable).
SHORT_NAMES = {"batch_size": "bs", "lr": "lr", "encoder_lr": "elr", "classifier_lr": "clr"}
LONG_NAMES = {short: long for long, short in SHORT_NAMES.items()}
INTEGER_KEYS = frozenset({"batch_size"})
TASK_HP_KEYS = {
    "ner": ("batch_size", "lr"),
    "parsing": ("batch_size", "lr"),
    "pos": ("batch_size", "lr"),
    "xnli": ("batch_size", "encoder_lr", "classifier_lr"),
}
_PART = re.compile(r"^([a-z]+)([0-9].*)$")


def _value(key: str, value: object) -> int | float:
    """Validate and normalise one value (YAML 1.1 reads ``2e-5`` as a string, so strings pass)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"hyperparameter {key}: {value!r} is not a number") from None
    if not number > 0:
        raise ValueError(f"hyperparameter {key}: {value!r} must be positive")
    if key in INTEGER_KEYS:
        if number != int(number):
            raise ValueError(f"hyperparameter {key}: {value!r} must be a whole number")
        return int(number)
    return number


def normalize_hp(task: str, hp: Mapping[str, object]) -> dict[str, int | float]:
    """Check that ``hp`` has exactly the task's keys, and normalise the values' types."""
    if task not in TASK_HP_KEYS:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASK_HP_KEYS)}")
    expected = TASK_HP_KEYS[task]
    if set(hp) != set(expected):
        raise ValueError(
            f"{task} hyperparameters must be exactly {list(expected)}, got {sorted(hp)}"
        )
    return {key: _value(key, hp[key]) for key in expected}


def grid_points(task: str, grid: Mapping[str, Sequence[object]]) -> list[dict[str, int | float]]:
    """All combinations of the grid's values, in a stable order (keys as in ``TASK_HP_KEYS``)."""
    if task not in TASK_HP_KEYS:
        raise ValueError(f"unknown task {task!r}; expected one of {', '.join(TASK_HP_KEYS)}")
    keys = TASK_HP_KEYS[task]
    if set(grid) != set(keys):
        raise ValueError(f"the {task} grid must list exactly {list(keys)}, got {sorted(grid)}")
    for key in keys:
        values = grid[key]
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise ValueError(f"grid {task}.{key} must be a non-empty list, got {values!r}")
    points = [
        normalize_hp(task, dict(zip(keys, combo, strict=True)))
        for combo in itertools.product(*(grid[key] for key in keys))
    ]
    ids = [hp_id(point) for point in points]
    if len(set(ids)) != len(ids):
        raise ValueError(f"the {task} grid repeats a value: {ids}")
    return points


def format_value(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return format(value, "g")


def grid_id(point: Mapping[str, object]) -> str:
    """``{"batch_size": 16, "lr": 5e-05}`` -> ``"bs16_lr5e-05"`` (keys in the given order; keys
    without a short name are used as they are)."""
    return "_".join(f"{SHORT_NAMES.get(k, k)}{format_value(v)}" for k, v in point.items())


def hp_id(hp: Mapping[str, int | float]) -> str:
    """A readable, path-safe id: ``bs16_lr5e-05``, ``bs4_elr1.25e-06_clr5e-06``.

    Formatting is :func:`grid_id`'s, with the keys in a fixed order whatever the order of ``hp``.
    """
    unknown = set(hp) - set(SHORT_NAMES)
    if unknown:
        raise ValueError(f"unknown hyperparameters {sorted(unknown)}; known: {list(SHORT_NAMES)}")
    return grid_id({key: _value(key, hp[key]) for key in SHORT_NAMES if key in hp})


def parse_hp_id(text: str) -> dict[str, int | float]:
    """Inverse of :func:`hp_id`: ``"bs16_lr5e-05"`` -> ``{"batch_size": 16, "lr": 5e-05}``."""
    hp: dict[str, int | float] = {}
    for part in text.split("_"):
        match = _PART.match(part)
        if not match or match.group(1) not in LONG_NAMES:
            raise ValueError(
                f"{text!r} is not a grid point id: part {part!r} should be one of "
                f"{list(LONG_NAMES)} followed by a number (e.g. bs16_lr5e-05)"
            )
        key = LONG_NAMES[match.group(1)]
        hp[key] = _value(key, match.group(2))
    if hp_id(hp) != text:
        raise ValueError(f"{text!r} is not in canonical form; expected {hp_id(hp)!r}")
    return hp
