"""NER as BIO tagging on the first subword of each word, scored by span F1 after the repair."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from xling.contracts.ner import TaggedSentence, read_ner, write_ner_predictions
from xling.errors import DataFormatError
from xling.finetune.encoding import Tokenizer, encode_words, pad
from xling.finetune.heads import WordTagger
from xling.finetune.metrics import OUTSIDE, repair_bio, span_f1
from xling.finetune.tasks.base import Task, TaskModel

IGNORE = -100


class NerTask(Task):
    """BIO tagging with a linear softmax classifier (Wu, Conneau et al. 2020, section 3.2).

    ``labels`` fixes the tag inventory; None takes the tags of the training file. A dev/test tag
    outside the inventory stops with its file and line (the model could never predict it).
    Predictions are repaired (:func:`repair_bio`) before they are scored and written.
    """

    name = "ner"
    metric = "span_f1"
    prediction_extension = "txt"

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

    @property
    def label_index(self) -> dict[str, int]:
        if self.labels is None:
            raise RuntimeError("call fit_labels() before encoding")
        return {label: i for i, label in enumerate(self.labels)}

    def encode(
        self, examples: Sequence[TaggedSentence], lang: str, max_length: int
    ) -> list[dict[str, Any]]:
        index = self.label_index
        items = []
        for sentence in examples:
            for i, tag in enumerate(sentence.tags):
                if tag not in index:
                    raise DataFormatError(
                        sentence.path,
                        sentence.line + i,
                        f"tag {tag!r} is not among the tags learned from training: {self.labels}",
                        "pass the full tag set as the NER labels in config",
                    )
            aligned = encode_words(
                self.tokenizer, sentence.words, lang, max_length, sentence.where()
            )
            items.append(
                {
                    "input_ids": aligned.input_ids,
                    "first_subword": aligned.first_subword,
                    "labels": [index[t] for t in sentence.tags[: aligned.kept_words]],
                    "words": len(sentence.words),
                }
            )
        return items

    def collate(self, items: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        return {
            "input_ids": pad([it["input_ids"] for it in items], self.tokenizer.pad_id),
            "first_subword": pad([it["first_subword"] for it in items], 0),
            "labels": pad([it["labels"] for it in items], IGNORE),
            "words": torch.tensor([it["words"] for it in items]),
        }

    def build_head(self, dim: int, dropout: float) -> nn.Module:
        return WordTagger(dim, len(self.label_index), dropout)

    def loss(self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str) -> torch.Tensor:
        logits = model.head(model.encode(batch, lang), batch["first_subword"])
        return F.cross_entropy(
            logits.float().flatten(0, 1), batch["labels"].flatten(), ignore_index=IGNORE
        )

    def predict(
        self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str
    ) -> list[list[str]]:
        logits = model.head(model.encode(batch, lang), batch["first_subword"])
        best = logits.argmax(-1).cpu().tolist()
        kept = (batch["labels"] != IGNORE).sum(1).tolist()
        labels = self.labels
        predictions = []
        for row, n_kept, n_words in zip(best, kept, batch["words"].tolist(), strict=True):
            # Words cut by the length limit are predicted O (and so count as misses if entities).
            tags = [labels[i] for i in row[:n_kept]] + [OUTSIDE] * (n_words - n_kept)
            predictions.append(repair_bio(tags))
        return predictions

    def score(self, examples: Sequence[TaggedSentence], predictions: Sequence[list[str]]) -> float:
        return span_f1([s.tags for s in examples], predictions)

    def write_predictions(
        self,
        path: str | Path,
        lang: str,
        examples: Sequence[TaggedSentence],
        predictions: Sequence[list[str]],
    ) -> None:
        write_ner_predictions(path, lang, examples, predictions)
