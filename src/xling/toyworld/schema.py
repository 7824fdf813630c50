"""The toy world spec: its JSON schema and the checks a schema cannot express."""

from __future__ import annotations

import re

import jsonschema

from xling.base.schemas import schema_hint
from xling.contracts.layout import TASK_SPLITS

from .concepts import CATEGORIES
from .lexicon import FUNCTION_KEY_PATTERN
from .meanings import SHAPES

LANG_PATTERN = r"^[a-z][a-z0-9]{1,7}$"
DOMAINS = ("wiki", "cc")
SPLITS = TASK_SPLITS  # the task data splits of the contracts


def _rate(description: str) -> dict:
    return {"type": "number", "minimum": 0, "maximum": 1, "description": description}


def _count(description: str, minimum: int = 1) -> dict:
    return {"type": "integer", "minimum": minimum, "description": description}


def _object(properties: dict, description: str) -> dict:
    return {
        "type": "object",
        "description": description,
        "additionalProperties": False,
        "required": list(properties),
        "properties": properties,
    }


def _enum(values: tuple[str, ...], description: str) -> dict:
    return {"enum": list(values), "description": description}


def _flag(description: str) -> dict:
    return {"type": "boolean", "description": description}


def _strings(description: str, min_items: int = 1) -> dict:
    return {
        "type": "array",
        "items": {"type": "string"},
        "minItems": min_items,
        "description": description,
    }


_SPLIT_SIZES = {s: _count(f"sentences in the {s} split") for s in SPLITS}
_NLI_SIZES = {
    s: {
        "type": "integer",
        "minimum": 3,
        "multipleOf": 3,
        "description": f"{s} pairs per language (three per premise, one for each label)",
    }
    for s in SPLITS
}

_DOMAIN = _object(
    {
        "topic_weights": {
            "type": "array",
            "items": {"type": "number", "minimum": 0},
            "minItems": 1,
            "description": "weight of each topic (lexicon.topics)",
        },
        "shapes": _object(
            {s: {"type": "number", "minimum": 0, "description": f"weight of {s}"} for s in SHAPES},
            "relative weights of the sentence shapes",
        ),
        "entity_rate": _rate("chance that a slot allowing a named entity gets one"),
        "pronoun_rate": _rate("chance that a person subject is a pronoun"),
        "adjective_rate": _rate("chance that a common noun has an adjective"),
        "plural_rate": _rate("chance that a common noun is plural"),
        "numeral_rate": _rate("chance that a plural noun has a numeral"),
        "definite_rate": _rate("chance that a common noun is definite"),
        "location_rate": _rate("chance that an event has a location"),
        "time_rate": _rate("chance that an event has a time"),
        "year_share": _rate("share of times that are years (the rest are time adverbs)"),
        "negation_rate": _rate("chance that an event is negated"),
        "exclamation_rate": _rate("chance that a sentence ends with an exclamation mark"),
    },
    "a text domain: topic distribution and sentence shapes",
)

_PROFILE = _object(
    {
        "script": _enum(("latin", "cyrillic", "han"), "writing system"),
        "separator": _enum((" ", ""), 'what separates words in raw text ("" = no spaces)'),
        "phonology": _object(
            {
                "onsets": _strings("syllable onsets, romanized; repeat one to weight it"),
                "vowels": _strings("syllable nuclei, romanized"),
                "codas": _strings('syllable codas, romanized; include "" for open syllables'),
                "tones": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 6,
                    "description": "tones per syllable (Han: each toned syllable is a character)",
                },
                "max_syllables": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 6,
                    "description": "longest word, in syllables",
                },
            },
            "the language's own syllables, from which native words are made",
        ),
        "function_words": {
            "type": "object",
            "propertyNames": {"pattern": FUNCTION_KEY_PATTERN},
            "additionalProperties": {"type": "string", "pattern": r"^\S+$"},
            "description": "fixed function words (others are generated); det keys may carry "
            "agreement suffixes (det.def.pl.obj)",
        },
        "anchor_share": _rate(
            "share of English word types (case-folded, no punctuation) that "
            "this language writes identically; must be 1 for en"
        ),
        "anchor_priority": {
            "type": "array",
            "uniqueItems": True,
            "items": {"enum": ["number", "name", "content", "function"]},
            "description": "which words become anchors first",
        },
        "cognate_share": _rate("share of non-anchor content words adapted from English"),
        "cognate_rewrites": {
            "type": "array",
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
            "description": "[regex, replacement] sound changes that adapt English loans and names",
        },
        "digits": {
            "type": "string",
            "pattern": "^(|.{10})$",
            "description": 'ten characters for the digits 0-9 of non-anchor numbers ("" = '
            "number words)",
        },
        "word_order": _enum(
            ("SVO", "SOV", "V2"), "main clause order (V2: verb-final subordinates)"
        ),
        "oblique_position": _enum(("after_verb", "before_verb"), "where place and time go"),
        "subordinate_position": _enum(("after", "before"), "where a because-clause goes"),
        "adjective_position": _enum(("before", "after"), "adjective relative to its noun"),
        "adposition": _enum(("preposition", "postposition"), "adposition relative to its noun"),
        "articles": _enum(("none", "definite", "both"), "which articles the language has"),
        "article_agreement": {
            "type": "array",
            "uniqueItems": True,
            "items": {"enum": ["number", "case"]},
            "description": "what articles agree with",
        },
        "plural_suffix": {"type": "string", "description": "noun plural suffix (romanized)"},
        "case_suffixes": _object(
            {
                c: {"type": "string", "description": f"{c} case suffix"}
                for c in ("subj", "obj", "obl")
            },
            "noun case suffixes",
        ),
        "participle_suffix": {"type": "string", "description": "passive participle suffix"},
        "adjective_agreement": _flag("adjectives take the plural suffix of plural nouns"),
        "adjective_particle": _flag("a particle follows adjectives (Chinese 的)"),
        "classifiers": _flag("numerals need a classifier (one per noun category)"),
        "copula": _flag("copular sentences have a copula (Russian has none in the present)"),
        "negation": _enum(
            ("before", "after", "both"), "negation particle position (both: ne...pas)"
        ),
        "negation_aux": _flag("negation needs an auxiliary (English does not)"),
        "capitalization": _enum(
            ("sentence", "nouns", "none"),
            "capitalize sentence starts and names; nouns: also every noun",
        ),
        "punctuation": _object(
            {
                k: {"type": "string", "minLength": 1, "description": k}
                for k in ("period", "comma", "exclamation")
            },
            "punctuation marks",
        ),
        "comma_before_coordination": _flag("a comma before 'and' between clauses"),
        "comma_before_subordinate": _flag("a comma between main and because-clause"),
        "passive_rate": _rate("chance that a transitive event is in the passive"),
        "modifier_fronting": _rate("chance that a time modifier starts the clause"),
        "scramble": _rate("chance of object-verb-subject order (SVO languages with case)"),
    },
    "a language's knobs",
)

SPEC_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "toy world spec (config key data.toyworld)",
    **_object(
        {
            "seed": {"type": "integer", "description": "same seed, same bytes"},
            "languages": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": True,
                "items": {"type": "string", "pattern": LANG_PATTERN},
                "contains": {"const": "en"},
                "description": "languages to write; en is the reference and required: a "
                "languages list replaces the preset's, so name every language the toy world "
                "should write, 'en' among them",
            },
            "sizes": _object(
                {
                    "corpus": _object(
                        {d: _count(f"{d} sentences per language") for d in DOMAINS},
                        "monolingual corpus sentences per domain",
                    ),
                    "parallel": _count("multi-way parallel sentences"),
                    "tatoeba": _count("retrieval sentence pairs per language pair"),
                    "ner": _object(
                        _SPLIT_SIZES,
                        "NER sentences per language, in each of the datasets toy, toy_wiki and "
                        "toy_cc (which has dev and test only)",
                    ),
                    "ud": _object(
                        _SPLIT_SIZES,
                        "treebank sentences per language, in each of the datasets toy, toy_wiki "
                        "and toy_cc (which has dev and test only)",
                    ),
                    "xnli": _object(_NLI_SIZES, "NLI pairs (train: English only)"),
                    "muse": _object(
                        {
                            "train": _count("source words in train"),
                            "test": _count("source words in test"),
                        },
                        "bilingual dictionary sizes (train = most frequent words)",
                    ),
                },
                "how much of each output to write",
            ),
            "lexicon": _object(
                {
                    "topics": _count("number of topics"),
                    "nouns_per_category": _count(f"nouns in each of {', '.join(CATEGORIES)}", 2),
                    "verbs": _count(
                        "verbs (1/12 speech, 1/3 intransitive, the rest transitive)", 3
                    ),
                    "adjective_pairs": _count("antonym pairs of adjectives"),
                    "time_adverbs": _count("time adverbs (yesterday, ...)"),
                    "cardinals": _count("numerals 2, 3, ..."),
                    "years": _count("years 1960, 1961, ..."),
                    "first_names": _count("first names"),
                    "last_names": _count("last names"),
                    "persons": _count("PER entities (first + last name)", 2),
                    "locations": _count("LOC entities", 2),
                    "organizations": _count("ORG entities", 2),
                    "zipf_exponent": {
                        "type": "number",
                        "minimum": 0,
                        "description": "Zipf exponent of concept frequencies",
                    },
                    "topic_boost": {
                        "type": "number",
                        "minimum": 1,
                        "description": "weight multiplier of concepts of the topic",
                    },
                    "senses": _object(
                        {
                            "dims": _count("dimensions of the word and scene vectors"),
                            "scenes": _count("scenes a sentence can be about"),
                            "strength": {
                                "type": "number",
                                "minimum": 0,
                                "description": "weight exp(strength * word . scene) of a word "
                                "in a sentence about a scene; 0: no senses, the words of one "
                                "category and topic are interchangeable but for frequency",
                            },
                            "document_sentences": _count(
                                "consecutive corpus sentences about one topic and scene (a "
                                "paragraph); 1: every sentence draws its own"
                            ),
                        },
                        "distributional meaning: word vectors and scenes (docs/toyworld.md)",
                    ),
                },
                "sizes of the meaning space",
            ),
            "domains": _object({d: _DOMAIN for d in DOMAINS}, "the two text domains"),
            "profiles": {
                "type": "object",
                "propertyNames": {"pattern": LANG_PATTERN},
                "additionalProperties": _PROFILE,
                "description": "one profile (set of knobs) per language",
            },
        },
        "Everything the toy world generator needs: seed, languages, sizes, lexicon sizes, the "
        "two domains and one profile per language. See docs/toyworld.md.",
    ),
}


def _message(error: jsonschema.ValidationError) -> str:
    """jsonschema's message and, as for the config's own errors, the key's description."""
    hint = schema_hint(error, SPEC_SCHEMA)
    return error.message + (f" ({hint})" if hint else "")


def _fail(key: str, problem: str, fix: str) -> ValueError:
    return ValueError(
        f"toyworld spec key '{key}' (config key 'data.toyworld.{key}'): {problem}; {fix}"
    )


def content_lexeme_count(lexicon: dict) -> int:
    """Nouns (with one hypernym per category), verbs, adjectives and adverbs."""
    nouns = len(CATEGORIES) * (lexicon["nouns_per_category"] + 1)
    return nouns + lexicon["verbs"] + 2 * lexicon["adjective_pairs"] + lexicon["time_adverbs"]


def validate_spec(spec: dict) -> None:
    """Raise ValueError naming the key and the fix if `spec` is invalid (schema, then semantics)."""
    errors = sorted(jsonschema.Draft202012Validator(SPEC_SCHEMA).iter_errors(spec), key=str)
    if errors:
        lines = [
            f"'{'.'.join(map(str, e.absolute_path)) or '<spec>'}': {_message(e)}" for e in errors
        ]
        raise ValueError(
            "invalid toyworld spec (config key data.toyworld):\n  " + "\n  ".join(lines)
        )
    for lang in spec["languages"]:
        if lang not in spec["profiles"]:
            raise _fail(
                f"profiles.{lang}",
                "language listed but it has no profile",
                f"add a profile for '{lang}' or remove it from 'languages'",
            )
    if "en" not in spec["profiles"]:
        raise _fail("profiles.en", "missing", "English is the reference; give it a profile")
    if spec["profiles"]["en"]["anchor_share"] != 1:
        raise _fail("profiles.en.anchor_share", "English is the reference language", "set it to 1")
    lexicon = spec["lexicon"]
    for domain in DOMAINS:
        weights = spec["domains"][domain]["topic_weights"]
        if len(weights) != lexicon["topics"] or sum(weights) <= 0:
            raise _fail(
                f"domains.{domain}.topic_weights",
                f"{len(weights)} weights for {lexicon['topics']} topics (or all zero)",
                "give one positive weight per topic (lexicon.topics)",
            )
        if sum(spec["domains"][domain]["shapes"].values()) <= 0:
            raise _fail(f"domains.{domain}.shapes", "all weights are zero", "make one positive")
    if lexicon["persons"] > lexicon["first_names"] * lexicon["last_names"]:
        raise _fail(
            "lexicon.persons",
            "more persons than first x last name combinations",
            "raise first_names or last_names, or lower persons",
        )
    muse = spec["sizes"]["muse"]
    available = content_lexeme_count(lexicon)
    if muse["train"] + muse["test"] > available:
        raise _fail(
            "sizes.muse",
            f"train + test = {muse['train'] + muse['test']} words but the "
            f"lexicon has {available} content words",
            "lower the dictionary sizes or enlarge the lexicon",
        )
    for lang, profile in spec["profiles"].items():
        _check_profile(f"profiles.{lang}", profile)


def _check_profile(key: str, p: dict) -> None:
    if p["script"] == "han":
        suffixes = [p["plural_suffix"], p["participle_suffix"], *p["case_suffixes"].values()]
        if any(suffixes):
            raise _fail(
                key,
                "Han script words take no suffixes",
                'set plural_suffix, participle_suffix and case_suffixes to ""',
            )
        if p["capitalization"] != "none":
            raise _fail(f"{key}.capitalization", "Han has no letter case", "set it to none")
    if p["scramble"] > 0 and p["word_order"] != "SVO":
        raise _fail(f"{key}.scramble", "scrambling applies to SVO languages only", "set it to 0")
    if p["digits"] and len(set(p["digits"])) != 10:
        raise _fail(f"{key}.digits", "the ten digits must be distinct", "fix the string")
    for i, (pattern, _) in enumerate(p["cognate_rewrites"]):
        try:
            re.compile(pattern)
        except re.error as err:
            raise _fail(
                f"{key}.cognate_rewrites.{i}", f"bad regex ({err})", "fix the pattern"
            ) from err
