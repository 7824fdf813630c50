"""The text pipeline of one language: segmenter, then optional lowercasing and accent removal.

A :class:`TextPipeline` is plain data (a few strings and booleans), so the tokenizer manifest can
store it and a trained model can later tokenize raw text exactly as its pretraining corpus was.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from xling.atomic import atomic_open
from xling.errors import SettingsError
from xling.fileio import StrPath, iter_lines
from xling.preprocess.normalize import remove_accents as _remove_accents
from xling.preprocess.segmenters import check_segmenter_name, get_segmenter


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
    """

    lang: str
    segmenter: str
    lowercase: bool = False
    remove_accents: bool = False
    rules_lang: str | None = None

    def __post_init__(self) -> None:
        check_segmenter_name(self.segmenter)
        for name in ("lowercase", "remove_accents"):
            if not isinstance(getattr(self, name), bool):
                raise SettingsError(f"text pipeline of {self.lang!r}: {name} must be true or false")

    def tokenize(self, line: str) -> list[str]:
        """Tokens of one raw line: never empty strings, never containing whitespace."""
        tokens = get_segmenter(self.segmenter, self.rules_lang or self.lang)(line)
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

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; :meth:`from_dict` rebuilds the same pipeline."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TextPipeline:
        """Rebuild a pipeline from :meth:`to_dict`'s output; unknown keys are an error."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SettingsError(
                f"unknown text pipeline setting(s) {unknown}; known: {sorted(known)}"
            )
        missing = sorted({"lang", "segmenter"} - set(data))
        if missing:
            raise SettingsError(f"text pipeline settings lack {missing}")
        return cls(**data)


def pipeline_for_language(
    lang: str,
    *,
    segmenters: Mapping[str, str],
    lowercase: bool = False,
    remove_accents: bool = False,
    rules_langs: Mapping[str, str] | None = None,
) -> TextPipeline:
    """The pipeline of ``lang`` from config-style settings.

    Args:
        lang: the language to build for.
        segmenters: language -> segmenter name; every language must be listed (no silent
            default, because the wrong segmenter for Chinese would go unnoticed).
        lowercase, remove_accents: see :class:`TextPipeline`.
        rules_langs: optional language -> language whose segmenter rules to use.

    Raises:
        SettingsError: ``lang`` has no configured segmenter, or the name is not registered.
    """
    if lang not in segmenters:
        raise SettingsError(
            f"no segmenter configured for language {lang!r}: add `{lang}: moses` (or jieba for"
            f" Chinese) to the segmenters in the config; configured: {sorted(segmenters)}"
        )
    rules_lang = (rules_langs or {}).get(lang)
    return TextPipeline(
        lang=lang,
        segmenter=segmenters[lang],
        lowercase=lowercase,
        remove_accents=remove_accents,
        rules_lang=rules_lang,
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
