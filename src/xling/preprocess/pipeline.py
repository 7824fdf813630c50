"""The text pipeline of one language: segmenter, then optional lowercasing and accent removal.

A :class:`TextPipeline` is plain data (a few strings and booleans, and the segmenter's user words),
so the tokenizer manifest can store it and a trained model can later tokenize raw text exactly as
its pretraining corpus was.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from xling.base.atomic import atomic_open
from xling.base.errors import SettingsError
from xling.base.fileio import StrPath, iter_lines
from xling.preprocess.normalize import remove_accents as _remove_accents
from xling.preprocess.segmenters import (
    Segmenter,
    UserWord,
    check_segmenter_name,
    check_user_words,
    get_segmenter,
    read_user_dictionary,
)


@dataclasses.dataclass(frozen=True)
class TextPipeline:
    """How raw text of one language becomes space-separated tokens.

    Attributes:
        lang: the language code of the text (``en``, ``zh``, ``enp``...).
        segmenter: a registered segmenter name (``moses``, ``jieba``, ...).
        lowercase: lowercase every token (after segmentation, so Moses still sees ``Mr.``).
        remove_accents: remove accents as :func:`xling.preprocess.normalize.remove_accents` does
            (keeps ``й`` and ``ё``); the text is then in NFC.
        rules_lang: the language whose segmenter rules apply (Moses nonbreaking prefixes,
            apostrophe handling); defaults to ``lang``. Lets the toy world's ``enp`` (a paraphrase
            of English) be tokenized with English rules.
        user_words: (word, frequency or None) pairs the segmenter must know (jieba only), read
            from the file that config key ``languages.<lang>.user_dictionary`` names. The words
            themselves, not the path, so that the manifest carries them wherever the model goes.
    """

    lang: str
    segmenter: str
    lowercase: bool = False
    remove_accents: bool = False
    rules_lang: str | None = None
    user_words: tuple[UserWord, ...] = dataclasses.field(default=(), repr=False)

    def __post_init__(self) -> None:
        check_segmenter_name(self.segmenter)
        for name in ("lowercase", "remove_accents"):
            if not isinstance(getattr(self, name), bool):
                raise SettingsError(f"text pipeline of {self.lang!r}: {name} must be true or false")
        # JSON gives lists; the segmenter cache and equality need tuples.
        words = tuple((str(word), frequency) for word, frequency in self.user_words)
        object.__setattr__(self, "user_words", words)
        check_user_words(self.segmenter, self.lang, words)

    @functools.cached_property
    def _segment(self) -> Segmenter:
        # Looked up once: the cache key holds every user word, too long to hash for each line.
        return get_segmenter(self.segmenter, self.rules_lang or self.lang, self.user_words)

    def __getstate__(self) -> dict[str, Any]:
        # The cached segmenter is a closure (not picklable); a copy looks it up again.
        state = dict(self.__dict__)
        state.pop("_segment", None)
        return state

    def tokenize(self, line: str) -> list[str]:
        """Tokens of one raw line: never empty strings, never containing whitespace."""
        tokens = self._segment(line)
        text = " ".join(tokens)
        if self.lowercase:
            text = text.lower()
        if self.remove_accents:
            text = _remove_accents(text)
        # Re-splitting drops tokens that were only a removed mark and any stray whitespace.
        return text.split()

    def __call__(self, line: str) -> str:
        """One raw line -> its tokens joined by single spaces (possibly the empty string)."""
        return " ".join(self.tokenize(line))

    def __repr__(self) -> str:
        words = f", {len(self.user_words)} user words" if self.user_words else ""
        return (
            f"TextPipeline({self.lang}: {self.segmenter}, lowercase={self.lowercase},"
            f" remove_accents={self.remove_accents}, rules_lang={self.rules_lang}{words})"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; :meth:`from_dict` rebuilds the same pipeline."""
        data = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        data["user_words"] = [list(entry) for entry in self.user_words]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TextPipeline:
        """Rebuild a pipeline from :meth:`to_dict`'s output, or build it from the workflow's
        settings, whose ``user_dictionary`` (a file path) is read into ``user_words``.

        Unknown keys are an error.
        """
        data = dict(data)
        dictionary = data.pop("user_dictionary", None)
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SettingsError(
                f"unknown text pipeline setting(s) {unknown}; known: {sorted(known)}"
            )
        missing = sorted({"lang", "segmenter"} - set(data))
        if missing:
            raise SettingsError(f"text pipeline settings lack {missing}")
        if dictionary is not None:
            if data.get("user_words"):
                raise SettingsError("text pipeline settings give user_dictionary and user_words")
            data["user_words"] = read_user_dictionary(dictionary)
        return cls(**data)


def pipeline_for_language(
    lang: str,
    *,
    segmenters: Mapping[str, str],
    lowercase: bool = False,
    remove_accents: bool = False,
    rules_langs: Mapping[str, str] | None = None,
    user_dictionaries: Mapping[str, str] | None = None,
) -> TextPipeline:
    """The pipeline of ``lang`` from config-style settings.

    Args:
        lang: the language to build for.
        segmenters: language -> segmenter name; every language must be listed (no silent
            default, because the wrong segmenter for Chinese would go unnoticed).
        lowercase, remove_accents: see :class:`TextPipeline`.
        rules_langs: optional language -> language whose segmenter rules to use.
        user_dictionaries: optional language -> user dictionary file of its segmenter.

    Raises:
        SettingsError: ``lang`` has no configured segmenter, or the name is not registered.
    """
    if lang not in segmenters:
        raise SettingsError(
            f"no segmenter configured for language {lang!r}: add `{lang}: moses` (or jieba for"
            f" Chinese) to the segmenters in the config; configured: {sorted(segmenters)}"
        )
    rules_lang = (rules_langs or {}).get(lang)
    dictionary = (user_dictionaries or {}).get(lang)
    return TextPipeline(
        lang=lang,
        segmenter=segmenters[lang],
        lowercase=lowercase,
        remove_accents=remove_accents,
        rules_lang=rules_lang,
        user_words=read_user_dictionary(dictionary) if dictionary else (),
    )


def tokenize_file(in_path: StrPath, out_path: StrPath, pipeline: TextPipeline) -> int:
    """Tokenize a raw UTF-8 file line by line into ``out_path``; return the number of lines.

    Streaming (constant memory) and atomic. Every input line gives exactly one output line, so
    line-aligned (parallel) files stay aligned; a line that tokenizes to nothing gives an empty
    line. An empty input gives an empty output (a shard of a small corpus may be empty; the
    split stage rejects an empty corpus).

    Raises:
        InputFileError: a line is not valid UTF-8 (names the file and line).
    """
    count = 0
    with atomic_open(out_path) as out:
        for _, line in iter_lines(in_path):
            out.write(pipeline(line))
            out.write("\n")
            count += 1
    return count
