"""One encoder class for every Table 1 row and for the monolingual models.

The layout follows XLM (Lample and Conneau 2019), the implementation the paper used: token +
position (+ language) embeddings, a LayerNorm, then post-LN Transformer layers with GELU, and an
output projection tied to the token embeddings with its own bias. Attention goes through
``scaled_dot_product_attention`` so that fused kernels are used where the hardware has them.

A batch is always in one language (the paper samples one language per batch), so routing through
language-specific parts is a per-batch choice, not a per-token gather.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from xling.model.config import EncoderConfig


@dataclass
class EncoderOutput:
    last_hidden_state: torch.Tensor
    # L+1 tensors: index 0 is the embedding layer output (L0), index i the output of layer i.
    hidden_states: tuple[torch.Tensor, ...] | None = None


class TransformerLayer(nn.Module):
    """Post-LN block: x = LN(x + Attn(x)); x = LN(x + FFN(x)), as in XLM and BERT."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.heads = config.heads
        self.attention_dropout = config.attention_dropout
        self.qkv = nn.Linear(config.dim, 3 * config.dim)  # one GEMM instead of three
        self.out = nn.Linear(config.dim, config.dim)
        self.norm1 = nn.LayerNorm(config.dim, eps=config.layer_norm_eps)
        self.ffn_in = nn.Linear(config.dim, config.ffn_dim)
        self.ffn_out = nn.Linear(config.ffn_dim, config.dim)
        self.norm2 = nn.LayerNorm(config.dim, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None) -> torch.Tensor:
        batch, length, dim = x.shape
        q, k, v = (
            self.qkv(x).view(batch, length, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        )
        context = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=self.attention_dropout if self.training else 0.0
        )
        context = context.transpose(1, 2).reshape(batch, length, dim)
        x = self.norm1(x + self.dropout(self.out(context)))
        hidden = self.ffn_out(F.gelu(self.ffn_in(x)))
        return self.norm2(x + self.dropout(hidden))


def sinusoidal_table(positions: int, dim: int) -> torch.Tensor:
    """Vaswani et al.'s table, as XLM builds it: sin on even, cos on odd dimensions."""
    position = torch.arange(positions, dtype=torch.float64)[:, None]
    pair = torch.arange(dim, dtype=torch.float64)[None, :] // 2
    angle = position / torch.pow(10000.0, 2 * pair / dim)
    even = torch.arange(dim)[None, :] % 2 == 0
    return torch.where(even, torch.sin(angle), torch.cos(angle)).float()


class Embeddings(nn.Module):
    """Token and position embeddings (learned, or XLM's fixed sinusoids) with a LayerNorm after
    the sum, as XLM."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.tokens = nn.Embedding(config.vocab_size, config.dim, padding_idx=config.pad_id)
        self.positions = nn.Embedding(config.max_positions, config.dim)
        self.positions.weight.requires_grad_(not config.sinusoidal_positions)
        self.norm = nn.LayerNorm(config.dim, eps=config.layer_norm_eps)
        # The tied softmax's bias belongs with the embedding it is tied to.
        self.output_bias = nn.Parameter(torch.zeros(config.vocab_size))


class MLMEncoder(nn.Module):
    """Masked-LM encoder with the sharing knobs of Wu, Conneau et al. (2020), section 4.3."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        self.lang_to_index = {lang: i for i, lang in enumerate(config.languages)}
        embedding_owners = config.languages if config.sep_embeddings else ["shared"]
        self.embeddings = nn.ModuleDict({name: Embeddings(config) for name in embedding_owners})
        self.language_embeddings = (
            nn.Embedding(len(config.languages), config.dim)
            if config.language_embeddings and len(config.languages) > 1
            else None
        )
        self.language_layers = nn.ModuleDict(
            {
                lang: nn.ModuleList(TransformerLayer(config) for _ in range(config.sep_layers))
                for lang in (config.languages if config.sep_layers else [])
            }
        )
        self.shared_layers = nn.ModuleList(
            TransformerLayer(config) for _ in range(config.layers - config.sep_layers)
        )
        self.dropout = nn.Dropout(config.dropout)
        # A language-specific softmax only scores the tokens that language can produce; which
        # tokens those are comes from the vocabulary (set_language_vocabulary); all by default.
        for lang in config.languages:
            self.register_buffer(
                f"vocab_mask_{lang}",
                torch.ones(config.vocab_size, dtype=torch.bool),
                persistent=True,
            )
        self.reset_parameters()

    # ------------------------------------------------------------------ construction helpers
    def reset_parameters(self) -> None:
        dim = self.config.dim
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, std=0.02)
                nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                # XLM's embedding init: N(0, dim^-1/2), padding row zero.
                nn.init.normal_(module.weight, std=dim**-0.5)
                if module.padding_idx is not None:
                    with torch.no_grad():
                        module.weight[module.padding_idx].zero_()
            elif isinstance(module, nn.LayerNorm):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
        table = (
            sinusoidal_table(self.config.max_positions, dim) * self.config.position_scale
            if self.config.sinusoidal_positions
            else None
        )
        for owner in self.embeddings.values():
            nn.init.zeros_(owner.output_bias)
            if table is not None:
                with torch.no_grad():
                    owner.positions.weight.copy_(table)

    def set_language_vocabulary(self, lang: str, token_ids) -> None:
        """Restrict the language-specific softmax of ``lang`` to ``token_ids``."""
        mask = torch.zeros(self.config.vocab_size, dtype=torch.bool)
        mask[torch.as_tensor(token_ids, dtype=torch.long)] = True
        self.vocab_mask(lang).copy_(mask)

    # ------------------------------------------------------------------ routing
    def _check_lang(self, lang: str) -> None:
        if lang not in self.lang_to_index:
            raise KeyError(f"language {lang!r} is not one of this model's {self.config.languages}")

    def embeddings_for(self, lang: str) -> Embeddings:
        self._check_lang(lang)
        return self.embeddings[lang if self.config.sep_embeddings else "shared"]

    def layers_for(self, lang: str) -> list[TransformerLayer]:
        self._check_lang(lang)
        own = list(self.language_layers[lang]) if self.config.sep_layers else []
        return own + list(self.shared_layers)

    def vocab_mask(self, lang: str) -> torch.Tensor:
        return getattr(self, f"vocab_mask_{lang}")

    def language_specific_parameters(self) -> Iterator[tuple[str, nn.Parameter]]:
        """Parameters that belong to one language: frozen during fine-tuning (paper, 4.3)."""
        for name, param in self.named_parameters():
            if self.is_language_specific(name):
                yield name, param

    def is_language_specific(self, parameter_name: str) -> bool:
        return (
            parameter_name.startswith("language_layers.")
            or parameter_name.startswith("language_embeddings.")
            or (self.config.sep_embeddings and parameter_name.startswith("embeddings."))
        )

    # ------------------------------------------------------------------ forward
    def forward(
        self,
        input_ids: torch.Tensor,
        lang: str,
        attention_mask: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        num_layers: int | None = None,
    ) -> EncoderOutput:
        """Encode a batch of one language.

        ``attention_mask`` is bool or 0/1, shape (batch, length), true for real tokens; None means
        no padding (pretraining streams), which lets SDPA take its fastest path. ``num_layers``
        runs only the first that many Transformer layers (0: the embedding layer's output), so
        ``last_hidden_state`` is hidden state ``num_layers``; None runs them all.
        """
        layers = self.layers_for(lang)
        if num_layers is not None:
            if not 0 <= num_layers <= len(layers):
                raise ValueError(
                    f"num_layers={num_layers} is outside 0..{len(layers)}, the layers of this model"
                )
            layers = layers[:num_layers]
        embeddings = self.embeddings_for(lang)
        length = input_ids.shape[1]
        if length > self.config.max_positions:
            raise ValueError(
                f"sequence of {length} tokens exceeds max_positions={self.config.max_positions}"
            )
        x = embeddings.tokens(input_ids) + embeddings.positions.weight[:length]
        if self.language_embeddings is not None:
            x = x + self.language_embeddings.weight[self.lang_to_index[lang]]
        x = self.dropout(embeddings.norm(x))
        attn_mask = None
        keep = None
        if attention_mask is not None:
            keep = attention_mask.to(torch.bool)
            attn_mask = keep[:, None, None, :]
            x = x * keep.unsqueeze(-1).to(x.dtype)
        hidden = [x] if output_hidden_states else None
        for layer in layers:
            x = layer(x, attn_mask)
            if keep is not None:
                x = x * keep.unsqueeze(-1).to(x.dtype)
            if hidden is not None:
                hidden.append(x)
        return EncoderOutput(x, tuple(hidden) if hidden is not None else None)

    def mlm_logits(self, hidden: torch.Tensor, lang: str) -> torch.Tensor:
        """Scores over the vocabulary for hidden states of shape (..., dim), tied to the embeddings.

        Called on the selected positions only: with an 8k vocabulary at width 64-128, scoring every
        position costs more than the whole encoder; scoring only the ~15% masked positions made a
        training step 2.4x (width 128) to 4-6x (width 64) faster on 2 CPU cores.
        """
        embeddings = self.embeddings_for(lang)
        logits = F.linear(hidden, embeddings.tokens.weight, embeddings.output_bias)
        if self.config.sep_embeddings:
            logits = logits.masked_fill(~self.vocab_mask(lang), torch.finfo(logits.dtype).min)
        return logits

    def num_parameters(self, language_specific: bool | None = None) -> int:
        """Count parameters: all, only language-specific (True) or only shared (False)."""
        return sum(
            p.numel()
            for name, p in self.named_parameters()
            if language_specific is None or self.is_language_specific(name) == language_specific
        )
