"""Synthetic Zipfian text for tests and benchmarks (not the toy world, which models languages).

Words are built from a script's syllables; frequent words are shorter, as in natural text; word
frequencies follow Zipf's law; a plural-like suffix gives BPE something to learn. ``raw=True``
adds what a tokenizer must undo: capitals, punctuation glued to words, elisions, quotes.
"""

from __future__ import annotations

import numpy as np

SCRIPTS = {
    "latin": ("bcdfghjklmnprstvz", "aeiou", "s"),
    "cyrillic": ("бвгдзклмнпрстх", "аеиоуыяйё", "ы"),
    "greek": ("βγδζκλμνπρστφχ", "αεηιουω", "ς"),
}


def synthetic_lexicon(n_types: int, *, script: str = "latin", seed: int = 0) -> list[str]:
    """``n_types`` distinct words, most frequent (shortest) first."""
    consonants, vowels, _ = SCRIPTS[script]
    syllables = [c + v for c in consonants for v in vowels]
    rng = np.random.default_rng(seed)
    words: dict[str, None] = {}
    while len(words) < n_types:
        # Word length in syllables grows with the rank, like natural vocabularies.
        ranks = np.arange(len(words), n_types)
        lengths = 1 + rng.poisson(0.5 + 2.5 * ranks / n_types)
        drawn = [syllables[index] for index in rng.integers(len(syllables), size=lengths.sum())]
        ends = np.cumsum(lengths).tolist()
        for start, end in zip([0, *ends[:-1]], ends, strict=True):
            words["".join(drawn[start:end])] = None
    return sorted(words, key=len)[:n_types]


def synthetic_sentences(
    n_sentences: int,
    *,
    seed: int = 0,
    n_types: int = 20_000,
    script: str = "latin",
    zipf_exponent: float = 1.05,
    mean_length: int = 12,
    raw: bool = False,
) -> list[str]:
    """``n_sentences`` lines of Zipfian words separated by spaces (``raw=False``) or raw text."""
    lexicon = synthetic_lexicon(n_types, script=script, seed=seed)
    suffix = SCRIPTS[script][2]
    rng = np.random.default_rng(seed + 1)
    weights = 1.0 / np.arange(1, n_types + 1) ** zipf_exponent
    lengths = np.maximum(1, rng.poisson(mean_length, size=n_sentences))
    word_ids = rng.choice(n_types, size=int(lengths.sum()), p=weights / weights.sum())
    suffixed = rng.random(word_ids.size) < 0.15
    decorations = rng.random(word_ids.size)
    lines = []
    start = 0
    for length in lengths.tolist():
        words = []
        for position in range(start, start + length):
            word = lexicon[word_ids[position]] + (suffix if suffixed[position] else "")
            words.append(_decorate(word, decorations[position]) if raw else word)
        start += length
        if raw:
            words[0] = words[0][:1].upper() + words[0][1:]
            lines.append(" ".join(words) + ("?" if decorations[start - 1] < 0.1 else "."))
        else:
            lines.append(" ".join([*words, "."]))
    return lines


def _decorate(word: str, draw: float) -> str:
    """Glue punctuation to some words so that tokenization has work to do."""
    if draw < 0.06:
        return word + ","
    if draw < 0.08:
        return f"({word})"
    if draw < 0.10:
        return f'"{word}"'
    if draw < 0.12:
        return "l'" + word
    if draw < 0.13:
        return word.capitalize()
    if draw < 0.14:
        return f"{word}-{word[::-1]}"
    return word
