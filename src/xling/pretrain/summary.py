"""``summary.json`` of a pretraining job (``docs/contracts.md`` section 4)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from xling.model import MLMEncoder

if TYPE_CHECKING:
    from xling.pretrain.trainer import Trainer


def build_summary(trainer: Trainer, best_model: MLMEncoder) -> dict:
    """First/last train loss, the selected step and its dev scores beside the unigram baseline."""
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
    }
