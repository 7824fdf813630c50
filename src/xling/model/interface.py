"""The one encoder interface that fine-tuning and the analyses program against.

Two implementations:

* :class:`xling.model.MLMEncoder`: the study's own XLM-style encoders (Wu, Conneau et al. 2020),
  with language-specific parts routed by ``lang``;
* :class:`xling.model.hf.HFEncoder`: a ``transformers`` BERT-like model such as mBERT (Muller et
  al. 2021), one set of parameters for every language.

:func:`xling.model.load_encoder` picks the implementation from what is on disk. Callers only use
what is below, so a task head, a grid or an analysis written for one runs on the other unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import torch
from torch import nn

from xling.model.encoder import EncoderOutput


class EncoderSpec(Protocol):
    """What callers read from an encoder's ``config``."""

    dim: int  # width of every hidden state
    layers: int  # Transformer layers (hidden states are L0, the embeddings, to L{layers})
    pad_id: int
    max_positions: int  # longest input, special tokens included
    dropout: float  # the model's own dropout, the default of the task heads
    vocab_size: int

    def accepts_language(self, lang: str) -> bool:
        """Whether inputs of ``lang`` can go through the model."""
        ...


class Encoder(Protocol):
    """A module encoding one language's batch into hidden states at every layer."""

    config: EncoderSpec

    def __call__(
        self,
        input_ids: torch.Tensor,
        lang: str,
        attention_mask: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        num_layers: int | None = None,
    ) -> EncoderOutput:
        """``hidden_states[0]`` is the embedding output, ``hidden_states[i]`` layer i's;
        ``num_layers`` runs only the first that many layers."""
        ...

    def language_specific_parameters(self) -> Iterator[tuple[str, nn.Parameter]]:
        """Parameters that belong to one language (frozen in fine-tuning); none for mBERT."""
        ...

    def named_parameters(self, *args, **kwargs) -> Iterator[tuple[str, nn.Parameter]]: ...

    def parameters(self, recurse: bool = True) -> Iterator[nn.Parameter]: ...
