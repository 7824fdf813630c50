"""Token streams, language sampling and the batch plan of MLM pretraining.

As in XLM's ``StreamDataset``: a language's corpus is one stream of ids (``</s>`` after every
sentence), cut into windows of ``seq_len`` tokens that cross sentence boundaries and are never
padded. Each epoch of a language shifts the window grid by a random offset and visits the windows in
a random order. Each step trains on one language, drawn with probability proportional to its
sentence count raised to ``alpha`` (paper, section 3.1).

Every random choice is a pure function of ``(seed, step)`` or ``(seed, language, epoch)``; the only
state is how many windows of each language were consumed. So a resumed run, given that state and the
step, draws exactly the batches an uninterrupted run would have drawn.

What a step trains does not depend on the processes: its language, and its global batch of
windows (the next ``global_batch`` of that language's window order), are functions of the seed,
the step and the windows consumed before it. The processes cut the global batch into numbered
micro-batches (:mod:`xling.pretrain.batching`), and each micro-batch's masks and dropout come from
its number. So a run resumed on another number of processes (the same global batch, which the
checkpoint's key holds) trains the same windows in the same order: with the same micro-batch size,
the same masks and dropout too, and the same update up to the order of float sums; with another
micro-batch size (a process count that does not divide ``world_size``), other masks and dropout,
drawn alike. Bit-for-bit equality with an uninterrupted run needs the same processes throughout.
Config ``pretrain.micro_batch`` cuts each micro-batch into parts after it is masked: the same
masks, other dropout.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xling.pretrain.batching import BatchPlan, block_parts

PAD_ID, UNK_ID, BOS_ID, EOS_ID, MASK_ID = 0, 1, 2, 3, 4
NUM_SPECIAL = 5

# Tags that keep the random streams of different purposes apart.
_LANGUAGE_DRAW, _MASKING, _WINDOW_ORDER, _DROPOUT = 0, 1, 2, 3


def step_rng(seed: int, purpose: int, *keys: int) -> np.random.Generator:
    """An independent generator for one (purpose, keys) cell: reproducible from the keys alone."""
    return np.random.default_rng([seed, purpose, *keys])


def step_seed(seed: int, step: int, rank: int = 0, part: int = 0) -> int:
    """A 63-bit seed for torch's dropout RNG at ``step`` (so resumed runs draw the same masks):
    of block ``rank`` of the step, and of its part ``part`` where config ``pretrain.micro_batch``
    cuts the block (part 0 draws what the whole block does)."""
    keys = [seed, _DROPOUT, step, rank, *([part] if part else [])]
    return int(np.random.SeedSequence(keys).generate_state(2, np.uint64)[0] >> 1)


def cut_block(
    arrays: Sequence[np.ndarray], micro_batch: int | None, share: tuple[int, int] = (0, 1)
) -> list[tuple[int, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """A masked block's (input ids, selected flat positions, targets) cut into the parts that
    config ``pretrain.micro_batch`` asks for (:func:`xling.pretrain.batching.block_parts`), each
    with its number: the block itself where it needs no cut. A block that ``share = (index,
    count)`` processes train between them is first cut in ``count``, and only the parts of share
    ``index`` are returned, numbered within the block. A part that selects no position adds
    nothing to the gradient and is left out (its loss, a mean over nothing, is undefined), but
    for the last of a share that selects nothing at all: every process trains at least one
    micro-batch a step, as DDP's gradient all-reduce needs (its loss is 0)."""
    input_ids, selected, targets = arrays
    index, count = share
    per_share = block_parts(len(input_ids) // count, micro_batch)
    parts = count * per_share
    if parts == 1:
        return [(0, (input_ids, selected, targets))]
    rows = len(input_ids) // parts
    width = rows * input_ids.shape[1]
    cut = []
    last = (index + 1) * per_share - 1
    for part in range(index * per_share, last + 1):
        inside = (selected >= part * width) & (selected < (part + 1) * width)
        if inside.any() or (part == last and not cut):
            ids = np.ascontiguousarray(input_ids[part * rows : (part + 1) * rows])
            cut.append((part, (ids, selected[inside] - part * width, targets[inside])))
    return cut


def load_stream(path: str | Path, vocab_size: int | None = None) -> np.ndarray:
    """Memory-map a ``{lang}.{split}.npy`` token stream and check it (contracts, section 3)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run the vocab stage that writes it")
    try:
        ids = np.load(path, mmap_mode="r")
    except ValueError as error:
        raise ValueError(
            f"{path}: not a readable .npy file ({error}); delete it and rerun vocab"
        ) from error
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(
            f"{path}: expected a 1-D integer array of token ids, found shape {ids.shape} and dtype "
            f"{ids.dtype}; rerun the vocab stage"
        )
    if ids.size == 0:
        raise ValueError(f"{path}: the token stream is empty; the corpus of this language is empty")
    if vocab_size is not None:
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= vocab_size:
            raise ValueError(
                f"{path}: token ids span [{low}, {high}] but the vocabulary has {vocab_size} "
                "entries; the stream and tokenizer/vocab.txt come from different vocab runs, "
                "rerun vocab"
            )
    return ids


def count_sentences(
    ids: np.ndarray, sentence_end_ids: np.ndarray | None = None, chunk: int = 1 << 24
) -> int:
    """Sentences in a stream: its lines (``</s>`` ids), plus the sentence ends inside a line.

    Wikipedia's text has a paragraph a line and CC-100's a sentence a line; counting lines alone
    would weigh a language's CC text about twice its Wikipedia text, where Wu et al. (3.1) sample
    by sentences. A sentence end inside a line is a ``sentence_end_ids`` token (".", "?", "!",
    "。" ...) followed by a token that is neither another end nor ``</s>``. Chunked so that a
    memory map is never read whole.
    """
    lines = sum(
        int(np.count_nonzero(ids[i : i + chunk] == EOS_ID)) for i in range(0, ids.size, chunk)
    )
    if sentence_end_ids is None or sentence_end_ids.size == 0 or ids.size < 2:
        return lines
    stops = np.append(sentence_end_ids, EOS_ID)
    inside = 0
    for i in range(0, ids.size - 1, chunk):
        window = ids[i : min(i + chunk + 1, ids.size)]  # one token of overlap: the follower
        ends = np.isin(window[:-1], sentence_end_ids)
        inside += int(np.count_nonzero(ends & ~np.isin(window[1:], stops)))
    return lines + inside


def language_probabilities(sentence_counts: Mapping[str, int], alpha: float) -> dict[str, float]:
    """p(lang) proportional to sentences^alpha (XLM's ``--lg_sampling_factor``)."""
    if any(n <= 0 for n in sentence_counts.values()):
        raise ValueError(f"every language needs at least one sentence, got {dict(sentence_counts)}")
    weights = {lang: float(n) ** alpha for lang, n in sentence_counts.items()}
    total = sum(weights.values())
    return {lang: w / total for lang, w in weights.items()}


class WindowOrder:
    """Which windows of one language's stream come in which order, epoch after epoch."""

    def __init__(self, length: int, seq_len: int, seed: int, lang_key: int):
        if length < seq_len:
            raise ValueError(f"stream of {length} tokens is shorter than one window of {seq_len}")
        self.seq_len, self.seed, self.lang_key = seq_len, seed, lang_key
        self.per_epoch = 1 if length == seq_len else (length - 1) // seq_len
        self.slack = length - self.per_epoch * seq_len
        self._cache: dict[int, tuple[int, np.ndarray]] = {}

    def _epoch(self, epoch: int) -> tuple[int, np.ndarray]:
        if epoch not in self._cache:
            rng = step_rng(self.seed, _WINDOW_ORDER, self.lang_key, epoch)
            offset = int(rng.integers(min(self.slack, self.seq_len - 1) + 1))
            self._cache = {epoch: (offset, rng.permutation(self.per_epoch))}
        return self._cache[epoch]

    def starts(self, first: int, count: int) -> np.ndarray:
        """Start offsets of windows number ``first`` .. ``first + count - 1`` (global count)."""
        out = np.empty(count, dtype=np.int64)
        for i, n in enumerate(range(first, first + count)):
            offset, order = self._epoch(n // self.per_epoch)
            out[i] = offset + int(order[n % self.per_epoch]) * self.seq_len
        return out


@dataclass
class StreamBatch:
    """The unmasked windows of one step for this process, and the sampler state after the step.

    ``tokens`` holds the process's micro-batches one after the other, ``blocks`` their numbers in
    the step (:mod:`xling.pretrain.batching`).
    """

    step: int
    lang: str
    tokens: np.ndarray  # (micro-batches x micro-batch size, seq_len) int64
    consumed: dict[str, int]
    blocks: range = range(1)
    share: tuple[int, int] = (0, 1)  # the part of the block this process trains, of how many

    def micro_batches(self) -> Iterator[tuple[int, np.ndarray]]:
        """Each micro-batch's number and windows."""
        size = len(self.tokens) // len(self.blocks)
        for index, block in enumerate(self.blocks):
            yield block, self.tokens[index * size : (index + 1) * size]


class StreamSampler:
    """The batch plan: language and windows of every step, for each of the plan's processes.

    All processes train on the same language at a step (so every process uses the same
    language-specific parameters); process ``rank`` takes the windows of its blocks of the step's
    global batch, ``plan.blocks(rank)``, each of ``plan.micro_batch`` windows; processes that share
    a block (``plan.sharing`` > 1) each take the whole block, to train their own part of it
    (:mod:`xling.pretrain.batching`).
    """

    def __init__(
        self,
        streams: Mapping[str, np.ndarray],
        probabilities: Mapping[str, float],
        *,
        seq_len: int,
        seed: int,
        plan: BatchPlan,
        rank: int = 0,
    ):
        self.languages = list(streams)
        self.streams = dict(streams)
        self.cumulative = np.cumsum([probabilities[lang] for lang in self.languages])
        self.seq_len, self.seed, self.plan, self.rank = seq_len, seed, plan, rank
        self.orders = {
            lang: WindowOrder(len(ids), seq_len, seed, index)
            for index, (lang, ids) in enumerate(self.streams.items())
        }

    def language_at(self, step: int) -> str:
        u = step_rng(self.seed, _LANGUAGE_DRAW, step).random() * self.cumulative[-1]
        index = int(np.searchsorted(self.cumulative, u, side="right"))
        return self.languages[min(index, len(self.languages) - 1)]

    def batch(self, step: int, consumed: Mapping[str, int]) -> StreamBatch:
        lang = self.language_at(step)
        plan, blocks = self.plan, self.plan.blocks(self.rank)
        block_size = plan.micro_batch * plan.sharing
        after = dict(consumed)
        after[lang] = consumed.get(lang, 0) + plan.global_batch
        first = consumed.get(lang, 0) + blocks.start * block_size
        starts = self.orders[lang].starts(first, len(blocks) * block_size)
        tokens = np.asarray(self.streams[lang][starts[:, None] + np.arange(self.seq_len)], np.int64)
        return StreamBatch(step, lang, tokens, after, blocks, plan.share(self.rank))

    def iterate(self, first_step: int, last_step: int, consumed: Mapping[str, int]):
        """Batches of steps ``first_step`` .. ``last_step`` (inclusive), from state ``consumed``."""
        state = dict(consumed)
        for step in range(first_step, last_step + 1):
            batch = self.batch(step, state)
            state = batch.consumed
            yield batch


def dev_windows(ids: np.ndarray, seq_len: int, max_tokens: int) -> np.ndarray:
    """The first ``max_tokens`` dev tokens as full windows (one short window if the set is tiny)."""
    usable = min(len(ids), max_tokens)
    if usable < seq_len:
        return np.asarray(ids[:usable], np.int64)[None, :]
    count = usable // seq_len
    return np.asarray(ids[: count * seq_len], np.int64).reshape(count, seq_len)


def prefetch(items: Iterator, transform: Callable, depth: int = 2) -> Iterator:
    """Yield ``transform(item)`` for each item, computed ``depth`` items ahead in a thread.

    Used on GPU: the host prepares (masks, pins) the next batch while the device trains on this one.
    """
    done = object()
    buffer: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def work() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                buffer.put(transform(item))
            buffer.put(done)
        except BaseException as error:  # handed to the consumer, which re-raises it
            buffer.put(error)

    thread = threading.Thread(target=work, daemon=True, name="xling-prefetch")
    thread.start()
    try:
        while True:
            item = buffer.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while thread.is_alive():
            try:
                buffer.get_nowait()
            except queue.Empty:
                thread.join(timeout=0.05)


def non_special_ids(vocab_size: int) -> np.ndarray:
    return np.arange(NUM_SPECIAL, vocab_size, dtype=np.int64)


def observed_ids(ids: np.ndarray, vocab_size: int, max_tokens: int = 100_000_000) -> np.ndarray:
    """Token ids that occur in (the first ``max_tokens`` of) a stream, specials excluded."""
    counts = np.bincount(np.asarray(ids[:max_tokens]), minlength=vocab_size)
    present = np.flatnonzero(counts)
    return present[present >= NUM_SPECIAL].astype(np.int64)


def normalize_token_ids(ids: Sequence[int] | np.ndarray, vocab_size: int, what: str) -> np.ndarray:
    ids = np.unique(np.asarray(ids, dtype=np.int64))
    if ids.size and (ids[0] < 0 or ids[-1] >= vocab_size):
        raise ValueError(
            f"{what}: token ids must lie in [0, {vocab_size}), got [{ids[0]}, {ids[-1]}]"
        )
    ids = ids[ids >= NUM_SPECIAL]
    if ids.size == 0:
        raise ValueError(f"{what}: no ordinary (non-special) token ids")
    return ids
