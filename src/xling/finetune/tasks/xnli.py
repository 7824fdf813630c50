"""XNLI: a linear softmax classifier on the first token of ``</s> premise </s> hypothesis </s>``
(``[CLS]`` for BERT)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from xling.contracts.xnli import (
    NLI_LABELS,
    NliPair,
    read_xnli,
    read_xnli_train,
    write_xnli_predictions,
)
from xling.finetune.encoding import Tokenizer, encode_pair, pad, sentence_start_id
from xling.finetune.heads import SequenceClassifier
from xling.finetune.metrics import ItemCounts, accuracy_items
from xling.finetune.tasks.base import Task, TaskModel


class XnliTask(Task):
    """Sentence-pair classification (Wu, Conneau et al. 2020, section 3.2), scored by accuracy.

    The encoder and the classifier have their own learning rates (``encoder_lr``,
    ``classifier_lr``), as in the paper's grid and XLM's ``glue-xnli.py``. Raw sentences go through
    the tokenizer's own segmenter (``encode_line``), as the pretraining corpora did.
    """

    name = "xnli"
    metric = "accuracy"
    prediction_extension = "tsv"
    labels = NLI_LABELS
    lr_schedule = "constant"  # the paper: Adam with a fixed learning rate for XNLI

    def __init__(self, tokenizer: Tokenizer):
        super().__init__(tokenizer)
        self.label_index = {label: i for i, label in enumerate(self.labels)}

    def read(self, path: str | Path, lang: str, split: str) -> list[NliPair]:
        return read_xnli_train(path) if split == "train" else read_xnli(path, lang)

    def encode(
        self, examples: Sequence[NliPair], lang: str, max_length: int
    ) -> list[dict[str, Any]]:
        boundary, start = self.tokenizer.eos_id, sentence_start_id(self.tokenizer)
        # Each premise comes with several hypotheses (MultiNLI and XNLI: three; the toy world's
        # 3,000 training pairs have 1,138 premises): segment each distinct line once.
        encoded: dict[str, list[int]] = {}

        def encode_line(line: str) -> list[int]:
            if line not in encoded:
                encoded[line] = self.tokenizer.encode_line(line, lang)
            return encoded[line]

        items = []
        for pair in examples:
            premise = encode_line(pair.premise)
            hypothesis = encode_line(pair.hypothesis)
            input_ids = encode_pair(
                premise, hypothesis, boundary_id=boundary, max_length=max_length, start_id=start
            )
            items.append({"input_ids": input_ids, "label": self.label_index[pair.label]})
        return items

    def collate(self, items: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        return {
            "input_ids": pad([it["input_ids"] for it in items], self.tokenizer.pad_id),
            "labels": torch.tensor([it["label"] for it in items]),
        }

    def build_head(self, dim: int, dropout: float) -> nn.Module:
        return SequenceClassifier(dim, len(self.labels), dropout)

    def parameter_groups(self, model: TaskModel, hp: dict) -> list[dict]:
        encoder = [p for p in model.encoder.parameters() if p.requires_grad]
        return [
            {"params": encoder, "lr": hp["encoder_lr"]},
            {"params": list(model.head.parameters()), "lr": hp["classifier_lr"]},
        ]

    def loss(self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str) -> torch.Tensor:
        logits = model.head(model.encode(batch, lang))
        return F.cross_entropy(logits.float(), batch["labels"])

    def predict(self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str) -> list[str]:
        logits = model.head(model.encode(batch, lang))
        return [self.labels[i] for i in logits.argmax(-1).cpu().tolist()]

    def item_counts(self, examples: Sequence[NliPair], predictions: Sequence[str]) -> ItemCounts:
        return accuracy_items([pair.label for pair in examples], predictions)

    def write_predictions(
        self, path: str | Path, lang: str, examples: Sequence[NliPair], predictions: Sequence[str]
    ) -> None:
        write_xnli_predictions(path, examples, predictions)
