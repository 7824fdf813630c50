"""Sentence representations of an encoder at every layer: mean over subword tokens, special tokens
excluded (Wu §5.1.3, §5.2).

Every analysis frames a sentence the same way, through :func:`encode_framed`: ``</s> ids </s>``
(XLM's pretraining streams never contain ``<s>``), ``ids`` cut to the model's positions; BERT's
tokenizer opens with its own start token, ``[CLS] ids [SEP]`` (:func:`framing` gives the ids).
Either way only ``ids`` enter a mean.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from xling.finetune.encoding import sentence_start_id
from xling.model.interface import Encoder


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    length = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.as_tensor(sequence, dtype=torch.long)
    return ids, ids != pad_id


def framing(tokenizer) -> dict[str, int]:
    """The special ids that frame and pad a sentence for ``tokenizer``'s model, as keyword
    arguments of :func:`encode_framed` and :func:`mean_pooled_layers`."""
    return {
        "eos_id": tokenizer.eos_id,
        "pad_id": tokenizer.pad_id,
        "start_id": sentence_start_id(tokenizer),
    }


def sentence_capacity(model: Encoder) -> int:
    """Subword tokens that fit in one framed sentence: the model's positions less two ``</s>``."""
    return model.config.max_positions - 2


@torch.no_grad()
def encode_framed(
    model: Encoder,
    sentences: Sequence[Sequence[int]],
    lang: str,
    *,
    eos_id: int,
    pad_id: int,
    start_id: int | None = None,
) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """Hidden states L0..Ln, each (batch x length x dim), of one batch of sentences framed as
    ``</s> ids </s>`` (``start_id``, if given, in place of the first ``</s>``), and the
    (batch x length) mask of the ``ids`` positions.

    ``ids`` beyond :func:`sentence_capacity` are cut. ``hidden[mask]`` lists the states of the ids
    in order: sentence by sentence, token by token. Tensors are on the model's device.
    """
    capacity = sentence_capacity(model)
    start = eos_id if start_id is None else start_id
    framed = [[start, *s[:capacity], eos_id] for s in sentences]
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
    model: Encoder,
    sentences: Sequence[Sequence[int]],
    lang: str,
    *,
    eos_id: int,
    pad_id: int,
    start_id: int | None = None,
    batch_size: int = 64,
) -> list[np.ndarray]:
    """For every layer L0..Ln, an (n_sentences x dim) float64 array of mean-pooled states, rows
    in the order of ``sentences``.

    Each sentence is given as subword ids without special tokens; it is encoded by
    :func:`encode_framed` and pooled over ``ids`` only (no start, end or padding token). Batches
    hold sentences of similar length, so that little of them is padding: 1.6 to 1.8 times as fast as
    batches in file order on the demo's parallel sentences (`bench/pooled_batches.py`); a
    sentence's states do not depend on its batch beyond float32 rounding (pads are masked).
    """
    if any(len(s) == 0 for s in sentences):
        raise ValueError("a sentence has no subword tokens; drop empty sentences before pooling")
    model.eval()
    order = sorted(range(len(sentences)), key=lambda index: len(sentences[index]))
    per_layer: list[list[np.ndarray]] | None = None
    for start in range(0, len(order), batch_size):
        chunk = [sentences[index] for index in order[start : start + batch_size]]
        hidden, content = encode_framed(
            model, chunk, lang, eos_id=eos_id, pad_id=pad_id, start_id=start_id
        )
        weights = content.to(torch.float64).unsqueeze(-1)
        pooled = [(h.to(torch.float64) * weights).sum(1) / weights.sum(1) for h in hidden]
        if per_layer is None:
            per_layer = [[] for _ in pooled]
        for layer, values in zip(per_layer, pooled, strict=True):
            layer.append(values.cpu().numpy())
    assert per_layer is not None, "no sentences"
    rows = np.argsort(order)  # each sentence's position in the sorted order
    return [np.concatenate(layer)[rows] for layer in per_layer]
