"""``summary.json`` of a pretraining job (``docs/contracts.md`` section 4)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from xling.model import MLMEncoder

if TYPE_CHECKING:  # engine imports this module
    from xling.pretrain.engine import PretrainJob


def build_summary(job: PretrainJob, best_model: MLMEncoder) -> dict:
    """First/last train loss, the selected step and its dev scores beside the unigram baseline."""
    best_step = job.best["step"]
    per_language = {}
    for lang in job.languages:
        row = job.curve.rows.get((best_step, lang), {})
        baseline = job.baselines[lang]
        per_language[lang] = {
            "dev_loss": row.get("dev_loss"),
            "dev_ppl": row.get("dev_ppl"),
            "dev_acc": row.get("dev_acc"),
            "unigram_loss": baseline.loss,
            "unigram_ppl": baseline.perplexity,
            "unigram_acc": baseline.accuracy,
            "dev_predicted_tokens": baseline.tokens,
            "train_sentences": job.inputs.sentences[lang],
            "sampling_probability": job.inputs.probabilities[lang],
        }
    chosen = per_language[job.selection_language]
    return {
        "languages": job.languages,
        "selection_language": job.selection_language,
        "first_train_loss": job.first_train_loss,
        "last_train_loss": job.last_train_loss,
        "best_step": best_step,
        "best_dev_loss": chosen["dev_loss"],
        "best_dev_ppl": math.exp(min(job.best["dev_loss"], 700.0)),
        "dev_acc": chosen["dev_acc"],
        "unigram_acc": chosen["unigram_acc"],
        "unigram_ppl": chosen["unigram_ppl"],
        "per_language": per_language,
        "steps": job.step,
        "tokens": job.tokens,
        "seconds": round(job.elapsed, 3),
        "parameters": {
            "total": best_model.num_parameters(),
            "shared": best_model.num_parameters(language_specific=False),
            "language_specific": best_model.num_parameters(language_specific=True),
        },
        "precision": job.precision,
        "world_size": job.runtime.world_size,
        "settings": job.settings.to_dict(),
    }
