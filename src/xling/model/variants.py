"""The ten bilingual models of Table 1 (Wu, Conneau et al. 2020): what each one changes.

A row differs from ``default`` in the domains of its corpora (section 4.1), its vocabulary scheme
(section 4.2) or what it shares (section 4.3). The study config names these rows under ``variants``;
this table is the paper's reading of them, kept here so that the config and the tests can be checked
against it, and so that :func:`encoder_config_for` builds the encoder every row needs.

Vocabulary schemes (``docs/contracts.md`` section 3): ``joint`` = one BPE over both languages (80k
merges); ``per_language`` = one BPE per language (40k each), union of the vocabularies;
``per_language_prefixed`` = the same with a language prefix on every entry (no anchors);
``codeswitch`` = joint BPE over code-switched corpora (extra anchors). The Sep rows use
``per_language`` (the table's "40k/40k"); with separate embeddings a string shared by both
vocabularies still gets one embedding per language, which is why the paper marks their anchors
``0*``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xling.model.config import EncoderConfig


@dataclass(frozen=True)
class VariantSpec:
    """One Table 1 row: corpora domains (source-target), vocabulary scheme and sharing."""

    domains: str
    scheme: str
    sep_embeddings: bool = False
    sep_layers: int = 0


TABLE1: dict[str, VariantSpec] = {
    "default": VariantSpec("wiki-wiki", "joint"),
    "wiki_cc": VariantSpec("wiki-cc", "joint"),
    "default_anchors": VariantSpec("wiki-wiki", "per_language"),
    "no_anchors": VariantSpec("wiki-wiki", "per_language_prefixed"),
    "extra_anchors": VariantSpec("wiki-wiki", "codeswitch"),
    "sep_emb": VariantSpec("wiki-wiki", "per_language", sep_embeddings=True),
    "sep_emb_l1_3": VariantSpec("wiki-wiki", "per_language", sep_embeddings=True, sep_layers=3),
    "sep_emb_l1_6": VariantSpec("wiki-wiki", "per_language", sep_embeddings=True, sep_layers=6),
    "sep_l1_3": VariantSpec("wiki-wiki", "per_language", sep_layers=3),
    "sep_l1_6": VariantSpec("wiki-wiki", "per_language", sep_layers=6),
}


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
