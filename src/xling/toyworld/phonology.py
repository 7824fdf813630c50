"""Sounds and letters of a toy language: syllables, word shapes, scripts and loanword adaptation.

Every word is made in a Latin romanization first (a tuple of syllables) and then rendered in the
language's script: Latin as is, Cyrillic by a letter map, Han one character per syllable. Loanwords,
cognates and transliterated names are adapted from the English spelling the same way.
"""

from __future__ import annotations

import random
import re
import zlib

# Romanization -> Cyrillic; longer keys first so that digraphs win (`sh` before `s`).
_CYRILLIC = {
    "shch": "щ", "sch": "ш", "zh": "ж", "kh": "х", "ts": "ц", "ch": "ч", "sh": "ш", "th": "т",
    "ph": "ф", "ck": "к", "ya": "я", "yu": "ю", "yo": "ё", "ee": "и", "oo": "у",
    "a": "а", "b": "б", "c": "к", "d": "д", "e": "е", "f": "ф", "g": "г", "h": "х", "i": "и",
    "j": "дж", "k": "к", "l": "л", "m": "м", "n": "н", "o": "о", "p": "п", "q": "к", "r": "р",
    "s": "с", "t": "т", "u": "у", "v": "в", "w": "в", "x": "кс", "y": "ы", "z": "з",
    "ä": "э", "ö": "ё", "ü": "ю", "é": "е", "è": "е", "ß": "сс",
}  # fmt: skip
_CYRILLIC_RE = re.compile("|".join(sorted(map(re.escape, _CYRILLIC), key=len, reverse=True)))

# The CJK Unified Ideographs block the Han table draws its characters from.
_HAN_FIRST, _HAN_LAST = 0x4E00, 0x9FA5
_VOWEL_CHUNK_RE = re.compile(r"[^aeiouy]*[aeiouy]+|[^aeiouy]+$")


def to_cyrillic(text: str) -> str:
    """Transliterate a lower-case romanized string to Cyrillic (unknown characters pass through)."""
    return _CYRILLIC_RE.sub(lambda m: _CYRILLIC[m.group(0)], text)


def stable_hash(text: str) -> int:
    """A hash that does not depend on PYTHONHASHSEED (Python's `hash` of a str does)."""
    return zlib.crc32(text.encode("utf-8"))


class Phonology:
    """The syllable inventory and script of one language.

    Args:
        onsets, vowels, codas: romanized pieces; a syllable is onset + vowel + coda. Repeat an entry
            (for example "") to make it more frequent.
        tones: number of tones (0 for none); a tone digit ends each syllable of a tonal language and
            only matters for the Han script, where every syllable-with-tone is its own character.
        max_syllables: the longest word the language makes.
        script: "latin", "cyrillic" or "han".
        rng: seeds the Han character table.
    """

    def __init__(
        self,
        onsets: list[str],
        vowels: list[str],
        codas: list[str],
        tones: int,
        max_syllables: int,
        script: str,
        rng: random.Random,
    ) -> None:
        self.onsets, self.vowels, self.codas = list(onsets), list(vowels), list(codas)
        self.tones = tones
        self.max_syllables = max_syllables
        self.script = script
        self.han: dict[str, str] = {}
        if script == "han":
            syllables = sorted(self._all_syllables())
            chars = rng.sample(range(_HAN_FIRST, _HAN_LAST + 1), len(syllables))
            self.han = {s: chr(c) for s, c in zip(syllables, chars, strict=True)}
            # Foreign names are spelled with a smaller set of characters (first tone, no coda),
            # as Chinese transliteration uses a restricted character set.
            tone = "1" if tones else ""
            plain = {o + v + tone for o in self.onsets for v in self.vowels}
            self.transliteration = sorted(plain.intersection(syllables)) or syllables

    def _all_syllables(self) -> set[str]:
        tones = [str(t) for t in range(1, self.tones + 1)] or [""]
        return {o + v + c + t for o in self.onsets for v in self.vowels for c in self.codas
                for t in tones}  # fmt: skip

    def syllable(self, rng: random.Random) -> str:
        """One random syllable (romanized)."""
        tone = str(rng.randint(1, self.tones)) if self.tones else ""
        return rng.choice(self.onsets) + rng.choice(self.vowels) + rng.choice(self.codas) + tone

    def word(self, rng: random.Random, syllables: int) -> tuple[str, ...]:
        """A random word of `syllables` syllables (capped at `max_syllables`)."""
        n = max(1, min(syllables, self.max_syllables))
        return tuple(self.syllable(rng) for _ in range(n))

    def render(self, syllables: tuple[str, ...]) -> str:
        """Write a romanized word (tuple of syllables) in this language's script."""
        if self.script == "han":
            return "".join(self.han[s] for s in syllables)
        text = "".join(syllables)
        return to_cyrillic(text) if self.script == "cyrillic" else text

    def render_suffix(self, suffix: str) -> str:
        """Write an inflectional suffix (romanized) in this language's script."""
        return to_cyrillic(suffix) if self.script == "cyrillic" else suffix

    def adapt(self, english: str, rewrites: list[tuple[re.Pattern[str], str]]) -> str:
        """Adapt a lower-case English spelling as a loanword or name of this language.

        Latin and Cyrillic apply the language's rewrite rules (sound changes) and then the script;
        Han spells the word chunk by chunk (consonants + vowels) with transliteration characters,
        each chunk always mapping to the same character.
        """
        if self.script == "han":
            chunks = _VOWEL_CHUNK_RE.findall(english) or [english]
            pool = self.transliteration
            return "".join(self.han[pool[stable_hash(c) % len(pool)]] for c in chunks)
        text = english
        for pattern, replacement in rewrites:
            text = pattern.sub(replacement, text)
        return to_cyrillic(text) if self.script == "cyrillic" else text


def capitalize(text: str) -> str:
    """Upper-case the first character only (`str.capitalize` would lower-case acronyms)."""
    return text[:1].upper() + text[1:]
