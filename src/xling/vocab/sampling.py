"""The language-balanced sample of training sentences that BPE is learned on.

Each language contributes ``sentences_per_language`` lines drawn uniformly without replacement
from its training corpus. A language with fewer lines contributes all of them. When
``upsample=True`` (a joint BPE over several languages) a smaller corpus is repeated (whole
copies, plus a random subset for the remainder) up to the size of the largest one (capped at
``sentences_per_language``), so that every language weighs the same in the merge statistics, as
XLM does for small languages. Repetition only balances: when every corpus is smaller than the
target, none is repeated (repeating would push rare pairs over ``min_frequency``).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping

import numpy as np

from xling.base.atomic import atomic_open
from xling.base.fileio import StrPath, count_lines


def language_seed(seed: int, lang: str) -> int:
    """A seed for ``lang`` derived from the global ``seed``, stable across runs and platforms."""
    return zlib.crc32(f"{seed}:{lang}".encode())


def write_bpe_sample(
    out_path: StrPath,
    corpora: Mapping[str, StrPath],
    sentences_per_language: int,
    *,
    seed: int,
    upsample: bool,
) -> dict[str, int]:
    """Write the sample of every language of ``corpora`` (lang -> file) to ``out_path``.

    Returns the number of lines written per language. Two passes over each corpus (the second
    stops after the last chosen line), with memory proportional to the sample size.
    """
    if sentences_per_language < 1:
        raise ValueError(f"sentences_per_language must be >= 1, not {sentences_per_language}")
    sizes = {lang: count_lines(path) for lang, path in corpora.items()}
    wanted = min(sentences_per_language, max(sizes.values(), default=0))
    written = {}
    with atomic_open(out_path, "wb") as out:
        for lang, path in corpora.items():
            lines, times = _chosen_lines(sizes[lang], wanted, language_seed(seed, lang), upsample)
            written[lang] = int(times.sum())
            chosen = iter(zip(lines.tolist(), times.tolist(), strict=True))
            wanted_index, repeat = next(chosen, (-1, 0))
            with open(path, "rb") as source:
                for index, raw in enumerate(source):
                    if index != wanted_index:
                        continue
                    out.write((raw if raw.endswith(b"\n") else raw + b"\n") * repeat)
                    wanted_index, repeat = next(chosen, (-1, 0))
                    if wanted_index < 0:
                        break
    return written


def _chosen_lines(
    n_lines: int, wanted: int, seed: int, upsample: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted indices of the lines in the sample, and how many times each goes in."""
    rng = np.random.default_rng(seed)
    if n_lines >= wanted:
        lines = np.sort(rng.choice(n_lines, size=wanted, replace=False))
        return lines, np.ones(wanted, dtype=np.int64)
    lines = np.arange(n_lines)
    if not upsample or n_lines == 0:
        return lines, np.ones(n_lines, dtype=np.int64)
    times = np.full(n_lines, wanted // n_lines, dtype=np.int64)
    times[rng.choice(n_lines, size=wanted % n_lines, replace=False)] += 1
    return lines, times
