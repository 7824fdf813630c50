"""Meanings (language-independent sentence structures) and the sampler that draws them.

A sentence is one or two clauses. A clause is an event (a verb with an agent, maybe a patient,
location and time, maybe negated, maybe with a reported clause) or a copular statement ("X is a
big city in Y", "the dog is small", "X is in Y"). Arguments are common nouns (with determiners,
numerals and adjectives), named entities (PER, LOC, ORG) or pronouns. Concepts are drawn with
Zipfian frequencies, boosted for the sentence's topic; domains differ in topic weights and in the
mix of sentence shapes.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from dataclasses import dataclass

from .concepts import CATEGORIES, World
from .lexicon import PRONOUNS

SHAPES = ("transitive", "intransitive", "copular", "coordination", "subordinate", "speech")


@dataclass(frozen=True, slots=True)
class Arg:
    """An argument: kind is noun | entity | pronoun; ref a noun lexeme, entity index or pronoun."""

    kind: str
    ref: int
    plural: bool = False
    definite: bool = True
    adjectives: tuple[int, ...] = ()
    count: int = -1  # a cardinal lexeme ("3 dogs"), -1 for none


@dataclass(frozen=True, slots=True)
class Clause:
    """An event (verb >= 0) or a copular statement (verb == -1: `predicate` or `pred_adj`)."""

    verb: int  # index into World.verbs, -1 for a copular clause
    agent: Arg
    patient: Arg | None = None
    location: Arg | None = None  # "in <location>"
    time: int = -1  # an adverb or year lexeme
    negated: bool = False
    complement: Clause | None = None  # what a speech verb reports
    predicate: Arg | None = None  # copular: "is a teacher"
    pred_adj: int = -1  # copular: "is big"
    origin: Arg | None = None  # copular: "from <LOC>"


@dataclass(frozen=True, slots=True)
class Sentence:
    main: Clause
    link: str = ""  # "", "and", "because"
    second: Clause | None = None
    exclamation: bool = False


def entities_of(sentence: Sentence) -> list[int]:
    """Entity indices of a sentence in meaning order (for checking NER spans)."""
    out: list[int] = []
    clauses = [sentence.main, sentence.second]
    while clauses:
        clause = clauses.pop(0)
        if clause is None:
            continue
        for arg in (clause.agent, clause.patient, clause.location, clause.predicate, clause.origin):
            if arg is not None and arg.kind == "entity":
                out.append(arg.ref)
        clauses.insert(0, clause.complement)
    return out


class _Table:
    """Zipf-weighted choice among items, with a boost for items of a given topic and, where the
    world has senses, a weight exp(strength * item . scene) for each scene.

    A *context* is one (topic, scene) combination, numbered topic * scenes + scene; the cumulative
    weights of every context are computed once, so a draw is one bisection.
    """

    def __init__(
        self,
        items: list[int],
        ranks: list[int],
        topics: list[int],
        senses: list[tuple[float, ...]],
        world: World,
        exponent: float,
        boost: float,
        strength: float,
    ) -> None:
        self.items = items
        self.cum: list[list[float]] = []
        scenes = world.scenes or [()]
        for t in range(world.topics):
            base = [
                (boost if topic == t else 1.0) / (rank + 1) ** exponent
                for rank, topic in zip(ranks, topics, strict=True)
            ]
            for scene in scenes:
                weights = base
                if scene:  # a world without senses has one context per topic, as before senses
                    weights = [
                        w * math.exp(strength * sum(a * b for a, b in zip(v, scene, strict=True)))
                        for w, v in zip(base, senses, strict=True)
                    ]
                self.cum.append(list(itertools.accumulate(weights)))

    def draw(self, rng: random.Random, context: int) -> int:
        cum = self.cum[context]
        return self.items[bisect.bisect_right(cum, rng.random() * cum[-1])]


class MeaningSampler:
    """Draws sentences for one domain.

    Args:
        world: the concept inventory.
        domain: the spec's `domains.<name>` section (topic weights, shape weights, rates).
        exponent, boost: Zipf exponent and topic boost from the spec's `lexicon` section.
        strength: how strongly a sentence's scene selects its words (`lexicon.senses.strength`).

    Every ``topic`` argument below is a context (`_Table`): a topic and, with senses, a scene.
    """

    def __init__(
        self, world: World, domain: dict, exponent: float, boost: float, strength: float = 0.0
    ) -> None:
        self.world, self.d = world, domain
        self.topic_cum = list(itertools.accumulate(domain["topic_weights"]))
        self.shapes = [s for s in SHAPES if domain["shapes"][s] > 0]
        self.shape_weights = [domain["shapes"][s] for s in self.shapes]
        lex, entities = world.lexemes, world.entities

        def zipf(items: list[int], ranks: list[int], topics: list[int], senses: list) -> _Table:
            return _Table(items, ranks, topics, senses, world, exponent, boost, strength)

        def table(ids: list[int]) -> _Table:
            senses = [world.sense.get(i, ()) for i in ids]
            return zipf(ids, [lex[i].rank for i in ids], [lex[i].topic for i in ids], senses)

        self.nouns = {c: table(world.nouns[c]) for c in CATEGORIES}
        self.verbs = {}
        for frame in ("transitive", "intransitive", "speech"):
            ids = [i for i, v in enumerate(world.verbs) if v.frame == frame]
            lexemes = [world.verbs[i].lexeme for i in ids]
            self.verbs[frame] = zipf(
                ids,
                [lex[v].rank for v in lexemes],
                [lex[v].topic for v in lexemes],
                [world.sense.get(v, ()) for v in lexemes],
            )
        self.adjectives: dict[str, _Table | None] = {}
        for c in CATEGORIES:
            items = [a for a in world.adjectives if c in world.adjective_categories[a]]
            self.adjectives[c] = table(items) if items else None
        self.adverbs = table(world.adverbs)
        self.entities = {}
        for entity_type in ("PER", "LOC", "ORG"):
            ids = [i for i, e in enumerate(entities) if e.type == entity_type]
            ranks, topics = [entities[i].rank for i in ids], [entities[i].topic for i in ids]
            senses = [world.entity_sense[i] for i in ids] if world.entity_sense else [()] * len(ids)
            self.entities[entity_type] = zipf(ids, ranks, topics, senses)

    # --- pieces ----------------------------------------------------------------------------
    def topic(self, rng: random.Random) -> int:
        """The context of a new sentence: a topic by the domain's weights, and a scene."""
        topic = bisect.bisect_right(self.topic_cum, rng.random() * self.topic_cum[-1])
        return self.context(topic, rng)

    def context(self, topic: int, rng: random.Random) -> int:
        """A context of the given topic, with a scene drawn uniformly where the world has them."""
        scenes = len(self.world.scenes)
        return topic * scenes + rng.randrange(scenes) if scenes else topic

    def noun_arg(self, rng: random.Random, category: str, topic: int) -> Arg:
        d = self.d
        noun = self.nouns[category].draw(rng, topic)
        adjectives: tuple[int, ...] = ()
        table = self.adjectives[category]
        if table is not None and rng.random() < d["adjective_rate"]:
            first = table.draw(rng, topic)
            adjectives = (first,)
            if rng.random() < 0.25:
                second = table.draw(rng, topic)
                if second != first and second != self.world.antonym[first]:
                    adjectives = (first, second)
        plural = rng.random() < d["plural_rate"]
        count = -1
        if plural and rng.random() < d["numeral_rate"]:
            count = self.world.cardinals[rng.randrange(len(self.world.cardinals))]
        definite = count < 0 and rng.random() < d["definite_rate"]
        return Arg("noun", noun, plural, definite, adjectives, count)

    def arg(self, rng: random.Random, classes: tuple[str, ...], topic: int) -> Arg:
        """An argument of one of `classes` (categories or entity types)."""
        entity_classes = [c for c in classes if c in ("PER", "LOC", "ORG")]
        noun_classes = [c for c in classes if c in CATEGORIES]
        if entity_classes and (not noun_classes or rng.random() < self.d["entity_rate"]):
            entity_type = entity_classes[rng.randrange(len(entity_classes))]
            return Arg("entity", self.entities[entity_type].draw(rng, topic))
        return self.noun_arg(rng, noun_classes[rng.randrange(len(noun_classes))], topic)

    def location(self, rng: random.Random, topic: int) -> Arg:
        return self.arg(rng, ("LOC", "place"), topic)

    def time(self, rng: random.Random, topic: int) -> int:
        if rng.random() < self.d["year_share"]:
            return self.world.years[rng.randrange(len(self.world.years))]
        return self.adverbs.draw(rng, topic)

    # --- clauses ---------------------------------------------------------------------------
    def event(self, rng: random.Random, topic: int, frame: str, negation: bool = True) -> Clause:
        d = self.d
        v = self.verbs[frame].draw(rng, topic)
        verb = self.world.verbs[v]
        if "person" in verb.subjects and rng.random() < d["pronoun_rate"]:
            agent = Arg("pronoun", rng.randrange(len(PRONOUNS)))
        else:
            agent = self.arg(rng, verb.subjects, topic)
        patient = self.arg(rng, verb.objects, topic) if frame == "transitive" else None
        complement = None
        if frame == "speech":
            inner = "transitive" if rng.random() < 0.6 else "intransitive"
            complement = self.event(rng, topic, inner, negation=negation)
        location = self.location(rng, topic) if rng.random() < d["location_rate"] else None
        time = self.time(rng, topic) if rng.random() < d["time_rate"] else -1
        negated = negation and rng.random() < d["negation_rate"]
        return Clause(v, agent, patient, location, time, negated, complement)

    def copular(self, rng: random.Random, topic: int) -> Clause:
        """A fact about an entity ("X is a teacher from Y") or a property of a thing."""
        if rng.random() < self.d["entity_rate"]:
            entity_type = ("PER", "LOC", "ORG")[rng.randrange(3)]
            ref = self.entities[entity_type].draw(rng, topic)
            entity = self.world.entities[ref]
            table = self.adjectives[self.world.category_of(entity.kind)]
            adjectives = (table.draw(rng, topic),) if table and rng.random() < 0.4 else ()
            predicate = Arg("noun", entity.kind, False, False, adjectives)
            origin = Arg("entity", entity.home) if entity.home >= 0 else None
            return Clause(-1, Arg("entity", ref), predicate=predicate, origin=origin)
        categories = [c for c in CATEGORIES if self.adjectives[c] is not None] or ["person"]
        category = categories[rng.randrange(len(categories))]
        subject = self.noun_arg(rng, category, topic)
        subject = Arg("noun", subject.ref, subject.plural, True)
        pred_adj = self.adjectives[category].draw(rng, topic) if self.adjectives[category] else -1
        if pred_adj < 0:
            return Clause(-1, subject, location=self.location(rng, topic))
        return Clause(-1, subject, pred_adj=pred_adj)

    def clause(self, rng: random.Random, topic: int) -> Clause:
        """One clause of a coordination or subordination: an event or a copular statement."""
        simple = ("transitive", "intransitive", "copular")
        weights = [self.d["shapes"][s] for s in simple]
        shape = rng.choices(simple, weights)[0] if sum(weights) > 0 else "transitive"
        return self.copular(rng, topic) if shape == "copular" else self.event(rng, topic, shape)

    def sentence(self, rng: random.Random, topic: int | None = None) -> Sentence:
        """A sentence about `topic` (a context, see `_Table`), or about a new one drawn here."""
        if topic is None:
            topic = self.topic(rng)
        shape = rng.choices(self.shapes, self.shape_weights)[0]
        exclamation = rng.random() < self.d["exclamation_rate"]
        if shape in ("transitive", "intransitive"):
            return Sentence(self.event(rng, topic, shape), exclamation=exclamation)
        if shape == "speech":
            return Sentence(self.event(rng, topic, "speech"), exclamation=exclamation)
        if shape == "copular":
            return Sentence(self.copular(rng, topic), exclamation=exclamation)
        link = "and" if shape == "coordination" else "because"
        return Sentence(self.clause(rng, topic), link, self.clause(rng, topic), exclamation)

    def sentence_with_entity(self, rng: random.Random) -> Sentence:
        """A sentence naming at least one entity (WikiAnn sentences all contain one)."""
        while True:
            sentence = self.sentence(rng)
            if entities_of(sentence):
                return sentence
