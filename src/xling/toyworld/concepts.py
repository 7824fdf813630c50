"""The meaning space shared by every toy language: concepts, entities and their relations.

Nothing here has a surface form; `lexicon.py` gives each concept a word in each language. Every
concept belongs to a topic (domains weight topics differently) and has a frequency rank (Zipfian
sampling; frequent concepts also get shorter words).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

# Semantic categories of common nouns; the first noun made for each is its hypernym ("animal").
CATEGORIES = ("person", "animal", "food", "artifact", "place", "institution")
ENTITY_TYPES = ("PER", "LOC", "ORG")
# Which argument classes each verb frame may take (categories and entity types).
_AGENTS = ("person", "animal", "PER", "ORG")
_MOVERS = ("person", "animal", "PER")
_SPEAKERS = ("person", "PER", "ORG")
_PATIENTS = ("person", "animal", "food", "artifact", "place", "institution", "PER", "ORG", "LOC")
# The kind noun an entity of each type has ("a city", "a company", "a teacher").
_ENTITY_KIND = {"PER": "person", "LOC": "place", "ORG": "institution"}
FIRST_YEAR = 1960  # years run FIRST_YEAR, FIRST_YEAR + 1, ... (lexicon.years of them)


@dataclass(frozen=True, slots=True)
class Lexeme:
    """One concept that every language names with one word.

    kind: noun, verb, adj, adv (time adverbs), number, or name (a part of an entity name).
    rank: frequency rank in its sampling group (0 = most frequent); frequent words are shorter.
    group_size: size of that group, so that rank / group_size is a frequency quantile.
    """

    key: str
    kind: str
    topic: int = -1
    rank: int = 0
    group_size: int = 1
    category: str = ""
    value: int = 0
    acronym: bool = False


@dataclass(frozen=True, slots=True)
class Verb:
    lexeme: int
    frame: str  # transitive | intransitive | speech
    subjects: tuple[str, ...]
    objects: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Entity:
    """A named entity: its type, the name lexemes it is written with, and fixed facts."""

    type: str
    parts: tuple[int, ...]
    kind: int  # noun lexeme: what it is (a teacher, a city, a company)
    home: int  # index of a LOC entity it is from or in; -1 for none
    topic: int
    rank: int


@dataclass
class World:
    """The concept inventory: lexemes (index = id) and the relations between them."""

    lexemes: list[Lexeme] = field(default_factory=list)
    nouns: dict[str, list[int]] = field(default_factory=dict)  # category -> non-hypernym nouns
    hypernym: dict[str, int] = field(default_factory=dict)  # category -> its hypernym noun
    verbs: list[Verb] = field(default_factory=list)
    adjectives: list[int] = field(default_factory=list)
    antonym: dict[int, int] = field(default_factory=dict)
    adjective_categories: dict[int, tuple[str, ...]] = field(default_factory=dict)
    adverbs: list[int] = field(default_factory=list)
    cardinals: list[int] = field(default_factory=list)
    years: list[int] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    topics: int = 1
    # Distributional meaning (empty when lexicon.senses.strength is 0): a unit vector per content
    # lexeme and per entity, and one per scene; see `add_senses`.
    sense: dict[int, tuple[float, ...]] = field(default_factory=dict)
    entity_sense: list[tuple[float, ...]] = field(default_factory=list)
    scenes: list[tuple[float, ...]] = field(default_factory=list)

    def add(self, lexeme: Lexeme) -> int:
        self.lexemes.append(lexeme)
        return len(self.lexemes) - 1

    def category_of(self, noun: int) -> str:
        return self.lexemes[noun].category

    def content_lexemes(self) -> list[int]:
        """Nouns, verbs, adjectives and adverbs: the words a bilingual dictionary lists."""
        kinds = {"noun", "verb", "adj", "adv"}
        return [i for i, lex in enumerate(self.lexemes) if lex.kind in kinds]


def _ranked(rng: random.Random, n: int) -> list[int]:
    """A random frequency rank for each of n items (a permutation of 0..n-1)."""
    ranks = list(range(n))
    rng.shuffle(ranks)
    return ranks


def build_world(lexicon: dict, rng: random.Random) -> World:
    """Make the concept inventory from the spec's `lexicon` section (sizes) and a seeded rng."""
    world = World(topics=lexicon["topics"])

    def topic() -> int:
        return rng.randrange(world.topics)

    n = lexicon["nouns_per_category"]
    for cat in CATEGORIES:
        world.hypernym[cat] = world.add(Lexeme(f"noun.{cat}", "noun", category=cat, group_size=1))
        ranks = _ranked(rng, n)
        world.nouns[cat] = [
            world.add(Lexeme(f"noun.{cat}.{i}", "noun", topic(), ranks[i], n, cat))
            for i in range(n)
        ]

    n_verbs = lexicon["verbs"]
    n_speech, n_intransitive = max(1, n_verbs // 12), max(1, n_verbs // 3)
    ranks = _ranked(rng, n_verbs)
    for i in range(n_verbs):
        lex = world.add(Lexeme(f"verb.{i}", "verb", topic(), ranks[i], n_verbs))
        if i < n_speech:
            verb = Verb(lex, "speech", _subset(rng, _SPEAKERS, 1, 3))
        elif i < n_speech + n_intransitive:
            verb = Verb(lex, "intransitive", _subset(rng, _MOVERS, 1, 3))
        else:
            verb = Verb(
                lex, "transitive", _subset(rng, _AGENTS, 1, 3), _subset(rng, _PATIENTS, 1, 4)
            )
        world.verbs.append(verb)

    n_pairs = lexicon["adjective_pairs"]
    ranks = _ranked(rng, 2 * n_pairs)
    for i in range(n_pairs):
        cats = _subset(rng, CATEGORIES, 1, 3)
        t = topic()
        a, b = (
            world.add(Lexeme(f"adj.{i}.{side}", "adj", t, ranks[2 * i + k], 2 * n_pairs))
            for k, side in enumerate("ab")
        )
        world.adjectives += [a, b]
        world.antonym[a], world.antonym[b] = b, a
        world.adjective_categories[a] = world.adjective_categories[b] = cats

    n_adv = lexicon["time_adverbs"]
    ranks = _ranked(rng, n_adv)
    world.adverbs = [
        world.add(Lexeme(f"adv.{i}", "adv", -1, ranks[i], n_adv)) for i in range(n_adv)
    ]
    world.cardinals = [
        world.add(Lexeme(f"num.{v}", "number", value=v)) for v in range(2, 2 + lexicon["cardinals"])
    ]
    world.years = [
        world.add(Lexeme(f"year.{v}", "number", value=v))
        for v in range(FIRST_YEAR, FIRST_YEAR + lexicon["years"])
    ]
    _add_entities(world, lexicon, rng)
    if lexicon["senses"]["strength"] > 0:
        add_senses(world, lexicon["senses"]["dims"], lexicon["senses"]["scenes"], rng)
    return world


def _unit(rng: random.Random, dims: int) -> tuple[float, ...]:
    v = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return tuple(x / norm for x in v)


def add_senses(world: World, dims: int, scenes: int, rng: random.Random) -> None:
    """Give every content word and entity a random unit vector and draw `scenes` scene vectors.

    A sentence is about one scene, and words are drawn with weight exp(strength * word . scene)
    on top of their Zipf and topic weights (meanings.py). The pointwise mutual information of two
    words then grows with the dot product of their vectors, a low-rank structure shared by every
    language: each word gets a distributional profile of its own, as words have in real text
    (topics alone leave the words of one category and topic interchangeable but for frequency).
    A category's hypernym ("animal") gets the zero vector: a general word fits every scene.
    """
    hypernyms = set(world.hypernym.values())
    for i in world.content_lexemes():
        world.sense[i] = tuple([0.0] * dims) if i in hypernyms else _unit(rng, dims)
    world.entity_sense = [_unit(rng, dims) for _ in world.entities]
    world.scenes = [_unit(rng, dims) for _ in range(scenes)]


def _subset(rng: random.Random, pool: tuple[str, ...], low: int, high: int) -> tuple[str, ...]:
    """A random subset of `pool` of size low..high, in pool order (so it is deterministic)."""
    chosen = set(rng.sample(pool, rng.randint(low, min(high, len(pool)))))
    return tuple(p for p in pool if p in chosen)


def _names(world: World, role: str, n: int, rng: random.Random, acronyms: int = 0) -> list[int]:
    ranks = _ranked(rng, n)
    return [
        world.add(
            Lexeme(f"name.{role}.{i}", "name", rank=ranks[i], group_size=n, acronym=i < acronyms)
        )
        for i in range(n)
    ]


def _add_entities(world: World, lexicon: dict, rng: random.Random) -> None:
    firsts = _names(world, "first", lexicon["first_names"], rng)
    lasts = _names(world, "last", lexicon["last_names"], rng)
    n_loc, n_org, n_per = lexicon["locations"], lexicon["organizations"], lexicon["persons"]
    places = _names(world, "place", n_loc, rng)
    # Shared second words of multi-word names ("Port ...", "... Group").
    place_prefixes = _names(world, "place_prefix", max(2, n_loc // 10), rng)
    orgs = _names(world, "org", n_org, rng, acronyms=n_org // 3)
    org_suffixes = _names(world, "org_suffix", max(2, n_org // 8), rng)

    def kind(entity_type: str) -> int:
        return rng.choice(world.nouns[_ENTITY_KIND[entity_type]])

    ranks = _ranked(rng, n_loc)
    for i, part in enumerate(places):
        parts = (rng.choice(place_prefixes), part) if rng.random() < 0.25 else (part,)
        home = rng.randrange(i) if i and rng.random() < 0.5 else -1
        world.entities.append(
            Entity("LOC", parts, kind("LOC"), home, rng.randrange(world.topics), ranks[i])
        )
    ranks = _ranked(rng, n_org)
    for i, part in enumerate(orgs):
        acronym = world.lexemes[part].acronym
        parts = (part, rng.choice(org_suffixes)) if not acronym and rng.random() < 0.5 else (part,)
        world.entities.append(
            Entity(
                "ORG",
                parts,
                kind("ORG"),
                rng.randrange(n_loc),
                rng.randrange(world.topics),
                ranks[i],
            )
        )
    pairs = rng.sample([(f, la) for f in firsts for la in lasts], n_per)
    ranks = _ranked(rng, n_per)
    for i, parts in enumerate(pairs):
        world.entities.append(
            Entity(
                "PER",
                parts,
                kind("PER"),
                rng.randrange(n_loc),
                rng.randrange(world.topics),
                ranks[i],
            )
        )
