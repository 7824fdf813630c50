"""``summary.json`` of a pretraining job (``docs/contracts.md`` section 4).

Besides what the job trained and selected, what a cluster user needs to judge the run: every
attempt (:class:`xling.pretrain.progress.AttemptLog`: its steps, wall, resume and stop times, how
it ended), the speed of the last attempt's steady state (``tokens_per_s``, ``mfu``: None off a GPU
of known peak) and the ``hardware``: each process's GPU and compute capability, the smallest GPU
memory, each process's peak of allocated memory (None on CPUs) and the batch layout.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from xling.model import MLMEncoder

if TYPE_CHECKING:
    from xling.pretrain.trainer import Trainer


def build_summary(
    trainer: Trainer, best_model: MLMEncoder, peak_memory_gib: list[float | None]
) -> dict:
    """First/last train loss, the selected step and its dev scores beside the unigram baseline,
    and the attempts, speed and hardware (``peak_memory_gib``: each process's, in rank order)."""
    best_step = trainer.best["step"]
    per_language = {}
    for lang in trainer.languages:
        row = trainer.curve.rows.get((best_step, lang), {})
        baseline = trainer.baselines[lang]
        per_language[lang] = {
            "dev_loss": row.get("dev_loss"),
            "dev_ppl": row.get("dev_ppl"),
            "dev_acc": row.get("dev_acc"),
            "unigram_loss": baseline.loss,
            "unigram_ppl": baseline.perplexity,
            "unigram_acc": baseline.accuracy,
            "dev_predicted_tokens": baseline.tokens,
            "train_sentences": trainer.inputs.sentences[lang],
            "sampling_probability": trainer.inputs.probabilities[lang],
        }
    chosen = per_language[trainer.selection_language]
    return {
        "languages": trainer.languages,
        "selection_language": trainer.selection_language,
        "first_train_loss": trainer.first_train_loss,
        "last_train_loss": trainer.last_train_loss,
        "best_step": best_step,
        "best_dev_loss": chosen["dev_loss"],
        "best_dev_ppl": math.exp(min(trainer.best["dev_loss"], 700.0)),
        "dev_acc": chosen["dev_acc"],
        "unigram_acc": chosen["unigram_acc"],
        "unigram_ppl": chosen["unigram_ppl"],
        "per_language": per_language,
        "steps": trainer.step,
        "tokens": trainer.tokens,
        "seconds": round(trainer.elapsed, 3),
        "parameters": {
            "total": best_model.num_parameters(),
            "shared": best_model.num_parameters(language_specific=False),
            "language_specific": best_model.num_parameters(language_specific=True),
        },
        "precision": trainer.precision,
        "world_size": trainer.runtime.world_size,
        "settings": trainer.settings.to_dict(),
        "attempts": trainer.attempts.records(trainer.step, ended="finished"),
        **_speed(trainer),
        "hardware": {
            **trainer.hardware.summary(),
            "peak_memory_gib": peak_memory_gib,
            "layout": trainer.plan.describe(trainer.settings.micro_batch),
        },
    }


def _speed(trainer: Trainer) -> dict:
    """Tokens per second and MFU over the last attempt's steady state (None without one)."""
    rate = trainer.attempts.steady_rate()
    if rate is None:
        return {"tokens_per_s": None, "mfu": None}
    steps, seconds = rate
    settings, peak = trainer.settings, trainer.peak_flops
    tokens_per_s = steps * settings.global_batch * settings.seq_len / seconds
    mfu = trainer.flops_per_step * steps / seconds / peak if peak else None
    return {"tokens_per_s": round(tokens_per_s, 1), "mfu": None if mfu is None else round(mfu, 4)}
