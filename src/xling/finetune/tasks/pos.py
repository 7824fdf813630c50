"""UPOS tagging on the first subword of each word, scored by word-level accuracy (Muller et al.
2021, "First Align, then Predict": the POS task of their Table 2)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from xling.contracts.conllu import (
    UPOS_TAGS,
    ParsedSentence,
    read_conllu,
    write_upos_predictions,
)
from xling.finetune.encoding import Tokenizer
from xling.finetune.metrics import ItemCounts, tag_accuracy_items
from xling.finetune.tasks.base import TaskModel
from xling.finetune.tasks.tagging import WordTaggingTask

# What a word cut by the length limit is "predicted": CoNLL-U's empty value, never a gold UPOS.
NO_PREDICTION = "_"


class PosTask(WordTaggingTask):
    """Part-of-speech tagging over the 17 universal UPOS tags, from the UD treebanks of parsing.

    A linear softmax classifier on the first subword of each word (as NER); the label inventory is
    fixed (:data:`UPOS_TAGS`), and a tag outside it in any file stops with its file and line.
    Metric ``upos``: accuracy over every word of every sentence. A word cut by the length limit has
    no prediction (written ``_``) and counts as wrong, as cut words count as errors for NER and
    parsing. Learning rate: linear warmup over the first 10% of batches, then linear decay to 0
    (Muller et al. 2021, A.1.1).
    """

    name = "pos"
    metric = "upos"
    prediction_extension = "conllu"
    lr_schedule = "warmup_linear"
    cut_word_tag = NO_PREDICTION

    def __init__(self, tokenizer: Tokenizer):
        super().__init__(tokenizer)
        self.labels: list[str] | None = list(UPOS_TAGS)

    def read(self, path: str | Path, lang: str, split: str) -> list[ParsedSentence]:
        return read_conllu(path, require_upos=True)

    def gold_tags(self, example: ParsedSentence) -> list[str]:
        return example.upos

    def predict(
        self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str
    ) -> list[list[str]]:
        return self.predicted_tags(model, batch, lang)

    def item_counts(
        self, examples: Sequence[ParsedSentence], predictions: Sequence[list[str]]
    ) -> ItemCounts:
        return tag_accuracy_items([s.upos for s in examples], predictions)

    def write_predictions(
        self,
        path: str | Path,
        lang: str,
        examples: Sequence[ParsedSentence],
        predictions: Sequence[list[str]],
    ) -> None:
        write_upos_predictions(path, examples, predictions)
