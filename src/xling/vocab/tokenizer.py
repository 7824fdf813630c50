"""``SubwordTokenizer``: the self-contained tokenizer directory of a vocabulary (contract 3).

The directory holds ``tokenizer.json`` (the manifest: scheme, languages with their text
pipeline, codes and prefix, special tokens, the id ranges each language may emit),
``vocab.txt`` (one token a line, id = line number, the five special tokens first) and one
subword-nmt codes file per BPE (``joint.codes``, or ``{lang}.codes``).

Vocabulary tokens are subword-nmt pieces (``th@@``, ``the``), preceded by ``{lang}:`` in the
``per_language_prefixed`` scheme. Ids are laid out in groups by the set of languages that may
emit them (tokens of both languages, then those of the first language only, then the second's),
so each language's ids are a few contiguous ranges.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from xling.base.atomic import atomic_open
from xling.base.errors import InputFileError
from xling.base.fileio import StrPath
from xling.preprocess.pipeline import TextPipeline
from xling.vocab.binarize import CachedWordIds
from xling.vocab.bpe import BpeApplier, make_bpe_applier
from xling.vocab.codes import SEPARATOR, Merge, read_codes, write_codes

SPECIAL_TOKENS = ("<pad>", "<unk>", "<s>", "</s>", "<mask>")
PAD_ID, UNK_ID, BOS_ID, EOS_ID, MASK_ID = range(5)
MANIFEST_FILE = "tokenizer.json"
VOCAB_FILE = "vocab.txt"
_FORMAT = "xling-subword-tokenizer"
_FORMAT_VERSION = 1
_MAX_CACHED_WORDS = 1_000_000


@dataclasses.dataclass(frozen=True)
class LanguageSetup:
    """How one language is tokenized: text pipeline, which codes, and the token prefix."""

    pipeline: TextPipeline
    codes: str
    prefix: str = ""


class SubwordTokenizer:
    """Text pipeline + BPE + vocabulary for the languages of one model.

    Build it with :func:`xling.vocab.build_vocabulary` (or the constructor), reload it with
    :meth:`load`. Ids 0-4 are ``<pad> <unk> <s> </s> <mask>``.
    """

    def __init__(
        self,
        *,
        scheme: str,
        vocab: Sequence[str],
        languages: Mapping[str, LanguageSetup],
        codes: Mapping[str, Sequence[Merge]],
        language_token_ranges: Mapping[str, Sequence[tuple[int, int]]],
        bpe_backend: str = "tokenizers",
    ) -> None:
        if tuple(vocab[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ValueError(f"the vocabulary must start with {SPECIAL_TOKENS}")
        self.scheme = scheme
        self.vocab = list(vocab)
        self._index = {token: index for index, token in enumerate(self.vocab)}
        if len(self._index) != len(self.vocab):
            raise ValueError("the vocabulary has repeated tokens")
        self._languages = dict(languages)
        self._codes = {name: list(merges) for name, merges in codes.items()}
        for lang, setup in self._languages.items():
            if setup.codes not in self._codes:
                raise ValueError(f"language {lang!r} uses codes {setup.codes!r}, which are missing")
        self._ranges: dict[str, list[tuple[int, int]]] = {}
        for lang in self._languages:
            spans = [(int(start), int(end)) for start, end in language_token_ranges.get(lang, ())]
            if not all(len(SPECIAL_TOKENS) <= a <= b <= len(self.vocab) for a, b in spans):
                raise ValueError(f"token ranges of {lang!r} fall outside the vocabulary: {spans}")
            self._ranges[lang] = spans
        self.bpe_backend = bpe_backend
        self._appliers: dict[str, BpeApplier] = {}
        self._word_ids: dict[str, CachedWordIds] = {}
        self._raw_word_cache: dict[str, dict[str, list[int]]] = {lang: {} for lang in languages}
        prefixes = [setup.prefix for setup in self._languages.values() if setup.prefix]
        self._surface = [_strip_prefix(token, prefixes) for token in self.vocab]

    # -- ids and languages -------------------------------------------------------------------
    pad_id = PAD_ID
    unk_id = UNK_ID
    bos_id = BOS_ID
    eos_id = EOS_ID
    mask_id = MASK_ID
    # The id that opens a model input: XLM starts sentences with </s> (the only boundary our
    # pretraining streams contain; <s> stays untrained), see xling.finetune.encoding.
    start_id = EOS_ID

    @property
    def vocab_size(self) -> int:
        """Number of tokens, special tokens included."""
        return len(self.vocab)

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages, in the order of the pair (source first)."""
        return tuple(self._languages)

    def pipeline(self, lang: str) -> TextPipeline:
        """The text pipeline that produced ``lang``'s pretraining corpus."""
        return self._setup(lang).pipeline

    def token_to_id(self, token: str) -> int:
        """Id of a vocabulary token (``<unk>``'s id if absent)."""
        return self._index.get(token, UNK_ID)

    def language_token_ranges(self, lang: str) -> list[tuple[int, int]]:
        """``[start, end)`` id ranges of the tokens ``lang`` may emit (specials excluded)."""
        self._setup(lang)
        return list(self._ranges[lang])

    def language_token_ids(self, lang: str, *, include_special: bool = False) -> np.ndarray:
        """Ids ``lang``'s text can produce: its BPE output types on its training corpus plus
        every piece its codes can emit over its alphabet. For a language-specific softmax or
        for drawing random replacement tokens within the language. Specials are excluded unless
        ``include_special``."""
        parts = [np.arange(start, end) for start, end in self.language_token_ranges(lang)]
        if include_special:
            parts.insert(0, np.arange(len(SPECIAL_TOKENS)))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    # -- encoding ----------------------------------------------------------------------------
    def encode_tokenized(self, line: str, lang: str) -> list[int]:
        """Ids of a line already through the text pipeline (space-separated tokens); no specials."""
        return [index for ids in self.encode_tokenized_words(line.split(), lang) for index in ids]

    def encode_tokenized_words(self, words: Sequence[str], lang: str) -> list[tuple[int, ...]]:
        """Ids of each pipeline token (no whitespace inside); unknown pieces map to ``<unk>``."""
        word_ids = self._word_ids.get(self._known(lang))
        if word_ids is None:
            prefix, index = self._languages[lang].prefix, self._index
            word_ids = CachedWordIds(
                self._applier(lang).segment_new_words,
                lambda piece: index.get(prefix + piece, UNK_ID),
                max_cached_words=_MAX_CACHED_WORDS,
            )
            self._word_ids[lang] = word_ids
        return word_ids(words)

    def encode_line(self, raw_line: str, lang: str) -> list[int]:
        """Ids of a raw line: text pipeline (segmenter, lowercasing...) then BPE; no specials."""
        return self.encode_tokenized(self.pipeline(lang)(raw_line), lang)

    def encode_words(self, words: Sequence[str], lang: str) -> list[list[int]]:
        """One id list per given (gold) word, each word going through the text pipeline.

        A word that the pipeline splits (``l'homme`` -> ``l' homme``) gets the ids of all its
        tokens; a word that yields no subword at all (whitespace, a lone removed accent) maps
        to ``[unk_id]``, so that word-level labels always have a first subword.
        """
        cache = self._raw_word_cache[self._known(lang)]
        if len(cache) > _MAX_CACHED_WORDS:
            cache.clear()
        pipeline = self.pipeline(lang)
        result = []
        for word in words:
            ids = cache.get(word)
            if ids is None:
                tokens = pipeline.tokenize(word)
                ids = [i for part in self.encode_tokenized_words(tokens, lang) for i in part]
                cache[word] = ids = ids or [UNK_ID]
            result.append(list(ids))
        return result

    def decode(self, ids: Sequence[int]) -> str:
        """Readable text of ids (for debugging): pieces joined, ``@@`` and prefixes removed."""
        text = " ".join(self._surface[int(index)] for index in ids)
        return text.replace(SEPARATOR + " ", "")

    # -- persistence -------------------------------------------------------------------------
    def save(self, directory: StrPath) -> None:
        """Write the tokenizer directory (codes, ``vocab.txt``, then the manifest, atomically)."""
        directory = Path(directory)
        for name, merges in self._codes.items():
            write_codes(directory / f"{name}.codes", merges)
        with atomic_open(directory / VOCAB_FILE) as out:
            out.writelines(token + "\n" for token in self.vocab)
        with atomic_open(directory / MANIFEST_FILE) as out:
            json.dump(self._manifest(), out, ensure_ascii=False, indent=1)
            out.write("\n")

    def _manifest(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "format_version": _FORMAT_VERSION,
            "scheme": self.scheme,
            "special_tokens": list(SPECIAL_TOKENS),
            "separator": SEPARATOR,
            "bpe_backend": self.bpe_backend,
            "vocab_file": VOCAB_FILE,
            "vocab_size": self.vocab_size,
            "languages": {
                lang: {
                    "text": setup.pipeline.to_dict(),
                    "codes": f"{setup.codes}.codes",
                    "prefix": setup.prefix,
                }
                for lang, setup in self._languages.items()
            },
            "language_token_ranges": {
                lang: [list(r) for r in self._ranges[lang]] for lang in self._languages
            },
        }

    @classmethod
    def load(cls, directory: StrPath) -> SubwordTokenizer:
        """Load a tokenizer directory written by :meth:`save`.

        Raises:
            InputFileError: a missing or inconsistent manifest, vocabulary or codes file.
        """
        directory = Path(directory)
        manifest_path = directory / MANIFEST_FILE
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise InputFileError(
                manifest_path,
                f"cannot read the tokenizer manifest ({error})",
                fix="rebuild the vocabulary stage for this directory",
            ) from None
        if manifest.get("format") != _FORMAT or manifest.get("format_version") != _FORMAT_VERSION:
            raise InputFileError(
                manifest_path,
                f"not a {_FORMAT} manifest of version {_FORMAT_VERSION}",
                fix="rebuild the vocabulary stage with this version of xling",
            )
        vocab_path = directory / manifest["vocab_file"]
        vocab = vocab_path.read_text(encoding="utf-8").split("\n")
        if vocab and vocab[-1] == "":
            vocab.pop()
        if len(vocab) != manifest["vocab_size"]:
            raise InputFileError(
                vocab_path,
                f"has {len(vocab)} tokens, the manifest says {manifest['vocab_size']}",
                fix="rebuild the vocabulary stage; the directory is inconsistent",
            )
        languages, codes = {}, {}
        for lang, entry in manifest["languages"].items():
            name = entry["codes"].removesuffix(".codes")
            if name not in codes:
                codes[name] = read_codes(directory / entry["codes"])
            languages[lang] = LanguageSetup(
                pipeline=TextPipeline.from_dict(entry["text"]), codes=name, prefix=entry["prefix"]
            )
        ranges = {
            lang: [(int(start), int(end)) for start, end in spans]
            for lang, spans in manifest["language_token_ranges"].items()
        }
        return cls(
            scheme=manifest["scheme"],
            vocab=vocab,
            languages=languages,
            codes=codes,
            language_token_ranges=ranges,
            bpe_backend=manifest["bpe_backend"],
        )

    # -- internals ---------------------------------------------------------------------------
    def _known(self, lang: str) -> str:
        if lang not in self._languages:
            raise KeyError(
                f"language {lang!r} is not in this tokenizer ({', '.join(self._languages)})"
            )
        return lang

    def _setup(self, lang: str) -> LanguageSetup:
        return self._languages[self._known(lang)]

    def _applier(self, lang: str) -> BpeApplier:
        name = self._languages[lang].codes
        if name not in self._appliers:
            self._appliers[name] = make_bpe_applier(self.bpe_backend, self._codes[name])
        return self._appliers[name]


def _strip_prefix(token: str, prefixes: Sequence[str]) -> str:
    for prefix in prefixes:
        if token.startswith(prefix):
            return token[len(prefix) :]
    return token
