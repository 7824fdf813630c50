"""Word tagging on the first subword of each word: what NER and POS tagging share."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from xling.finetune.encoding import encode_words, pad
from xling.finetune.heads import WordTagger
from xling.finetune.tasks.base import Task, TaskModel

IGNORE = -100


class WordTaggingTask(Task):
    """One tag per word from a linear softmax classifier on the word's first subword.

    Targets are word-aligned: ``labels[i]`` of an item is the tag id of word ``i``, scored from the
    encoder state at ``first_subword[i]``. A word's other subwords get no label, so they never take
    part in the loss or the predictions; nor do words cut by the length limit, which are predicted
    ``cut_word_tag`` instead (see the subclasses for what that means for their metric).

    Subclasses give the tag inventory (``labels``; None until :meth:`fit_labels`), each example's
    gold tags, and may check them against the inventory before encoding.
    """

    labels: list[str] | None
    cut_word_tag: str

    @property
    def label_index(self) -> dict[str, int]:
        if self.labels is None:
            raise RuntimeError("call fit_labels() before encoding")
        return {label: i for i, label in enumerate(self.labels)}

    @abstractmethod
    def gold_tags(self, example: Any) -> list[str]:
        """The gold tag of each word of ``example``."""

    def check_tags(self, example: Any) -> None:
        """Stop, naming the file and line, at a gold tag outside the inventory."""

    def encode(self, examples: Sequence, lang: str, max_length: int) -> list[dict[str, Any]]:
        index = self.label_index
        items = []
        for example in examples:
            self.check_tags(example)
            aligned = encode_words(self.tokenizer, example.words, lang, max_length, example.where())
            tags = self.gold_tags(example)[: aligned.kept_words]
            items.append(
                {
                    "input_ids": aligned.input_ids,
                    "first_subword": aligned.first_subword,
                    "labels": [index[tag] for tag in tags],
                    "words": len(example.words),
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

    def predicted_tags(
        self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str
    ) -> list[list[str]]:
        """The best tag of every word of each item; ``cut_word_tag`` for the words that were cut."""
        logits = model.head(model.encode(batch, lang), batch["first_subword"])
        best = logits.argmax(-1).cpu().tolist()
        kept = (batch["labels"] != IGNORE).sum(1).tolist()
        labels = self.labels
        return [
            [labels[i] for i in row[:n_kept]] + [self.cut_word_tag] * (n_words - n_kept)
            for row, n_kept, n_words in zip(best, kept, batch["words"].tolist(), strict=True)
        ]
