"""BERT/XLM masking: select 15% of the tokens; of those, 80% become ``<mask>``, 10% a random token,
10% stay as they are (paper, section 3.1).

Choices where the paper is silent, following XLM (``trainer.py:mask_out``) unless said otherwise:
* selection is an independent Bernoulli draw per position; ``<pad>`` is never selected, ``</s>``
  may be (XLM predicts it too); a batch with no selected position gets one, so the loss is defined;
* random replacements are drawn uniformly from ``replacement_ids``: every ordinary (non-special) id
  of the vocabulary for a model that shares everything ("the random words could be foreign words"),
  only the language's own ids for one with separate embeddings or layers (section 4.3: "we only
  sample random words within one language"). XLM also draws special ids; we do not;
* XLM never predicts the first position of a stream window (an artefact of its layout); we do.

The output lists the selected positions as flat indices, computed here on the host, so the model
gathers them with ``index_select`` and the GPU never waits for a ``nonzero``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xling.pretrain.data import MASK_ID, PAD_ID


@dataclass
class MaskedBatch:
    input_ids: np.ndarray  # (batch, seq_len) int64, corrupted
    selected: np.ndarray  # (n,) int64 flat indices into input_ids.reshape(-1)
    targets: np.ndarray  # (n,) int64 original ids at the selected positions


def mask_tokens(
    tokens: np.ndarray,
    rng: np.random.Generator,
    replacement_ids: np.ndarray,
    *,
    mask_prob: float = 0.15,
    mask_token_rate: float = 0.8,
    random_token_rate: float = 0.1,
    mask_id: int = MASK_ID,
    pad_id: int = PAD_ID,
) -> MaskedBatch:
    """Select and corrupt positions of ``tokens`` (batch, seq_len) for the masked-LM loss."""
    if replacement_ids.size == 0:
        raise ValueError("replacement_ids is empty: no token to draw random replacements from")
    flat = tokens.reshape(-1)
    eligible = flat != pad_id
    selected = np.flatnonzero((rng.random(flat.size) < mask_prob) & eligible)
    if selected.size == 0:
        candidates = np.flatnonzero(eligible)
        if candidates.size == 0:
            raise ValueError("a batch made only of <pad> has nothing to predict")
        selected = candidates[rng.integers(candidates.size, size=1)]
    targets = flat[selected].copy()
    corrupted = flat.copy()
    action = rng.random(selected.size)
    to_mask = action < mask_token_rate
    to_random = (action >= mask_token_rate) & (action < mask_token_rate + random_token_rate)
    corrupted[selected[to_mask]] = mask_id
    corrupted[selected[to_random]] = replacement_ids[
        rng.integers(replacement_ids.size, size=int(to_random.sum()))
    ]
    return MaskedBatch(corrupted.reshape(tokens.shape), selected.astype(np.int64), targets)
