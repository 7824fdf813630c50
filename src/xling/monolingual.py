"""The models and comparisons of Wu, Conneau et al. (2020), section 5, as the config asks for them.

Section 5 trains one MLM per language (config ``monolingual.languages``) plus en', "trained on the
same data as en but with different random seed" (§5.2), and compares them with bilingual models:
the Default model of each English-X pair and the en-en' model, "trained on English data but with
separate embeddings matrix". en' has its own language code (config ``english_prime.lang``, ``enp``)
because its parallel sentences are English paraphrases; its models read English text.

Torch-free and cheap: the Snakefile plans the section from :func:`plan` at parse time, and
:func:`check` rejects an inconsistent config before any job runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xling.config import ConfigError, pair_languages


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


def check(config: Mapping[str, Any]) -> None:
    """Reject a ``monolingual`` section that cannot run, naming the key and the fix."""
    section = config.get("monolingual")
    if not section:
        return
    languages = config["languages"]
    analysis = config["analysis"]
    for key in ("word_alignment", "parallel_sentences", "contextual_transfer"):
        if key not in analysis:
            raise ConfigError(
                f"config key 'analysis.{key}' is required with 'monolingual' (Wu §5); "
                "see config/config.yaml for the paper's settings"
            )
    data = config["data"]
    if data["source"] == "download":
        for key in ("tatoeba", "fasttext"):
            if key not in data:
                raise ConfigError(
                    f"config key 'data.{key}' is required with 'monolingual' (Wu §5) in a study "
                    "that downloads its data; see config/config.yaml"
                )
        for pair in section["pairs"]:
            if pair_languages(pair)[1] not in data["tatoeba"]["codes"]:
                raise ConfigError(
                    f"config key 'data.tatoeba.codes': no code for the target of {pair!r}; add "
                    "the language with LASER's code of its Tatoeba test set (the file names' "
                    "ISO 639-3 code, e.g. es: spa)"
                )
    for index, lang in enumerate(section["languages"]):
        if lang not in languages:
            raise ConfigError(
                f"config key 'monolingual.languages' (item {index}): {lang!r} is not under "
                f"'languages' ({', '.join(languages)}); add it there with its segmenter"
            )
    if "en" not in section["languages"]:
        raise ConfigError("config key 'monolingual.languages': must include en (the source)")
    prime = section["english_prime"]["lang"]
    if prime not in languages or prime in section["languages"]:
        raise ConfigError(
            f"config key 'monolingual.english_prime.lang': {prime!r} must be under 'languages' "
            "(English paraphrases need a segmenter) and not under 'monolingual.languages'"
        )
    for index, pair in enumerate(section["pairs"]):
        target = pair_languages(pair)[1]
        if target not in section["languages"] or target == "en":
            raise ConfigError(
                f"config key 'monolingual.pairs' (item {index}): {pair!r} needs a target among "
                f"'monolingual.languages' other than en ({', '.join(section['languages'])})"
            )
    variants = config["variants"]
    for key in ("bilingual_variant", "english_prime_variant"):
        if section[key] not in variants:
            raise ConfigError(
                f"config key 'monolingual.{key}': {section[key]!r} is not under 'variants' "
                f"({', '.join(variants)})"
            )
    prime_variant = variants[section["english_prime_variant"]]
    if not prime_variant["sep_embeddings"]:
        raise ConfigError(
            f"config key 'monolingual.english_prime_variant': {section['english_prime_variant']!r}"
            " shares its embeddings; Wu §5.2 trains en-en' with separate embeddings (sep_emb)"
        )
    for key in ("contextual_transfer", "word_alignment"):
        for index, pair in enumerate(analysis[key].get("pairs", [])):
            if pair not in section["pairs"]:
                raise ConfigError(
                    f"config key 'analysis.{key}.pairs' (item {index}): {pair!r} is "
                    f"not in 'monolingual.pairs' ({', '.join(section['pairs'])})"
                )
