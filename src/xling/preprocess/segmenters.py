"""Word segmenters, by name: ``moses`` for space-separated languages, ``jieba`` for Chinese.

A segmenter turns one raw line into a list of tokens without whitespace. Others can be added
with :func:`register_segmenter`; the name is what the config and the tokenizer manifest store.
``jieba`` also takes user words (:func:`read_user_dictionary`, jieba's ``load_userdict``
format): words it must cut whole, e.g. the demo's toy Chinese, none of whose words jieba's
dictionary knows (without them jieba cuts it into single characters).

Both built-in segmenters first apply Moses punctuation normalization as XLM's ``tokenize.sh``
does (``replace-unicode-punctuation.perl``, ``normalize-punctuation.perl -l <lang>``,
``remove-non-printing-char.perl``), through sacremoses.

Deviation from the paper: Wu, Conneau et al. (2020, section 3.1) segment Chinese with the
Stanford word segmenter, which needs Java and is not installable here; ``jieba`` (dictionary +
HMM) replaces it, as HF's ``XLMTokenizer`` also does. XLM segments Chinese *before* punctuation
normalization; here normalization comes first, so that ASCII punctuation produced from
full-width punctuation (``，`` -> ``,``) is split by the segmenter instead of being glued to the
previous word by ``normalize-punctuation.perl``'s space removal before ``?``, ``!``, ``:``, ``;``.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from pathlib import Path

from xling.base.errors import InputFileError, SettingsError
from xling.base.fileio import StrPath, iter_lines

_USER_DICTIONARY_FIX = (
    "write one `word [frequency] [tag]` a line (jieba's user dictionary format), or remove the"
    " config key languages.<lang>.user_dictionary"
)
_POSITIVE = re.compile(r"[1-9][0-9]*")

Segmenter = Callable[[str], list[str]]
# A user word and its frequency (None: the segmenter picks one that keeps the word whole).
UserWord = tuple[str, int | None]
SegmenterFactory = Callable[[str, tuple[UserWord, ...]], Segmenter]

_FACTORIES: dict[str, SegmenterFactory] = {}
_TAKE_USER_WORDS: set[str] = set()


def register_segmenter(
    name: str, *, takes_user_words: bool = False
) -> Callable[[SegmenterFactory], SegmenterFactory]:
    """Decorator: register ``factory(lang, user_words) -> segmenter`` under ``name``.

    The segmenter must return tokens that contain no whitespace. ``user_words`` is always empty
    unless ``takes_user_words`` (:func:`check_user_words` refuses them before any factory runs).
    """

    def decorate(factory: SegmenterFactory) -> SegmenterFactory:
        if name in _FACTORIES:
            raise ValueError(f"a segmenter named {name!r} is already registered")
        _FACTORIES[name] = factory
        if takes_user_words:
            _TAKE_USER_WORDS.add(name)
        return factory

    return decorate


def available_segmenters() -> list[str]:
    """Names of the registered segmenters."""
    return sorted(_FACTORIES)


def check_segmenter_name(name: str) -> None:
    """Raise :class:`SettingsError` if no segmenter is registered under ``name``."""
    if name not in _FACTORIES:
        raise SettingsError(
            f"unknown segmenter {name!r}; available: {', '.join(available_segmenters())}"
            " (register others with xling.preprocess.register_segmenter)"
        )


def check_user_words(name: str, lang: str, user_words: tuple[UserWord, ...]) -> None:
    """Raise :class:`SettingsError` if ``user_words`` are given to a segmenter without use for
    them (silently ignoring a configured dictionary would segment differently than asked)."""
    if user_words and name not in _TAKE_USER_WORDS:
        raise SettingsError(
            f"language {lang!r}: the {name} segmenter takes no user dictionary; remove config key"
            f" languages.{lang}.user_dictionary, or use one of {sorted(_TAKE_USER_WORDS)}"
        )


@functools.lru_cache(maxsize=64)
def get_segmenter(name: str, lang: str, user_words: tuple[UserWord, ...] = ()) -> Segmenter:
    """The segmenter ``name`` set up for language ``lang`` (built once per process)."""
    check_segmenter_name(name)
    check_user_words(name, lang, user_words)
    return _FACTORIES[name](lang, user_words)


def read_user_dictionary(path: StrPath) -> tuple[UserWord, ...]:
    """A user dictionary in jieba's ``load_userdict`` format: ``word [frequency] [tag]`` a line.

    jieba's own loader is not used because it is bound to one jieba tokenizer and its errors do
    not name the line; the words read here travel in the tokenizer manifest instead of a path.

    Raises:
        InputFileError: a line with more than three fields or a frequency that is not a positive
            whole number (names the file and line); a file without a word.
    """
    if not Path(path).is_file():
        raise InputFileError(path, "the user dictionary does not exist", fix=_USER_DICTIONARY_FIX)
    words: list[UserWord] = []
    for number, line in iter_lines(path):
        fields = line.split()
        if not fields:
            continue
        frequency = fields[1] if len(fields) > 1 else None
        if len(fields) > 3 or (frequency is not None and not _POSITIVE.fullmatch(frequency)):
            raise InputFileError(
                path,
                f"expected `word [frequency] [tag]` with a positive whole frequency, got"
                f" {line.strip()!r}",
                line=number,
                fix=_USER_DICTIONARY_FIX,
            )
        words.append((fields[0], None if frequency is None else int(frequency)))
    if not words:
        raise InputFileError(path, "the user dictionary has no word", fix=_USER_DICTIONARY_FIX)
    return tuple(words)


class MosesPunctuationNormalizer:
    """sacremoses' ``MosesPunctNormalizer(lang, pre_replace_unicode_punct=True).normalize``, then
    Moses' ``remove-non-printing-char.perl``, 2-3x faster than sacremoses.

    sacremoses runs ~36 ``re.sub`` calls for Unicode punctuation and a ``\\p{C}`` pass on every
    line; here they run only on lines that contain one of the characters they replace (most
    lines contain none), and the normalization patterns are compiled once. A ``\\p{C}`` character
    (a tab, a zero-width space, a soft hyphen) becomes a space, as Moses' script (``s/\\p{C}/ /g``,
    which XLM's ``tokenize.sh`` runs) makes it; sacremoses' ``post_remove_control_chars`` deletes it
    instead, which glues ``foo\\tbar`` into one word.
    """

    def __init__(self, lang: str) -> None:
        import regex  # sacremoses' own dependency: Python's re has no \p{C}
        from sacremoses import MosesPunctNormalizer

        self._moses = MosesPunctNormalizer(lang=lang)
        # Moses' remove-non-printing-char.perl: control, format, private-use, unassigned.
        self._non_printing = regex.compile(r"\p{C}")
        patterns = [pattern for pattern, _ in self._moses.REPLACE_UNICODE_PUNCTUATION]
        first_chars = {pattern[:1] for pattern in patterns}
        # The shortcut needs every pattern to start with a literal character; if a future
        # sacremoses breaks that, the Unicode step simply runs on every line.
        self._unicode_punctuation = (
            re.compile("[" + re.escape("".join(sorted(first_chars))) + "]")
            if all(char and char not in "\\[]().^$*+?{}|" for char in first_chars)
            else re.compile("")
        )
        self._substitutions = [
            (re.compile(pattern), replacement) for pattern, replacement in self._moses.substitutions
        ]

    def __call__(self, text: str) -> str:
        if self._unicode_punctuation.search(text):
            text = self._moses.replace_unicode_punct(text)
        for pattern, replacement in self._substitutions:
            text = pattern.sub(replacement, text)
        # A string with a \p{C} character (control, format, private use, unassigned) is never
        # printable for Python, as long as Python's Unicode database is not newer than the
        # `regex` module's (true of the versions pinned here).
        if not text.isprintable():
            text = self._non_printing.sub(" ", text)
        return text.strip()


@register_segmenter("moses")
def _moses(lang: str, user_words: tuple[UserWord, ...]) -> Segmenter:
    """Moses punctuation normalization and tokenization, without escaping (XLM's ``-no-escape``)."""
    from sacremoses import MosesTokenizer

    normalize = MosesPunctuationNormalizer(lang)
    tokenizer = MosesTokenizer(lang=lang)

    def segment(text: str) -> list[str]:
        return tokenizer.tokenize(normalize(text), escape=False)

    return segment


def jieba_tokenizer(user_words: tuple[UserWord, ...] = ()):
    """A ``jieba.Tokenizer`` with its dictionary loaded and ``user_words`` added (the one set-up
    of jieba, shared by the segmenter and the NER realignment of :mod:`xling.acquire`)."""
    import jieba

    # jieba logs its dictionary loading on stderr at DEBUG level in every process.
    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    for word, frequency in user_words:
        tokenizer.add_word(word, frequency)
    return tokenizer


@register_segmenter("jieba", takes_user_words=True)
def _jieba(lang: str, user_words: tuple[UserWord, ...]) -> Segmenter:
    """Moses punctuation normalization, then jieba's default mode (dictionary + HMM), with the
    user words added to the dictionary."""
    normalize = MosesPunctuationNormalizer(lang)
    tokenizer = jieba_tokenizer(user_words)

    def segment(text: str) -> list[str]:
        # jieba returns runs of whitespace as tokens; they separate words, they are not words.
        return [token for token in tokenizer.cut(normalize(text), HMM=True) if token.strip()]

    return segment
