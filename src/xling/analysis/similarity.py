"""CKA per layer between the representations of parallel sentences (Wu §5.2, Figure 7).

Two encoders are compared for a pair: the trained model (both sides through it) and the paper's
lower bound, a randomly initialised encoder of the same architecture that encodes the non-English
side only ("Random encoder is only used by non-English sentences", Figure 7).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from xling.analysis.cka import cka
from xling.analysis.representations import mean_pooled_layers
from xling.model import MLMEncoder


def parallel_ids(
    tokenizer, source_lines: Sequence[str], target_lines: Sequence[str], languages, limit: int
) -> tuple[list[list[int]], list[list[int]]]:
    """The first ``limit`` line pairs where both sides have subword tokens, as id lists."""
    if len(source_lines) != len(target_lines):
        raise ValueError(
            f"parallel files differ in length: {len(source_lines)} vs {len(target_lines)} lines"
        )
    source_lang, target_lang = languages
    source_ids, target_ids = [], []
    for source, target in zip(source_lines, target_lines, strict=True):
        if not source.strip() or not target.strip():
            continue
        source_ids.append(tokenizer.encode_tokenized(source, source_lang))
        target_ids.append(tokenizer.encode_tokenized(target, target_lang))
        if len(source_ids) == limit:
            break
    return source_ids, target_ids


def layerwise_cka(
    source_model: MLMEncoder,
    target_model: MLMEncoder,
    source_ids,
    target_ids,
    languages,
    special_ids: dict[str, int],
    debiased: bool = False,
) -> list[float]:
    source_lang, target_lang = languages
    source_layers = mean_pooled_layers(source_model, source_ids, source_lang, **special_ids)
    target_layers = mean_pooled_layers(target_model, target_ids, target_lang, **special_ids)
    return [cka(x, y, debiased=debiased) for x, y in zip(source_layers, target_layers, strict=True)]


def cka_rows(
    model: MLMEncoder,
    tokenizer,
    source_lines: Sequence[str],
    target_lines: Sequence[str],
    languages: Sequence[str],
    sentences: int,
    debiased: bool,
    seed: int,
) -> list[dict]:
    """Rows ``encoder, layer, cka, n_sentences`` for the trained and the random encoder."""
    source_ids, target_ids = parallel_ids(
        tokenizer, source_lines, target_lines, languages, sentences
    )
    if len(source_ids) < 4:
        raise ValueError(f"only {len(source_ids)} usable parallel sentences; CKA needs at least 4")
    special_ids = {"eos_id": tokenizer.eos_id, "pad_id": tokenizer.pad_id}
    torch.manual_seed(seed)
    random_encoder = MLMEncoder(model.config)
    rows = []
    for name, target_model in (("trained", model), ("random", random_encoder)):
        scores = layerwise_cka(
            model, target_model, source_ids, target_ids, languages, special_ids, debiased
        )
        rows += [
            {"encoder": name, "layer": layer, "cka": score, "n_sentences": len(source_ids)}
            for layer, score in enumerate(scores)
        ]
    return rows
