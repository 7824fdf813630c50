"""What every fine-tuning task provides to the shared training loop (``xling.finetune.run``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from xling.finetune.encoding import Tokenizer
from xling.finetune.metrics import ItemCounts, ratio
from xling.model.interface import Encoder


class TaskModel(nn.Module):
    """The pretrained encoder plus a freshly initialised task head."""

    def __init__(self, encoder: Encoder, head: nn.Module):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def encode(self, batch: dict[str, torch.Tensor], lang: str) -> torch.Tensor:
        """Last hidden layer; ``lang`` routes through that language's own embeddings/layers."""
        input_ids = batch["input_ids"]
        output = self.encoder(input_ids, lang, attention_mask=input_ids != self.pad_id)
        return output.last_hidden_state

    @property
    def pad_id(self) -> int:
        return self.encoder.config.pad_id


class Task(ABC):
    """One downstream task: its files, labels, head, loss, decoding, metric and prediction format.

    Examples are what the reader returns; items are their encoded form (dicts of lists), built once.
    """

    name: str
    metric: str
    prediction_extension: str
    # NER, parsing, POS: linear warmup over the first 10% of batches, then linear decay to 0.
    lr_schedule = "warmup_linear"

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer

    # ---------------------------------------------------------------- data
    @abstractmethod
    def read(self, path: str | Path, lang: str, split: str) -> list:
        """Examples of one language and split; ``split`` is ``train``, ``dev`` or ``test``."""

    def fit_labels(self, train_examples: Sequence) -> None:  # noqa: B027 (optional hook)
        """Fix the label inventory from the training examples (tasks with fixed labels skip it)."""

    @abstractmethod
    def encode(self, examples: Sequence, lang: str, max_length: int) -> list[dict[str, Any]]:
        """Encoder inputs and targets, one item per example."""

    @abstractmethod
    def collate(self, items: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        """Pad a list of items into a batch of tensors."""

    @staticmethod
    def item_length(item: dict[str, Any]) -> int:
        return len(item["input_ids"])

    # ---------------------------------------------------------------- model
    @abstractmethod
    def build_head(self, dim: int, dropout: float) -> nn.Module:
        """A freshly initialised task-specific layer."""

    def parameter_groups(self, model: TaskModel, hp: dict) -> list[dict]:
        """Optimizer groups of the trainable parameters: by default one, at ``hp["lr"]``."""
        trainable = [p for p in model.parameters() if p.requires_grad]
        return [{"params": trainable, "lr": hp["lr"]}]

    @abstractmethod
    def loss(self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str) -> torch.Tensor:
        """Mean training loss of one batch."""

    @abstractmethod
    def predict(self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str) -> list:
        """One prediction per item of the batch, in the task's own terms (tags, trees, labels)."""

    # ---------------------------------------------------------------- evaluation and output
    @abstractmethod
    def item_counts(self, examples: Sequence, predictions: Sequence) -> ItemCounts:
        """Per example, the numerator and denominator of the task metric (xling.finetune.metrics:
        the metric is the ratio of their sums)."""

    def score(self, examples: Sequence, predictions: Sequence) -> float:
        """The task metric, a fraction in [0, 1]."""
        return ratio(self.item_counts(examples, predictions))

    @abstractmethod
    def write_predictions(
        self, path: str | Path, lang: str, examples: Sequence, predictions: Sequence
    ) -> None:
        """Predictions in the task's file format (atomically)."""
