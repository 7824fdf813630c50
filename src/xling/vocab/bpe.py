"""Learning and applying BPE, with HF ``tokenizers`` (fast) or subword-nmt (the reference).

Learning with ``tokenizers`` is 10-20x faster than subword-nmt. Its merges differ from
subword-nmt's only in how ties between equally frequent pairs are broken (both are valid BPE),
and are made reproducible from process to process (see :func:`learn_bpe`).

Applying is exact: for the same merges, :class:`TokenizersBpe` outputs exactly what subword-nmt's
``apply_bpe`` outputs (``@@`` after every non-final piece). What makes it exact:

* the HF model gets an unknown-token sentinel and ``fuse_unk=False``; a word with a character that
  no merge contains (unseen in training, or seen only word-internally and now word-final) is cut
  by the character offsets of its tokens, so that character stays a piece of its own, as in
  subword-nmt, instead of being silently dropped (the pitfall of an HF vocabulary that lacks a
  character of the input);
* words are passed pre-split, without a pre-tokenizer, and repeated merges keep their first rank.

Both appliers cache the segmentation of each distinct word (Zipfian text repeats words), and the
``tokenizers`` one segments the new words of a batch in one parallel call.
"""

from __future__ import annotations

import abc
import contextlib
import io
import itertools
import json
import sys
from collections.abc import Iterable, Sequence
from typing import ClassVar

import numpy as np

from xling.base.fileio import StrPath, iter_text
from xling.vocab.codes import CODES_HEADER, END_OF_WORD, SEPARATOR, Merge, unique_merges

BPE_BACKENDS = ("tokenizers", "subword-nmt")

# Contains a space, so no merge symbol (never containing whitespace) can be equal to it.
_UNKNOWN_SENTINEL = "\x00 unknown"


def _check_backend(backend: str) -> None:
    if backend not in BPE_BACKENDS:
        raise ValueError(f"unknown BPE backend {backend!r}; choose one of {BPE_BACKENDS}")


def corpus_characters(paths: Iterable[StrPath]) -> set[str]:
    """Every character of text files, whitespace included.

    Marks code points in a numpy table, block by block (several times faster than
    ``set.update(text)``).
    """
    seen = np.zeros(sys.maxunicode + 1, dtype=bool)
    for path in paths:
        with open(path, encoding="utf-8", newline="") as handle:
            while block := handle.read(1 << 22):
                seen[np.frombuffer(block.encode("utf-32-le"), dtype="<u4")] = True
    return {chr(code) for code in np.flatnonzero(seen).tolist()}


def corpus_alphabet(paths: Iterable[StrPath]) -> set[str]:
    """The characters that can occur inside words of text files (whitespace excluded)."""
    return {char for char in corpus_characters(paths) if not char.isspace()}


def learn_bpe(
    paths: Sequence[StrPath],
    num_merges: int,
    *,
    backend: str = "tokenizers",
    min_frequency: int = 2,
) -> list[Merge]:
    """Learn ``num_merges`` BPE merges from whitespace-tokenized text files.

    Args:
        paths: training text, one sentence a line, tokens separated by spaces.
        num_merges: merges to learn; fewer come back only when no pair reaches
            ``min_frequency`` any more.
        backend: ``tokenizers`` or ``subword-nmt``.
        min_frequency: a pair seen fewer times is never merged (subword-nmt's default is 2).

    Returns:
        The merges in order, with ``</w>`` on word-final symbols (subword-nmt codes format).
        With ``tokenizers`` the result is the same in every process (ties are broken by fixed
        symbol ids).
    """
    _check_backend(backend)
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, not {num_merges}")
    if backend == "subword-nmt":
        return _learn_subword_nmt(paths, num_merges, min_frequency)
    return _learn_tokenizers(paths, num_merges, min_frequency)


def _learn_tokenizers(paths: Sequence[StrPath], num_merges: int, min_frequency: int) -> list[Merge]:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    # Whitespace included: Rust and Python disagree on a few whitespace characters.
    alphabet = sorted(corpus_characters(paths) - {" ", "\n"})
    # HF breaks ties between equally frequent pairs by symbol id, and would number word-final
    # symbols (`x</w>`) in hash-map order, which changes from process to process. Registering
    # all of them first, sorted, as trainer special tokens fixes every id, so the merges are
    # reproducible. (Special tokens are ordinary symbols for the merge statistics.)
    final_symbols = [char + END_OF_WORD for char in alphabet]
    # HF stops at a vocabulary size, not a merge count; the initial vocabulary is exactly the
    # characters and their word-final symbols, and a merge adds at most one symbol. So this
    # size yields at least num_merges merges (unless pairs run out), and the first num_merges
    # of a longer greedy run are exactly the num_merges-merge result.
    tokenizer = Tokenizer(models.BPE(unk_token=None, end_of_word_suffix=END_OF_WORD))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(
        vocab_size=2 * len(alphabet) + num_merges,
        min_frequency=min_frequency,
        end_of_word_suffix=END_OF_WORD,
        show_progress=False,
        special_tokens=final_symbols,
    )
    tokenizer.train([str(path) for path in paths], trainer)
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    # Older tokenizers serialize a merge as "a b", newer ones as ["a", "b"].
    pairs = [
        tuple(merge.split(" ")) if isinstance(merge, str) else tuple(merge) for merge in merges
    ]
    return [(left, right) for left, right in pairs[:num_merges]]


def _learn_subword_nmt(
    paths: Sequence[StrPath], num_merges: int, min_frequency: int
) -> list[Merge]:
    from subword_nmt.learn_bpe import learn_bpe as subword_nmt_learn_bpe

    codes = io.StringIO()
    # subword-nmt draws a tqdm progress bar on stderr, one line per update in a log file.
    with contextlib.redirect_stderr(io.StringIO()):
        subword_nmt_learn_bpe(iter_text(paths), codes, num_merges, min_frequency=min_frequency)
    lines = codes.getvalue().split("\n")
    return [(left, right) for left, right in (line.split(" ") for line in lines[1:] if line)]


class BpeApplier(abc.ABC):
    """Segments words with fixed merges into subword-nmt pieces (``@@`` on non-final pieces)."""

    backend: ClassVar[str]

    def __init__(self, merges: Sequence[Merge], *, max_cached_words: int = 2_000_000) -> None:
        self.merges = unique_merges(merges)
        self.max_cached_words = max_cached_words
        self._cache: dict[str, str] = {}

    @abc.abstractmethod
    def segment_new_words_joined(self, words: Sequence[str]) -> list[str]:
        """Each word as subword-nmt writes it (``ab@@ c``), without the cache.

        Words must be non-empty and contain no space.
        """

    def segment_new_words(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """The pieces of each word (``("ab@@", "c")``), without the cache."""
        return [tuple(joined.split(" ")) for joined in self.segment_new_words_joined(words)]

    def _segmented(self, words: Sequence[str]) -> dict[str, str]:
        """The cache, holding every word of ``words``."""
        cache = self._cache
        if len(cache) > self.max_cached_words:
            cache.clear()
        missing = [word for word in dict.fromkeys(words) if word not in cache]
        if missing:
            cache.update(zip(missing, self.segment_new_words_joined(missing), strict=True))
        return cache

    def segment_words(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """The pieces of each word (cached per distinct word)."""
        cache = self._segmented(words)
        return [tuple(cache[word].split(" ")) for word in words]

    def segment_line(self, line: str) -> str:
        """A space-separated line segmented as subword-nmt's ``BPE.segment`` does."""
        return self.segment_lines([line])[0]

    def segment_lines(self, lines: Sequence[str]) -> list[str]:
        """Segment lines as subword-nmt's ``BPE.segment`` does (words split at single spaces,
        empty words skipped, ``@@ `` between the pieces of a word); new words of all the lines
        are segmented in one batch."""
        split_lines = []
        for line in lines:
            words = line.strip("\r\n ").split(" ")
            split_lines.append([word for word in words if word] if "" in words else words)
        cache = self._segmented(list(itertools.chain.from_iterable(split_lines)))
        return [" ".join(map(cache.__getitem__, words)) for words in split_lines]


class TokenizersBpe(BpeApplier):
    """HF ``tokenizers`` BPE set up to reproduce subword-nmt's ``apply_bpe`` exactly."""

    backend = "tokenizers"
    _BATCH_WORDS = 4096

    def __init__(self, merges: Sequence[Merge], *, max_cached_words: int = 2_000_000) -> None:
        super().__init__(merges, max_cached_words=max_cached_words)
        from tokenizers import Tokenizer, models

        vocab = {_UNKNOWN_SENTINEL: 0}
        for left, right in self.merges:
            for symbol in (left, right, left + right):
                vocab.setdefault(symbol, len(vocab))
        self._tokenizer = Tokenizer(
            models.BPE(
                vocab=vocab,
                merges=self.merges,
                unk_token=_UNKNOWN_SENTINEL,
                fuse_unk=False,
                end_of_word_suffix=END_OF_WORD,
            )
        )

    def segment_new_words_joined(self, words: Sequence[str]) -> list[str]:
        chunks = [
            words[start : start + self._BATCH_WORDS]
            for start in range(0, len(words), self._BATCH_WORDS)
        ]
        encodings = self._tokenizer.encode_batch(
            chunks, is_pretokenized=True, add_special_tokens=False
        )
        result: list[str] = []
        for chunk, encoding in zip(chunks, encodings, strict=True):
            tokens = encoding.tokens
            if _UNKNOWN_SENTINEL not in tokens:
                # Every word ends with a `...</w>` token: join all tokens with "@@ ", then cut
                # at the word ends, in C. A literal "</w>" inside a word would cut wrongly;
                # the count check sends such a chunk to the general path.
                words_joined = (SEPARATOR + " ").join(tokens)[: -len(END_OF_WORD)]
                segmented = words_joined.split(END_OF_WORD + SEPARATOR + " ")
                if len(segmented) == len(chunk):
                    result.extend(segmented)
                    continue
            result.extend(_joined_from_offsets(chunk, encoding.offsets, encoding.word_ids))
        return result


def _joined_from_offsets(
    chunk: Sequence[str], offsets: Sequence[tuple[int, int]], word_ids: Sequence[int | None]
) -> list[str]:
    """Cut each word by the character offsets of its tokens (right for unknown characters)."""
    pieces: list[list[str]] = [[] for _ in chunk]
    for (start, end), word_index in zip(offsets, word_ids, strict=True):
        pieces[word_index].append(chunk[word_index][start:end])  # type: ignore[index]
    return [(SEPARATOR + " ").join(word_pieces) for word_pieces in pieces]


class SubwordNmtBpe(BpeApplier):
    """subword-nmt's own ``BPE`` class (the reference implementation)."""

    backend = "subword-nmt"

    def __init__(self, merges: Sequence[Merge], *, max_cached_words: int = 2_000_000) -> None:
        super().__init__(merges, max_cached_words=max_cached_words)
        from subword_nmt.apply_bpe import BPE

        codes = CODES_HEADER + "\n" + "".join(f"{left} {right}\n" for left, right in self.merges)
        self._bpe = BPE(io.StringIO(codes), separator=SEPARATOR)

    def segment_new_words_joined(self, words: Sequence[str]) -> list[str]:
        if len(self._bpe.cache) > self.max_cached_words:
            self._bpe.cache.clear()
        return [" ".join(self._bpe.segment_tokens([word])) for word in words]


def make_bpe_applier(backend: str, merges: Sequence[Merge]) -> BpeApplier:
    """The applier of ``backend`` (``tokenizers`` or ``subword-nmt``) for ``merges``."""
    _check_backend(backend)
    return TokenizersBpe(merges) if backend == "tokenizers" else SubwordNmtBpe(merges)
