"""Configuration of the bilingual / monolingual masked-LM encoder (Wu, Conneau et al. 2020)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path


def has_language_specific_parts(architecture: Mapping) -> bool:
    """Whether an architecture (an ``EncoderConfig``'s fields, or the ``model`` settings a job
    builds one from) separates embeddings or bottom layers by language (section 4.3)."""
    return bool(architecture.get("sep_embeddings")) or int(architecture.get("sep_layers", 0)) > 0


@dataclass
class EncoderConfig:
    """Architecture and sharing of one encoder.

    The defaults are the paper's model (section 3.1): 8 post-LN Transformer layers, 12 heads,
    GELU, width 768, FFN 3072, dropout 0.1, learned positions, output softmax tied to the input
    embeddings. Sharing knobs (section 4.3): ``sep_embeddings`` gives every language its own token
    and position embeddings (and so its own tied softmax); ``sep_layers`` gives every language its
    own copy of the bottom ``k`` Transformer layers.
    """

    vocab_size: int
    languages: list[str] = field(default_factory=list)
    dim: int = 768
    layers: int = 8
    heads: int = 12
    ffn_dim: int = 3072
    dropout: float = 0.1
    attention_dropout: float = 0.1
    max_positions: int = 512
    # XLM's --sinusoidal_embeddings: a fixed sin/cos position table, never trained. Off in the
    # paper; the demo turns it on because its small models learn word order far sooner with it.
    sinusoidal_positions: bool = False
    # Multiplies that fixed table (1: XLM's, rows of norm sqrt(dim / 2) beside token embeddings of
    # norm about 1); a smaller table leaves less of the sentence length in every mean-pooled state.
    position_scale: float = 1.0
    # XLM adds a learned language embedding to every token (its default, use_lang_emb=True).
    language_embeddings: bool = True
    sep_embeddings: bool = False
    sep_layers: int = 0
    pad_id: int = 0
    layer_norm_eps: float = 1e-12

    def __post_init__(self) -> None:
        if self.dim % self.heads:
            raise ValueError(
                f"model.dim ({self.dim}) must be a multiple of model.heads ({self.heads})"
            )
        if not 0 <= self.sep_layers <= self.layers:
            raise ValueError(
                f"sep_layers ({self.sep_layers}) must be between 0 and model.layers ({self.layers})"
            )
        if not self.languages:
            raise ValueError("an encoder needs at least one language")
        if self.position_scale <= 0 or (self.position_scale != 1 and not self.sinusoidal_positions):
            raise ValueError(
                f"model.position_scale ({self.position_scale}) must be positive, and 1 unless "
                "model.sinusoidal_positions is true (it scales the fixed table only)"
            )
        if len(set(self.languages)) != len(self.languages):
            raise ValueError(f"languages repeat: {self.languages}")

    @property
    def fully_shared(self) -> bool:
        """True when no parameter is language-specific apart from language embeddings."""
        return not has_language_specific_parts(vars(self))

    def accepts_language(self, lang: str) -> bool:
        """Whether inputs of ``lang`` can go through this model: it must have that language's
        parts (its language embedding, its own embeddings or layers when separate)."""
        return lang in self.languages

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> EncoderConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(
                f"unknown encoder config keys {sorted(unknown)}; known: {sorted(known)}"
            )
        return cls(**data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> EncoderConfig:
        return cls.from_dict(json.loads(Path(path).read_text()))


def encoder_config_for(
    base: EncoderConfig, *, sep_embeddings: bool, sep_layers: int, languages=None, vocab_size=None
) -> EncoderConfig:
    """``base`` with a variant's sharing (and optionally its languages and vocabulary size)."""
    changes: dict = {"sep_embeddings": sep_embeddings, "sep_layers": sep_layers}
    if languages is not None:
        changes["languages"] = list(languages)
    if vocab_size is not None:
        changes["vocab_size"] = vocab_size
    return replace(base, **changes)
