"""Read and check what the vocab stage hands to pretraining (``docs/contracts.md`` section 3)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xling.pretrain.data import (
    count_sentences,
    language_probabilities,
    load_stream,
    non_special_ids,
    normalize_token_ids,
    observed_ids,
)

VOCAB_FILE = "vocab.txt"


@dataclass
class PretrainInputs:
    vocab_size: int
    tokenizer_dir: Path | None
    train: dict[str, np.ndarray]
    valid: dict[str, np.ndarray]
    sentences: dict[str, int]
    probabilities: dict[str, float]
    # Per language: the ordinary ids it can produce (None when every part of the model is shared).
    language_ids: dict[str, np.ndarray] | None
    _all_ids: np.ndarray | None = None

    def replacement_ids(self, lang: str) -> np.ndarray:
        """Where random replacements are drawn: the language's own ids, or the whole vocabulary."""
        if self.language_ids is not None:
            return self.language_ids[lang]
        if self._all_ids is None:
            self._all_ids = non_special_ids(self.vocab_size)
        return self._all_ids

    def fingerprint(self) -> dict[str, int]:
        """Sizes of the streams: a cheap check that a resumed job reads the same data."""
        sizes = {f"{lang}.train": int(ids.size) for lang, ids in self.train.items()}
        sizes.update({f"{lang}.valid": int(ids.size) for lang, ids in self.valid.items()})
        return sizes


# Tokens that end a sentence, as the segmenters write them (Moses splits them off; CJK full stops).
SENTENCE_ENDS = frozenset({".", "?", "!", "...", "\u3002", "\uff1f", "\uff01"})


def read_sentence_end_ids(tokenizer_dir: Path) -> np.ndarray:
    """Ids of the vocabulary's sentence-final tokens; a language prefix ("en:.") is ignored, a
    BPE continuation (".@@") is not a sentence end."""
    ids = []
    with open(tokenizer_dir / VOCAB_FILE, encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            token = line.rstrip("\n").split(" ")[0]
            surface = token.split(":", 1)[1] if ":" in token[1:] else token
            if surface in SENTENCE_ENDS:
                ids.append(index)
    return np.asarray(ids, dtype=np.int64)


def read_vocab_size(tokenizer_dir: Path) -> int:
    path = tokenizer_dir / VOCAB_FILE
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: the vocab stage writes tokenizer/{VOCAB_FILE} next to the token "
            "streams (one token a line); rerun it"
        )
    with open(path, encoding="utf-8") as handle:
        size = sum(1 for _ in handle)
    if size <= 5:
        raise ValueError(f"{path}: {size} lines, but the five special tokens alone take five")
    return size


def read_language_token_ids(tokenizer_dir: Path, languages: Sequence[str]):
    """Per-language token ids from the vocab stage's tokenizer, or None if it is not available
    (xling.vocab not installed, or a directory made without it: no tokenizer manifest)."""
    try:
        from xling.vocab import SubwordTokenizer
        from xling.vocab.tokenizer import MANIFEST_FILE
    except ImportError:
        return None
    if not (Path(tokenizer_dir) / MANIFEST_FILE).exists():
        return None
    tokenizer = SubwordTokenizer.load(tokenizer_dir)
    if not hasattr(tokenizer, "language_token_ids"):
        return None
    return {lang: np.asarray(tokenizer.language_token_ids(lang)) for lang in languages}


def read_inputs(
    data_dir: str | Path,
    languages: Sequence[str],
    *,
    seq_len: int,
    alpha: float,
    language_specific: bool,
    language_token_ids: Mapping[str, Sequence[int]] | None = None,
    tokenizer_dir: str | Path | None = None,
    log: Callable[[str], None] = print,
) -> PretrainInputs:
    """Streams, sentence counts, sampling probabilities and, for a model with a language-specific
    part (``language_specific``), each language's ids: its softmax (separate embeddings) and its
    random replacement words (any separate part) keep to them.

    The ids a language may produce come from ``language_token_ids`` if given, else from the
    tokenizer (``xling.vocab``), else from the ids its training stream contains (logged).
    """
    data_dir = Path(data_dir)
    tokenizer_dir = Path(tokenizer_dir) if tokenizer_dir else data_dir / "tokenizer"
    vocab_size = read_vocab_size(tokenizer_dir)
    train = {lang: load_stream(data_dir / f"{lang}.train.npy", vocab_size) for lang in languages}
    valid = {lang: load_stream(data_dir / f"{lang}.valid.npy", vocab_size) for lang in languages}
    for lang, ids in train.items():
        if ids.size < seq_len:
            raise ValueError(
                f"{data_dir / f'{lang}.train.npy'}: {ids.size} tokens, fewer than one stream "
                f"window of seq_len={seq_len}; use a larger corpus or a shorter seq_len"
            )
    sentence_ends = read_sentence_end_ids(tokenizer_dir)
    sentences = {lang: count_sentences(ids, sentence_ends) for lang, ids in train.items()}
    for lang, count in sentences.items():
        if count == 0:
            raise ValueError(
                f"{data_dir / f'{lang}.train.npy'}: no </s> (id 3) in the stream; the vocab stage "
                "ends every sentence with </s>, so this file is not one of its outputs"
            )
    language_ids = None
    if language_specific:
        source = "given"
        if language_token_ids is None:
            language_token_ids = read_language_token_ids(tokenizer_dir, languages)
            source = f"tokenizer {tokenizer_dir}"
        if language_token_ids is None:
            language_token_ids = {
                lang: observed_ids(ids, vocab_size) for lang, ids in train.items()
            }
            source = "the ids each training stream contains (no xling.vocab tokenizer)"
        missing = [lang for lang in languages if lang not in language_token_ids]
        if missing:
            raise ValueError(f"language token ids ({source}) lack the languages {missing}")
        language_ids = {
            lang: normalize_token_ids(language_token_ids[lang], vocab_size, f"token ids of {lang}")
            for lang in languages
        }
        sizes = ", ".join(f"{lang} {ids.size}" for lang, ids in language_ids.items())
        log(f"each language's own ids, for its random replacements ({source}): {sizes} ids")
    return PretrainInputs(
        vocab_size=vocab_size,
        tokenizer_dir=tokenizer_dir,
        train=train,
        valid=valid,
        sentences=sentences,
        probabilities=language_probabilities(sentences, alpha),
        language_ids=language_ids,
    )
