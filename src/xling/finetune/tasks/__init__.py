"""The three Table 1 tasks behind one interface (:class:`Task`)."""

from __future__ import annotations

from xling.finetune.encoding import Tokenizer
from xling.finetune.settings import FinetuneSettings
from xling.finetune.tasks.base import Task, TaskModel
from xling.finetune.tasks.ner import NerTask
from xling.finetune.tasks.parsing import ParsingTask
from xling.finetune.tasks.xnli import XnliTask

TASK_NAMES = ("xnli", "ner", "parsing")


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
    if name == "xnli":
        return XnliTask(tokenizer)
    raise ValueError(f"unknown task {name!r}; expected one of {', '.join(TASK_NAMES)}")


__all__ = ["TASK_NAMES", "NerTask", "ParsingTask", "Task", "TaskModel", "XnliTask", "make_task"]
