"""Binarized corpora: token ids of every sentence followed by ``</s>``, in a 1-D int32 ``.npy``.

Corpora are encoded in chunks of lines and streamed into the ``.npy`` file, so memory does not
grow with the corpus: the header (fixed at 128 bytes for a 1-D int32 array of any length) is
reserved first and filled in once the length is known; the file appears atomically.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO

import numpy as np

from xling.base.atomic import atomic_open
from xling.base.fileio import StrPath

_HEADER_BYTES = 128
_CHUNK_LINES = 20_000

WordsToIds = Callable[[list[str]], Sequence[Sequence[int]]]


def _npy_header(length: int) -> bytes:
    buffer = io.BytesIO()
    header = {"descr": "<i4", "fortran_order": False, "shape": (length,)}
    np.lib.format.write_array_header_1_0(buffer, header)
    data = buffer.getvalue()
    if len(data) != _HEADER_BYTES:  # numpy pads to a multiple of 64 bytes; 1-D always fits 128
        raise AssertionError(f"unexpected .npy header size {len(data)}")
    return data


class Int32NpyWriter:
    """Appends int32 values to an open ``.npy`` file whose header is written at the end."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self.length = 0
        handle.write(b"\0" * _HEADER_BYTES)

    def write(self, values: np.ndarray | Sequence[int]) -> None:
        array = np.asarray(values, dtype="<i4")
        self._handle.write(array.tobytes())
        self.length += array.size

    def finish(self) -> None:
        self._handle.seek(0)
        self._handle.write(_npy_header(self.length))
        self._handle.seek(0, 2)


@contextlib.contextmanager
def npy_int32_writer(path: StrPath) -> Iterator[Int32NpyWriter]:
    """Context manager: a writer whose file appears complete at ``path`` on success only."""
    with atomic_open(path, "wb") as handle:
        writer = Int32NpyWriter(handle)
        yield writer
        writer.finish()


@dataclasses.dataclass(frozen=True)
class CorpusCounts:
    """Sentences and subword tokens (``</s>`` not counted) of one binarized corpus."""

    sentences: int
    tokens: int
    unknown_tokens: int

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


def encode_lines(
    lines: Iterable[str],
    words_to_ids: WordsToIds,
    eos_id: int,
    *,
    chunk_lines: int = _CHUNK_LINES,
) -> Iterator[np.ndarray]:
    """Yield int32 arrays of ids, each sentence followed by ``eos_id``; empty lines are skipped.

    ``words_to_ids`` maps the whitespace-separated words of a whole chunk at once (so that a
    backend can segment the chunk's new words in one batch).
    """
    iterator = iter(lines)
    eos = (eos_id,)
    while chunk := list(itertools.islice(iterator, chunk_lines)):
        sentences = [words for line in chunk if (words := line.split())]
        if not sentences:
            continue
        word_ids = words_to_ids([word for words in sentences for word in words])
        pieces: list[Sequence[int]] = []
        position = 0
        for words in sentences:
            pieces.extend(word_ids[position : position + len(words)])
            pieces.append(eos)
            position += len(words)
        yield np.fromiter(itertools.chain.from_iterable(pieces), dtype=np.int32)


class CachedWordIds:
    """Maps words to id tuples through a BPE applier, caching each distinct word.

    ``piece_to_id`` turns a subword-nmt piece into an id (adding a language prefix, looking it
    up, or assigning a new id while a vocabulary is being collected).
    """

    def __init__(
        self,
        segment_new_words: Callable[[Sequence[str]], list[tuple[str, ...]]],
        piece_to_id: Callable[[str], int],
        *,
        max_cached_words: int = 1_000_000,
    ) -> None:
        self._segment = segment_new_words
        self._piece_to_id = piece_to_id
        self._cache: dict[str, tuple[int, ...]] = {}
        self._max = max_cached_words

    def __call__(self, words: Sequence[str]) -> list[tuple[int, ...]]:
        cache = self._cache
        if len(cache) > self._max:
            cache.clear()
        missing = [word for word in dict.fromkeys(words) if word not in cache]
        if missing:
            to_id = self._piece_to_id
            for word, pieces in zip(missing, self._segment(missing), strict=True):
                cache[word] = tuple(to_id(piece) for piece in pieces)
        return [cache[word] for word in words]


def corpus_counts(arrays: Iterable[np.ndarray], eos_id: int, unk_id: int) -> CorpusCounts:
    """Sentence, token and unknown-token counts of binarized chunks."""
    sentences = tokens = unknown = 0
    for array in arrays:
        n_eos = int(np.count_nonzero(array == eos_id))
        sentences += n_eos
        tokens += array.size - n_eos
        unknown += int(np.count_nonzero(array == unk_id))
    return CorpusCounts(sentences=sentences, tokens=tokens, unknown_tokens=unknown)
