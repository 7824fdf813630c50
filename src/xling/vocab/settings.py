"""The settings of one vocabulary build, read from the study config's ``vocab`` section.

Field names are the config keys: ``vocab.backend``, ``vocab.bpe_sentences_per_language``, the keys
of the scheme's own section ``vocab.schemes.<scheme>`` (``merges``; for ``codeswitch`` also
``batch_words``, ``replace_prob``, ``max_changed_share``) and the study ``seed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xling.base.errors import SettingsError
from xling.base.fileio import StrPath
from xling.vocab.bpe import BPE_BACKENDS
from xling.vocab.codeswitch import CodeSwitchSettings

# The keys each scheme section may hold; the first ones up to the scheme's count are required.
_SCHEME_KEYS = {
    "joint": ("merges",),
    "per_language": ("merges",),
    "per_language_prefixed": ("merges",),
    "codeswitch": ("merges", "batch_words", "replace_prob", "max_changed_share"),
}
_REQUIRED_KEYS = {"codeswitch": ("merges", "batch_words")}
SCHEMES = tuple(_SCHEME_KEYS)


@dataclass(frozen=True)
class VocabSettings:
    """How one scheme's vocabulary is built (see :func:`xling.vocab.build_vocabulary`).

    Attributes:
        merges: ``joint``/``codeswitch``: one number; per-language schemes: one number for every
            language or a language -> number mapping.
        bpe_sentences_per_language: sentences per language in the sample BPE is learned on.
        seed: seeds the BPE sample and code-switching.
        backend: ``tokenizers`` (fast) or ``subword-nmt`` (reference), to learn and apply BPE.
        min_frequency: pairs seen fewer times are not merged.
        batch_words, replace_prob, max_changed_share: the ``codeswitch`` scheme's
            (:class:`~xling.vocab.CodeSwitchSettings`); ``batch_words`` is required there.
    """

    merges: int | Mapping[str, int]
    bpe_sentences_per_language: int
    seed: int
    backend: str = "tokenizers"
    min_frequency: int = 2
    batch_words: int | None = None
    replace_prob: float = CodeSwitchSettings.replace_prob
    max_changed_share: float = CodeSwitchSettings.max_changed_share

    def __post_init__(self) -> None:
        if self.backend not in BPE_BACKENDS:
            raise SettingsError(
                f"unknown BPE backend {self.backend!r}; set vocab.backend to one of {BPE_BACKENDS}"
            )
        if self.bpe_sentences_per_language < 1:
            raise SettingsError(
                "vocab.bpe_sentences_per_language must be >= 1, not "
                f"{self.bpe_sentences_per_language}"
            )

    @classmethod
    def from_config(cls, config: Mapping[str, Any], scheme: str) -> VocabSettings:
        """The settings of ``scheme`` in a whole study config (as :func:`xling.study.load`
        returns it)."""
        vocab = config["vocab"]
        if scheme not in vocab["schemes"]:
            raise SettingsError(
                f"vocab.schemes has no section for the scheme {scheme!r}; configured: "
                f"{', '.join(vocab['schemes'])}"
            )
        return cls.from_scheme_section(
            scheme,
            vocab["schemes"][scheme],
            backend=vocab["backend"],
            bpe_sentences_per_language=vocab["bpe_sentences_per_language"],
            seed=config["seed"],
        )

    @classmethod
    def from_scheme_section(
        cls,
        scheme: str,
        section: Mapping[str, Any],
        *,
        backend: str,
        bpe_sentences_per_language: int,
        seed: int,
    ) -> VocabSettings:
        """The settings from ``vocab.schemes.<scheme>`` and the other config values it needs
        (what the ``build_vocab`` rule passes as params).

        Raises:
            SettingsError: an unknown scheme, or a key of the section that is unknown or missing.
        """
        if scheme not in _SCHEME_KEYS:
            raise SettingsError(f"unknown vocabulary scheme {scheme!r}; choose one of {SCHEMES}")
        known = _SCHEME_KEYS[scheme]
        unknown = [f"vocab.schemes.{scheme}.{key}" for key in section if key not in known]
        if unknown:
            raise SettingsError(
                f"unknown config key(s) {', '.join(unknown)}; known keys of "
                f"vocab.schemes.{scheme}: {', '.join(known)}"
            )
        for key in _REQUIRED_KEYS.get(scheme, ("merges",)):
            if key not in section:
                raise SettingsError(f"config key vocab.schemes.{scheme}.{key} is missing")
        return cls(
            **section,
            backend=backend,
            bpe_sentences_per_language=bpe_sentences_per_language,
            seed=seed,
        )

    def codeswitch_settings(self, dictionaries: Mapping[str, StrPath]) -> CodeSwitchSettings:
        """The ``codeswitch`` scheme's settings, with the dictionary files of the pair
        (direction ``"{src}-{tgt}"`` -> file; they come from the rule's input, not the config)."""
        if self.batch_words is None:
            raise SettingsError(
                "the codeswitch scheme needs batch_words; set vocab.schemes.codeswitch.batch_words"
            )
        return CodeSwitchSettings(
            dictionaries,
            batch_words=self.batch_words,
            replace_prob=self.replace_prob,
            max_changed_share=self.max_changed_share,
        )
