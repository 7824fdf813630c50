"""Dependency parsing with a biaffine parser on first subwords, decoded into well-formed trees."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from xling.contracts.conllu import (
    UD_RELATIONS,
    ParsedSentence,
    read_conllu,
    write_conllu_predictions,
)
from xling.finetune.encoding import Tokenizer, encode_words, pad
from xling.finetune.heads import BiaffineParser, parser_loss
from xling.finetune.metrics import ItemCounts, las_items
from xling.finetune.mst import decode_trees
from xling.finetune.tasks.base import Task, TaskModel

IGNORE = -100
# The relation given to words cut by the length limit: UD's "unspecified dependency".
FALLBACK_RELATION = "dep"


class ParsingTask(Task):
    """Graph-based parsing (Dozat and Manning 2017) scored by LAS (Wu, Conneau et al. 2020, 3.2).

    Labels are the 37 universal UD v2 relations (subtypes stripped, as LAS compares them). LAS
    counts every word, punctuation included, as the CoNLL 2018 evaluation does, unless
    ``exclude_punct`` (gold UPOS PUNCT/SYM, the convention of the authors' crosslingual-nlp code).
    ``arc_dim``/``label_dim`` are the biaffine MLP sizes (Dozat and Manning: 500 and 100;
    crosslingual-nlp: 512 and 128).
    """

    name = "parsing"
    prediction_extension = "conllu"

    def __init__(
        self,
        tokenizer: Tokenizer,
        *,
        arc_dim: int = 512,
        label_dim: int = 128,
        exclude_punct: bool = False,
    ):
        super().__init__(tokenizer)
        self.arc_dim, self.label_dim = arc_dim, label_dim
        self.exclude_punct = exclude_punct
        self.metric = "las_no_punct" if exclude_punct else "las"
        self.labels = sorted(UD_RELATIONS)
        self.label_index = {label: i for i, label in enumerate(self.labels)}

    def read(self, path: str | Path, lang: str, split: str) -> list[ParsedSentence]:
        return read_conllu(path)

    def encode(
        self, examples: Sequence[ParsedSentence], lang: str, max_length: int
    ) -> list[dict[str, Any]]:
        items = []
        for sentence in examples:
            aligned = encode_words(
                self.tokenizer, sentence.words, lang, max_length, sentence.where()
            )
            kept = aligned.kept_words
            # Node 0 is ROOT (no head); a word whose gold head was cut is left out of the loss.
            heads = [IGNORE] + [h if h <= kept else IGNORE for h in sentence.heads[:kept]]
            labels = [IGNORE] + [
                self.label_index[r] if h != IGNORE else IGNORE
                for r, h in zip(sentence.deprels[:kept], heads[1:], strict=True)
            ]
            items.append(
                {
                    "input_ids": aligned.input_ids,
                    "first_subword": aligned.first_subword,
                    "heads": heads,
                    "labels": labels,
                    "words": len(sentence.words),
                }
            )
        return items

    def collate(self, items: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
        return {
            "input_ids": pad([it["input_ids"] for it in items], self.tokenizer.pad_id),
            "first_subword": pad([it["first_subword"] for it in items], 0),
            "heads": pad([it["heads"] for it in items], IGNORE),
            "labels": pad([it["labels"] for it in items], IGNORE),
            "lengths": torch.tensor([len(it["first_subword"]) for it in items]),
            "words": torch.tensor([it["words"] for it in items]),
        }

    def build_head(self, dim: int, dropout: float) -> nn.Module:
        return BiaffineParser(dim, len(self.labels), self.arc_dim, self.label_dim, dropout)

    def loss(self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str) -> torch.Tensor:
        arcs, label_dep, label_head = model.head(model.encode(batch, lang), batch["first_subword"])
        return parser_loss(
            model.head,
            arcs,
            label_dep,
            label_head,
            batch["lengths"],
            batch["heads"],
            batch["labels"],
        )

    def predict(
        self, model: TaskModel, batch: dict[str, torch.Tensor], lang: str
    ) -> list[tuple[list[int], list[str]]]:
        arcs, label_dep, label_head = model.head(model.encode(batch, lang), batch["first_subword"])
        lengths = batch["lengths"]
        log_probs = arcs.float().log_softmax(dim=-1)
        heads = decode_trees(log_probs, lengths)
        relations = model.head.label_scores(label_dep, label_head, heads).argmax(-1)
        predictions = []
        rows = zip(heads.cpu().tolist(), relations.cpu().tolist(), lengths.tolist(), strict=True)
        for (row_heads, row_rels, kept), words in zip(rows, batch["words"].tolist(), strict=True):
            sent_heads = row_heads[1 : kept + 1]
            sent_rels = [self.labels[r] for r in row_rels[1 : kept + 1]]
            # Words cut by the length limit hang from the root word: the output stays one tree.
            root_word = sent_heads.index(0) + 1
            sent_heads += [root_word] * (words - kept)
            sent_rels += [FALLBACK_RELATION] * (words - kept)
            predictions.append((sent_heads, sent_rels))
        return predictions

    def item_counts(
        self, examples: Sequence[ParsedSentence], predictions: Sequence[tuple[list[int], list[str]]]
    ) -> ItemCounts:
        return las_items(
            [s.heads for s in examples],
            [s.deprels for s in examples],
            [p[0] for p in predictions],
            [p[1] for p in predictions],
            [s.upos for s in examples],
            exclude_punct=self.exclude_punct,
        )

    def write_predictions(
        self,
        path: str | Path,
        lang: str,
        examples: Sequence[ParsedSentence],
        predictions: Sequence[tuple[list[int], list[str]]],
    ) -> None:
        write_conllu_predictions(
            path, examples, [p[0] for p in predictions], [p[1] for p in predictions]
        )
