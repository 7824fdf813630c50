"""The models and comparisons of Wu, Conneau et al. (2020), section 5, as the config asks for them.

Section 5 trains one MLM per language (config ``monolingual.languages``) plus en', "trained on the
same data as en but with different random seed" (§5.2), and compares them with bilingual models:
the Default model of each English-X pair and the en-en' model, "trained on English data but with
separate embeddings matrix". en' has its own language code (config ``english_prime.lang``, ``enp``)
because its parallel sentences are English paraphrases; its models read English text.

Torch-free and cheap: the Snakefile plans the section from :func:`plan` at parse time
(:mod:`xling.study.checks.section5` rejects an inconsistent config before).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MonolingualModel:
    """One monolingual MLM: its name in paths, the language of its text, its seed."""

    name: str
    lang: str
    seed: int


@dataclass(frozen=True)
class Section5:
    """What section 5 builds for one study config."""

    models: dict[str, MonolingualModel]  # by name: every language, and en'
    english_prime: str  # en''s language code
    pairs: list[str]  # English-X pairs of Figures 4 to 6 (and 7, with en-en')
    bilingual: dict[str, str]  # pair -> the variant of its bilingual model, en-en' included
    transfer_pairs: list[str]  # pairs of Figures 5 and 8
    word_pairs: list[str]  # pairs of Figure 4

    @property
    def similarity_pairs(self) -> list[str]:
        """Figure 7's pairs: en-en' first, then the others (the paper's order)."""
        return [f"en-{self.english_prime}", *self.pairs]

    def corpus_language(self, lang: str) -> str:
        """Whose text a model of ``lang`` is trained on: en' models read English."""
        return "en" if lang == self.english_prime else lang


def plan(config: Mapping[str, Any]) -> Section5 | None:
    """Section 5 of a validated config, or None when the config has no ``monolingual`` section."""
    section = config.get("monolingual")
    if not section:
        return None
    prime = section["english_prime"]["lang"]
    models = {lang: MonolingualModel(lang, lang, config["seed"]) for lang in section["languages"]}
    models[prime] = MonolingualModel(prime, "en", section["english_prime"]["seed"])
    bilingual = {pair: section["bilingual_variant"] for pair in section["pairs"]}
    bilingual[f"en-{prime}"] = section["english_prime_variant"]
    transfer = config["analysis"]["contextual_transfer"]["pairs"]
    words = config["analysis"]["word_alignment"].get("pairs", section["pairs"])
    return Section5(models, prime, list(section["pairs"]), bilingual, list(transfer), list(words))
