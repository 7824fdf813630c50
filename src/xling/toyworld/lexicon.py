"""The words of one toy language: a form for every concept, its inflection, and its anchors.

English is built first from its own phonology. Every other language is built against English:
first it decides which words are anchors (strings identical to English) so that the share of the
English word types of a reference sample (case-folded) that it writes identically equals
`anchor_share`; then names and loanwords are adapted from English, and every other word is made
from the language's own syllables, never colliding with any English form (so that anchors are
exactly the planned ones).
"""

from __future__ import annotations

import random
import re

from .concepts import CATEGORIES, World
from .phonology import Phonology

CASES = ("subj", "obj", "obl")
PRONOUNS = ("pron.1sg", "pron.2", "pron.1pl", "pron.3pl")
# Function-word keys; articles get agreement suffixes (det.def.pl.obj) when the profile asks.
FUNCTION_KEYS = (
    *("det.def", "det.indef", "neg", "neg2", "neg_aux", "and", "because", "that", "in", "from"),
    *("by", "cop", "pass_aux", "adj_part"),
    *(f"clf.{c}" for c in CATEGORIES),
    *PRONOUNS,
)
FUNCTION_KEY_PATTERN = (
    r"^(det\.(def|indef)(\.(sg|pl))?(\.(subj|obj|obl))?|"
    + "|".join(re.escape(k) for k in FUNCTION_KEYS if not k.startswith("det."))
    + ")$"
)
_ACRONYM_LETTERS = "bcdfghklmnprstvz"
_MAX_TRIES = 400


def base_key(key: str) -> str:
    """`det.def.pl.obj` -> `det.def`: the key whose English form an anchored variant copies."""
    return ".".join(key.split(".")[:2]) if key.startswith("det.") else key


def function_keys(profile: dict) -> list[str]:
    """The function words a profile's grammar uses, with article agreement variants spelled out."""
    keys = ["neg", "and", "because", "that", "in", "from", *PRONOUNS]
    kinds = {"none": (), "definite": ("def",), "both": ("def", "indef")}[profile["articles"]]
    agree = profile["article_agreement"]
    for kind in kinds:
        variants = [f"det.{kind}"]
        if "number" in agree:
            variants = [f"{v}.{n}" for v in variants for n in ("sg", "pl")]
        if "case" in agree:
            variants = [f"{v}.{c}" for v in variants for c in CASES]
        keys += variants
    keys += ["neg2"] if profile["negation"] == "both" else []
    keys += ["neg_aux"] if profile["negation_aux"] else []
    keys += ["by", "pass_aux"] if profile["passive_rate"] > 0 else []
    keys += ["cop"] if profile["copula"] else []
    keys += ["adj_part"] if profile["adjective_particle"] else []
    keys += [f"clf.{c}" for c in CATEGORIES] if profile["classifiers"] else []
    return keys


class Lexicon:
    """Surface forms of one language. Stems are stored lower-case; realization capitalizes.

    Build it with `build_lexicon`; `english` is None only for English itself.
    """

    def __init__(self, lang: str, profile: dict, world: World, phon: Phonology) -> None:
        self.lang, self.profile, self.world, self.phon = lang, profile, world, phon
        self.stems: list[str] = [""] * len(world.lexemes)
        self.function: dict[str, str] = {}
        self.anchored: set[int] = set()
        self.anchored_function: set[str] = set()
        self.plural = phon.render_suffix(profile["plural_suffix"])
        self.case = {c: phon.render_suffix(profile["case_suffixes"][c]) for c in CASES}
        self.participle = phon.render_suffix(profile["participle_suffix"])
        self.adjective_agreement = profile["adjective_agreement"]
        self.passive = profile["passive_rate"] > 0

    # --- forms -----------------------------------------------------------------------------
    def declines(self, lex: int) -> bool:
        """Anchors in a non-Latin script are foreign words and stay uninflected (as in Russian)."""
        return self.phon.script == "latin" or lex not in self.anchored

    def noun(self, lex: int, plural: bool, case: str) -> str:
        stem = self.stems[lex]
        if not self.declines(lex):
            return stem
        return stem + (self.plural if plural else "") + self.case[case]

    def adjective(self, lex: int, plural: bool) -> str:
        stem = self.stems[lex]
        agree = plural and self.adjective_agreement and self.declines(lex)
        return stem + self.plural if agree else stem

    def verb(self, lex: int, participle: bool = False) -> str:
        stem = self.stems[lex]
        return stem + self.participle if participle and self.declines(lex) else stem

    def paradigm_of(self, lex: int, stem: str, declines: bool) -> set[str]:
        """Every (case-folded) form that lexeme `lex` takes if its stem is `stem`."""
        kind = self.world.lexemes[lex].kind
        forms = {stem}
        if declines and kind == "noun":
            for plural in (False, True):
                number = self.plural if plural else ""
                forms |= {stem + number + self.case[c] for c in CASES}
        elif declines and kind == "adj" and self.adjective_agreement:
            forms.add(stem + self.plural)
        elif declines and kind == "verb" and self.passive:
            forms.add(stem + self.participle)
        return {f.casefold() for f in forms}

    def types(self) -> set[str]:
        """The language's word-type inventory (case-folded), punctuation excluded."""
        out = {f.casefold() for f in self.function.values()}
        for lex, stem in enumerate(self.stems):
            out |= self.paradigm_of(lex, stem, self.declines(lex))
        return out

    def citation(self, lex: int) -> str:
        """The dictionary form as it appears inside a sentence (German nouns capitalized)."""
        stem = self.stems[lex]
        noun_caps = self.profile["capitalization"] == "nouns"
        if noun_caps and self.world.lexemes[lex].kind == "noun":
            return stem[:1].upper() + stem[1:]
        return stem


def build_lexicon(
    lang: str,
    profile: dict,
    world: World,
    rng: random.Random,
    english: Lexicon | None,
    reference: set[str] | None = None,
) -> Lexicon:
    """Give every concept of `world` a word in language `lang` (see the module docstring).

    `english` is None for English itself. `reference` is the set of (case-folded) English word
    types that `anchor_share` is a share of; by default every form English can produce.
    """
    ph = profile["phonology"]
    phon = Phonology(
        ph["onsets"],
        ph["vowels"],
        ph["codas"],
        ph["tones"],
        ph["max_syllables"],
        profile["script"],
        rng,
    )
    lexicon = Lexicon(lang, profile, world, phon)
    builder = _Builder(lexicon, rng, english, reference)
    builder.build()
    return lexicon


class _Builder:
    def __init__(
        self,
        lexicon: Lexicon,
        rng: random.Random,
        english: Lexicon | None,
        reference: set[str] | None,
    ) -> None:
        self.lx, self.rng, self.english = lexicon, rng, english
        self.taken: set[str] = set()
        self.english_types = english.types() if english else set()
        self.reference = self.english_types if reference is None else reference
        profile = lexicon.profile
        self.rewrites = [(re.compile(p), r) for p, r in profile["cognate_rewrites"]]
        self.overrides = dict(profile["function_words"])

    def build(self) -> None:
        lx, world = self.lx, self.lx.world
        keys = function_keys(lx.profile)
        for key in keys:  # fixed forms first: everything generated avoids them
            fixed = self.overrides.get(key, self.overrides.get(base_key(key)))
            if fixed is not None:
                lx.function[key] = fixed
                self.taken.add(fixed.casefold())
        if self.english is not None:
            self._plan_anchors([k for k in keys if k not in lx.function])
        for lex in sorted(lx.anchored):
            lx.stems[lex] = self.english.stems[lex]
            self.taken |= lx.paradigm_of(lex, lx.stems[lex], lx.declines(lex))
        for key in keys:
            if key in lx.anchored_function:
                lx.function[key] = self.english.function[base_key(key)]
                self.taken.add(lx.function[key].casefold())
        for lex, lexeme in enumerate(world.lexemes):
            if lex in lx.anchored:
                continue
            if lexeme.kind == "name":
                lx.stems[lex] = self._name(lex)
            elif lexeme.kind == "number":
                lx.stems[lex] = self._number(lex)
            else:
                lx.stems[lex] = self._content(lex)
        for key in keys:
            if key not in lx.function:
                lx.function[key] = self._native(None, 1)

    # --- anchors ---------------------------------------------------------------------------
    def _plan_anchors(self, free_function_keys: list[str]) -> None:
        """Choose anchors, by priority group, until the shared English types reach the target."""
        lx, world, en = self.lx, self.lx.world, self.english
        reference = self.reference
        target = round(lx.profile["anchor_share"] * len(reference))
        shared = {f.casefold() for f in lx.function.values()} & reference
        groups: dict[str, list] = {"number": [], "name": [], "content": [], "function": []}
        for lex, lexeme in enumerate(world.lexemes):
            group = lexeme.kind if lexeme.kind in ("number", "name") else "content"
            groups[group].append(lex)
        bases = sorted({base_key(k) for k in free_function_keys if base_key(k) in en.function})
        groups["function"] = bases
        for name in lx.profile["anchor_priority"]:
            candidates = groups[name]
            self.rng.shuffle(candidates)
            for item in candidates:
                if len(shared) >= target:
                    return
                if name == "function":
                    new = ({en.function[item].casefold()} & reference) - shared
                else:
                    new = lx.paradigm_of(item, en.stems[item], lx.phon.script == "latin")
                    new = (new & reference) - shared
                # Names and numbers unseen in the reference still go with their group, so
                # that a language shares all its names or none; unseen content words do not.
                if (new or name != "content") and len(shared) + len(new) <= target:
                    shared |= new
                    if name == "function":
                        lx.anchored_function |= {
                            k for k in free_function_keys if base_key(k) == item
                        }
                    else:
                        lx.anchored.add(item)

    # --- non-anchors -----------------------------------------------------------------------
    def _free(self, lex: int | None, stem: str) -> bool:
        forms = self.lx.paradigm_of(lex, stem, True) if lex is not None else {stem.casefold()}
        return not (forms & self.taken or forms & self.english_types)

    def _claim(self, lex: int | None, stem: str) -> str:
        forms = self.lx.paradigm_of(lex, stem, True) if lex is not None else {stem.casefold()}
        self.taken |= forms
        return stem

    def _native(self, lex: int | None, syllables: int) -> str:
        phon = self.lx.phon
        for attempt in range(_MAX_TRIES):
            stem = phon.render(phon.word(self.rng, syllables + attempt // 40))
            if self._free(lex, stem):
                return self._claim(lex, stem)
        raise ValueError(
            f"toyworld spec key 'profiles.{self.lx.lang}.phonology': too few distinct words; "
            "add onsets, vowels or codas, or raise max_syllables"
        )

    def _length(self, lex: int) -> int:
        """Frequent words are short (Zipf's law of abbreviation)."""
        lexeme = self.lx.world.lexemes[lex]
        quantile = lexeme.rank / lexeme.group_size
        return 1 + (quantile >= 0.15) + (quantile >= 0.6 and self.rng.random() < 0.5)

    def _content(self, lex: int) -> str:
        if self.english is not None and self.rng.random() < self.lx.profile["cognate_share"]:
            stem = self.lx.phon.adapt(self.english.stems[lex], self.rewrites)
            if stem and self._free(lex, stem):
                return self._claim(lex, stem)
        return self._native(lex, self._length(lex))

    def _number(self, lex: int) -> str:
        value, digits = self.lx.world.lexemes[lex].value, self.lx.profile["digits"]
        if self.english is None:
            return self._claim(lex, str(value))
        if digits:
            stem = str(value).translate(str.maketrans("0123456789", digits))
            if self._free(lex, stem):
                return self._claim(lex, stem)
        return self._native(lex, 1 + (value >= 100))

    def _name(self, lex: int) -> str:
        lexeme = self.lx.world.lexemes[lex]
        if self.english is None:
            if lexeme.acronym:
                for _ in range(_MAX_TRIES):
                    stem = "".join(self.rng.choices(_ACRONYM_LETTERS, k=self.rng.randint(2, 4)))
                    if self._free(lex, stem):
                        return self._claim(lex, stem)
            return self._native(lex, 1 + (self.rng.random() < 0.7))
        # Names are adapted from English (transliterated), lengthened until unique.
        stem = self.lx.phon.adapt(self.english.stems[lex], self.rewrites)
        phon = self.lx.phon
        for _ in range(_MAX_TRIES):
            if stem and self._free(lex, stem):
                return self._claim(lex, stem)
            stem += phon.render((phon.syllable(self.rng),))
        return self._native(lex, 3)
