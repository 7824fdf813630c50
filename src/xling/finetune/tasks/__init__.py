"""The three Table 1 tasks behind one interface (:class:`Task`)."""

from __future__ import annotations

from collections.abc import Sequence

from xling.finetune.encoding import Tokenizer
from xling.finetune.tasks.base import Task, TaskModel
from xling.finetune.tasks.ner import NerTask
from xling.finetune.tasks.parsing import ParsingTask
from xling.finetune.tasks.xnli import XnliTask

TASK_NAMES = ("xnli", "ner", "parsing")


def make_task(
    name: str,
    tokenizer: Tokenizer,
    *,
    ner_labels: Sequence[str] | None = None,
    parser_arc_dim: int = 512,
    parser_label_dim: int = 128,
    exclude_punct: bool = False,
) -> Task:
    """The task object for ``name``; options that do not concern it are ignored."""
    if name == "ner":
        return NerTask(tokenizer, labels=ner_labels)
    if name == "parsing":
        return ParsingTask(
            tokenizer,
            arc_dim=parser_arc_dim,
            label_dim=parser_label_dim,
            exclude_punct=exclude_punct,
        )
    if name == "xnli":
        return XnliTask(tokenizer)
    raise ValueError(f"unknown task {name!r}; expected one of {', '.join(TASK_NAMES)}")


__all__ = ["TASK_NAMES", "NerTask", "ParsingTask", "Task", "TaskModel", "XnliTask", "make_task"]
