"""Zero-shot fine-tuning for XNLI, NER and parsing (Wu, Conneau et al. 2020, section 3.2), and POS
tagging (Muller et al. 2021).

The torch-free parts (grids, settings, selection, metrics) import cheaply, so the Snakefile can
use them at parse time; ``run_finetune`` and the models load torch on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from xling.finetune.grid import TASK_HP_KEYS, grid_points, hp_id, normalize_hp, parse_hp_id
from xling.finetune.select import select_best
from xling.finetune.settings import FinetuneSettings

_LAZY = {
    "FinetuneJob": "xling.finetune.run",
    "run_finetune": "xling.finetune.run",
    "TaskData": "xling.finetune.data",
    "freeze_language_specific": "xling.finetune.run",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "TASK_HP_KEYS",
    "FinetuneJob",
    "FinetuneSettings",
    "TaskData",
    "freeze_language_specific",
    "grid_points",
    "hp_id",
    "normalize_hp",
    "parse_hp_id",
    "run_finetune",
    "select_best",
]
