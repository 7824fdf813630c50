"""The fine-tuning tasks behind one interface (:class:`Task`): Wu, Conneau et al. (2020)'s Table 1
tasks (XNLI, NER, parsing) and Muller et al. (2021)'s POS tagging."""

from __future__ import annotations

from xling.finetune.encoding import Tokenizer
from xling.finetune.settings import FinetuneSettings
from xling.finetune.tasks.base import Task, TaskModel
from xling.finetune.tasks.ner import NerTask
from xling.finetune.tasks.parsing import ParsingTask
from xling.finetune.tasks.pos import PosTask
from xling.finetune.tasks.xnli import XnliTask

# Every task run_finetune knows; which of them a paper reports is the paper's business
# (xling.papers.wu2020.WU_TASKS for Table 1).
TASK_NAMES = ("xnli", "ner", "parsing", "pos")


def make_task(name: str, tokenizer: Tokenizer, settings: FinetuneSettings | None = None) -> Task:
    """The task object for ``name``, with its options from ``settings`` (None: the task's defaults).

    Settings that do not concern the task are ignored.
    """
    if name == "ner":
        return NerTask(tokenizer) if settings is None else NerTask(tokenizer, settings.labels)
    if name == "parsing":
        if settings is None:
            return ParsingTask(tokenizer)
        return ParsingTask(
            tokenizer,
            arc_dim=settings.arc_dim,
            label_dim=settings.label_dim,
            exclude_punct=settings.exclude_punct,
        )
    if name == "pos":
        return PosTask(tokenizer)
    if name == "xnli":
        return XnliTask(tokenizer)
    raise ValueError(f"unknown task {name!r}; expected one of {', '.join(TASK_NAMES)}")


__all__ = [
    "TASK_NAMES",
    "NerTask",
    "ParsingTask",
    "PosTask",
    "Task",
    "TaskModel",
    "XnliTask",
    "make_task",
]
