"""NER as BIO tagging on the first subword of each word, scored by span F1 after the repair."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from xling.base.errors import DataFormatError
from xling.contracts.ner import TaggedSentence, read_ner, write_ner_predictions
from xling.finetune.encoding import Tokenizer
from xling.finetune.metrics import OUTSIDE, ItemCounts, repair_bio, span_f1_items
from xling.finetune.tasks.base import TaskModel
from xling.finetune.tasks.tagging import WordTaggingTask


class NerTask(WordTaggingTask):
    """BIO tagging with a linear softmax classifier (Wu, Conneau et al. 2020, section 3.2).

    ``labels`` fixes the tag inventory; None takes the tags of the training file. A dev/test tag
    outside the inventory stops with its file and line (the model could never predict it).
    Predictions are repaired (:func:`repair_bio`) before they are scored and written. Words cut by
    the length limit are predicted O (and so count as misses if they belong to an entity).
    """

    name = "ner"
    metric = "span_f1"
    prediction_extension = "txt"
    cut_word_tag = OUTSIDE

    def __init__(self, tokenizer: Tokenizer, labels: Sequence[str] | None = None):
        super().__init__(tokenizer)
        self.labels: list[str] | None = list(labels) if labels is not None else None

    def read(self, path: str | Path, lang: str, split: str) -> list[TaggedSentence]:
        return read_ner(path, lang)

    def fit_labels(self, train_examples: Sequence[TaggedSentence]) -> None:
        if self.labels is None:
            seen = {tag for sentence in train_examples for tag in sentence.tags}
            # O first, then by entity type and B before I: stable across runs and readable.
            self.labels = [OUTSIDE, *sorted(seen - {OUTSIDE}, key=lambda t: (t[2:], t[0]))]

    def gold_tags(self, example: TaggedSentence) -> list[str]:
        return example.tags

    def check_tags(self, example: TaggedSentence) -> None:
        known = set(self.label_index)
        for i, tag in enumerate(example.tags):
            if tag not in known:
                raise DataFormatError(
                    example.path,
                    example.line + i,
                    f"tag {tag!r} is not among the tags learned from training: {self.labels}",
                    "list every tag of the datasets under config key tasks.ner.labels",
                )

    def predict(
        self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str
    ) -> list[list[str]]:
        return [repair_bio(tags) for tags in self.predicted_tags(model, batch, lang)]

    def item_counts(
        self, examples: Sequence[TaggedSentence], predictions: Sequence[list[str]]
    ) -> ItemCounts:
        return span_f1_items([s.tags for s in examples], predictions)

    def write_predictions(
        self,
        path: str | Path,
        lang: str,
        examples: Sequence[TaggedSentence],
        predictions: Sequence[list[str]],
    ) -> None:
        write_ner_predictions(path, lang, examples, predictions)
