"""Sentence representations of an encoder at every layer: mean over subword tokens, special tokens
excluded (Wu §5.1.3, §5.2).

Every analysis frames a sentence the same way, through :func:`encode_framed`: ``</s> ids </s>``
(XLM's pretraining streams never contain ``<s>``), ``ids`` cut to the model's positions.
"""

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


def sentence_capacity(model: MLMEncoder) -> int:
    """Subword tokens that fit in one framed sentence: the model's positions less two ``</s>``."""
    return model.config.max_positions - 2


@torch.no_grad()
def encode_framed(
    model: MLMEncoder, sentences: Sequence[Sequence[int]], lang: str, *, eos_id: int, pad_id: int
) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """Hidden states L0..Ln, each (batch x length x dim), of one batch of sentences framed as
    ``</s> ids </s>``, and the (batch x length) mask of the ``ids`` positions.

    ``ids`` beyond :func:`sentence_capacity` are cut. ``hidden[mask]`` lists the states of the ids
    in order: sentence by sentence, token by token. Tensors are on the model's device.
    """
    capacity = sentence_capacity(model)
    framed = [[eos_id, *s[:capacity], eos_id] for s in sentences]
    ids, attention = pad_batch(framed, pad_id)
    content = attention.clone()
    content[:, 0] = False
    content[torch.arange(len(framed)), attention.sum(1) - 1] = False
    ids, attention, content = (
        t.to(next(model.parameters()).device) for t in (ids, attention, content)
    )
    hidden = model(ids, lang, attention_mask=attention, output_hidden_states=True).hidden_states
    return hidden, content


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

    Each sentence is given as subword ids without special tokens; it is encoded by
    :func:`encode_framed` and pooled over ``ids`` only.
    """
    if any(len(s) == 0 for s in sentences):
        raise ValueError("a sentence has no subword tokens; drop empty sentences before pooling")
    model.eval()
    per_layer: list[list[np.ndarray]] | None = None
    for start in range(0, len(sentences), batch_size):
        chunk = sentences[start : start + batch_size]
        hidden, content = encode_framed(model, chunk, lang, eos_id=eos_id, pad_id=pad_id)
        weights = content.to(torch.float64).unsqueeze(-1)
        pooled = [(h.to(torch.float64) * weights).sum(1) / weights.sum(1) for h in hidden]
        if per_layer is None:
            per_layer = [[] for _ in pooled]
        for layer, values in zip(per_layer, pooled, strict=True):
            layer.append(values.cpu().numpy())
    assert per_layer is not None, "no sentences"
    return [np.concatenate(layer) for layer in per_layer]
