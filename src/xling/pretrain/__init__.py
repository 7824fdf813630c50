"""Masked-LM pretraining of bilingual and monolingual encoders (Wu, Conneau et al. 2020, 3.1)."""

from xling.pretrain.engine import pretrain, pretrain_in_folder
from xling.pretrain.job import PretrainJob
from xling.pretrain.progress import plot_curve, read_curve
from xling.pretrain.settings import PretrainSettings, paper_total_steps

__all__ = [
    "PretrainJob",
    "PretrainSettings",
    "paper_total_steps",
    "plot_curve",
    "pretrain",
    "pretrain_in_folder",
    "read_curve",
]
