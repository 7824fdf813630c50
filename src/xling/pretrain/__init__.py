"""Masked-LM pretraining of bilingual and monolingual encoders (Wu, Conneau et al. 2020, 3.1).

The names below load on first use, so that a torch-free module of the package
(:mod:`xling.pretrain.batching`) serves the planning tools without torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xling.pretrain.engine import pretrain, pretrain_in_folder
    from xling.pretrain.job import PretrainJob
    from xling.pretrain.progress import plot_curve, read_curve
    from xling.pretrain.settings import PretrainSettings, paper_total_steps

_HOMES = {
    "PretrainJob": "xling.pretrain.job",
    "PretrainSettings": "xling.pretrain.settings",
    "paper_total_steps": "xling.pretrain.settings",
    "plot_curve": "xling.pretrain.progress",
    "pretrain": "xling.pretrain.engine",
    "pretrain_in_folder": "xling.pretrain.engine",
    "read_curve": "xling.pretrain.progress",
}
__all__ = [
    "PretrainJob",
    "PretrainSettings",
    "paper_total_steps",
    "plot_curve",
    "pretrain",
    "pretrain_in_folder",
    "read_curve",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
