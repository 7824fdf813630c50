"""Dev perplexity and masked-token accuracy, and the unigram baseline they are read against.

The dev masks are drawn once from ``eval_seed`` and the language name, independent of the training
seed and of the step, so every evaluation of every model scores the same positions (as XLM's fixed
``RandomState(0)`` for validation).

The unigram baseline predicts every masked token from the language's training unigram distribution
(add-one smoothed): its loss is the cross-entropy a model that learned only token frequencies
reaches, its accuracy the rate of the most frequent training token among the dev targets. A model
that uses context beats both.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from xling.pretrain.data import dev_windows
from xling.pretrain.masking import MaskedBatch, mask_tokens
from xling.pretrain.settings import PretrainSettings


@dataclass
class DevScore:
    loss: float
    accuracy: float
    tokens: int

    @property
    def perplexity(self) -> float:
        return math.exp(min(self.loss, 700.0))


def dev_batches(
    ids: np.ndarray, lang: str, replacement_ids: np.ndarray, settings: PretrainSettings
) -> list[MaskedBatch]:
    """Fixed masked dev batches of one language: its first ``settings.dev_tokens`` in windows of
    ``seq_len``, ``eval_batch_size`` a batch, masked as training masks (from ``eval_seed``)."""
    windows = dev_windows(ids, settings.seq_len, settings.dev_tokens)
    rng = np.random.default_rng([settings.eval_seed, zlib.crc32(lang.encode("utf-8"))])
    size = settings.eval_batch_size
    return [
        mask_tokens(windows[i : i + size], rng, replacement_ids, **settings.masking())
        for i in range(0, len(windows), size)
    ]


@torch.no_grad()
def evaluate(
    model,
    batches: list[MaskedBatch],
    lang: str,
    device: torch.device,
    autocast: Callable,
) -> DevScore:
    """Mean cross-entropy and accuracy at the selected dev positions (the model keeps its mode)."""
    was_training = model.training
    model.eval()
    loss_sum = torch.zeros((), dtype=torch.float64, device=device)
    correct = torch.zeros((), dtype=torch.int64, device=device)
    count = 0
    for batch in batches:
        input_ids = torch.from_numpy(batch.input_ids).to(device)
        selected = torch.from_numpy(batch.selected).to(device)
        targets = torch.from_numpy(batch.targets).to(device)
        with autocast():
            hidden = model(input_ids, lang).last_hidden_state
            hidden = hidden.reshape(-1, hidden.shape[-1]).index_select(0, selected)
            logits = model.mlm_logits(hidden, lang).float()
        loss_sum += F.cross_entropy(logits, targets, reduction="sum").double()
        correct += (logits.argmax(-1) == targets).sum()
        count += targets.numel()
    model.train(was_training)
    return DevScore(loss=loss_sum.item() / count, accuracy=correct.item() / count, tokens=count)


def unigram_counts(ids: np.ndarray, vocab_size: int, max_tokens: int = 100_000_000) -> np.ndarray:
    """Token counts of (the first ``max_tokens`` of) a training stream."""
    return np.bincount(np.asarray(ids[:max_tokens]), minlength=vocab_size).astype(np.float64)


def unigram_baseline(counts: np.ndarray, batches: list[MaskedBatch]) -> DevScore:
    """Dev loss and accuracy of predicting every target from the training unigram distribution."""
    targets = np.concatenate([b.targets for b in batches])
    probs = (counts + 1.0) / (counts.sum() + counts.size)
    loss = float(-np.log(probs[targets]).mean())
    accuracy = float((targets == int(np.argmax(counts))).mean())
    return DevScore(loss=loss, accuracy=accuracy, tokens=int(targets.size))
