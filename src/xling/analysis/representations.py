"""Sentence representations of an encoder at every layer: mean over subword tokens, special tokens
excluded (Wu §5.1.3, §5.2)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from xling.model import MLMEncoder


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    length = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.as_tensor(sequence, dtype=torch.long)
    return ids, ids != pad_id


@torch.no_grad()
def mean_pooled_layers(
    model: MLMEncoder,
    sentences: Sequence[Sequence[int]],
    lang: str,
    *,
    eos_id: int,
    pad_id: int,
    batch_size: int = 64,
) -> list[np.ndarray]:
    """For every layer L0..Ln, an (n_sentences x dim) float64 array of mean-pooled states.

    Each sentence is given as subword ids without special tokens; it is encoded as XLM frames a
    sentence, ``</s> ids </s>`` (pretraining streams never contain ``<s>``), and pooled over
    ``ids`` only.
    """
    if any(len(s) == 0 for s in sentences):
        raise ValueError("a sentence has no subword tokens; drop empty sentences before pooling")
    model.eval()
    max_body = model.config.max_positions - 2
    per_layer: list[list[np.ndarray]] | None = None
    for start in range(0, len(sentences), batch_size):
        chunk = [[eos_id, *s[:max_body], eos_id] for s in sentences[start : start + batch_size]]
        ids, attention = pad_batch(chunk, pad_id)
        content = attention.clone()
        content[:, 0] = False
        content[torch.arange(len(chunk)), attention.sum(1) - 1] = False
        weights = content.to(torch.float64).unsqueeze(-1)
        hidden = model(ids, lang, attention_mask=attention, output_hidden_states=True).hidden_states
        pooled = [(h.to(torch.float64) * weights).sum(1) / weights.sum(1) for h in hidden]
        if per_layer is None:
            per_layer = [[] for _ in pooled]
        for layer, values in zip(per_layer, pooled, strict=True):
            layer.append(values.numpy())
    assert per_layer is not None, "no sentences"
    return [np.concatenate(layer) for layer in per_layer]
