"""Checks of Wu, Conneau et al. (2020) section 5 (config ``monolingual``): its languages, pairs,
bilingual models and the analyses and downloads it needs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xling.study.keys import ConfigError, pair_languages


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
