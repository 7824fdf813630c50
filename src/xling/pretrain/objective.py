"""The masked-LM loss as one module, so that DDP sees (and synchronises) one forward."""

from __future__ import annotations

from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch import nn

from xling.model import MLMEncoder
from xling.model.precision import device_capability, native_precision


class MaskedLMObjective(nn.Module):
    """Mean cross-entropy at the selected positions of a one-language batch.

    Only the selected positions reach the output softmax: computed everywhere, it costs more than
    the encoder (:meth:`xling.model.MLMEncoder.mlm_logits` gives the measured factor).
    """

    def __init__(self, encoder: MLMEncoder):
        super().__init__()
        self.encoder = encoder

    def forward(
        self, input_ids: torch.Tensor, lang: str, selected: torch.Tensor, targets: torch.Tensor
    ) -> torch.Tensor:
        hidden = self.encoder(input_ids, lang).last_hidden_state
        hidden = hidden.reshape(-1, hidden.shape[-1]).index_select(0, selected)
        logits = self.encoder.mlm_logits(hidden, lang)
        if targets.numel() == 0:  # a shared block's part that selects nothing: no loss, zero grads
            return logits.sum()
        # At least fp32 (autocast's half-precision logits), fp64 kept (the tests' exact sums).
        return F.cross_entropy(logits.to(torch.promote_types(logits.dtype, torch.float32)), targets)


def resolve_precision(precision: str, device: torch.device) -> str:
    """``precision``, with ``auto`` resolved for ``device`` (:func:`native_precision`)."""
    if precision != "auto":
        return precision
    return native_precision(device_capability(device))


def autocast_for(precision: str, device: torch.device):
    """A factory of autocast contexts for ``precision`` (fp32: no autocast)."""
    if precision == "fp32":
        return nullcontext
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return lambda: torch.autocast(device.type, dtype=dtype)
