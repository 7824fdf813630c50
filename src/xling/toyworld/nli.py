"""Natural language inference over toy meanings: a judge that labels a premise-hypothesis pair
from the meanings alone, and edits that turn a premise into a hypothesis of a wanted label.

Semantics (the SNLI convention: premise and hypothesis describe the same event):
* a positive hypothesis is a *contradiction* if some argument conflicts with the premise (another
  entity or noun of the same kind, an antonym adjective, another place or time), else *neutral*
  if it says something the premise does not (a hyponym, an added adjective, place or time),
  else *entailment* (the same or less: dropped modifiers, a hypernym);
* a negated hypothesis contradicts the premise exactly when its positive version is entailed, and
  is neutral otherwise (the premise says nothing about other events);
* "X is in L" is entailed when X takes part in the event (agent or patient) and the event
  happened in L, contradicts it when the event happened elsewhere, and is neutral when X does not
  take part;
* a negated premise "X did not do p" reverses the direction (downward monotonicity): a negated
  hypothesis at least as specific as p is entailed ("... did not see the big dog in L"), a
  positive one at least as specific as p is a contradiction, and anything less specific or about
  something else is neutral ("... did not see the dog" says nothing about small dogs).

Edits are chosen so that word overlap alone cannot tell the labels apart: one changed word can be
any label (hypernym, co-hyponym or antonym, hyponym), a negation can be a contradiction or neutral,
and added or dropped words can be any label (negated premises reverse their effect).
"""

from __future__ import annotations

import random
from dataclasses import replace

from .concepts import World
from .meanings import Arg, Clause, MeaningSampler

LABELS = ("entailment", "neutral", "contradiction")
_ENTAIL, _UNKNOWN, _CONFLICT = 0, 1, 2


def _compare_args(world: World, p: Arg, h: Arg) -> int:
    """How hypothesis argument h relates to premise argument p (same slot, same event)."""
    if p.kind != h.kind:
        return _UNKNOWN
    if p.kind in ("entity", "pronoun"):
        if p.ref == h.ref:
            return _ENTAIL
        same_type = p.kind == "pronoun" or world.entities[p.ref].type == world.entities[h.ref].type
        return _CONFLICT if same_type else _UNKNOWN
    verdict = _ENTAIL
    p_cat, h_cat = world.category_of(p.ref), world.category_of(h.ref)
    p_hyper, h_hyper = world.hypernym[p_cat] == p.ref, world.hypernym[h_cat] == h.ref
    if p.ref != h.ref:
        if p_cat != h_cat or not (p_hyper or h_hyper):
            return _CONFLICT  # another thing altogether, or a co-hyponym
        if p_hyper:
            verdict = _UNKNOWN  # the hypothesis is more specific (a hyponym)
    if p.plural != h.plural or (h.count >= 0 and h.count != p.count):
        return _CONFLICT if (p.plural != h.plural or p.count >= 0) else _UNKNOWN
    for adj in h.adjectives:
        if world.antonym[adj] in p.adjectives:
            return _CONFLICT
        if adj not in p.adjectives:
            verdict = _UNKNOWN
    return verdict


def _compare_slot(world: World, p: Arg | None, h: Arg | None) -> int:
    if h is None:
        return _ENTAIL
    if p is None:
        return _UNKNOWN
    return _compare_args(world, p, h)


def _is_locative(c: Clause) -> bool:
    return c.verb < 0 and c.location is not None and c.predicate is None and c.pred_adj < 0


def _positive(world: World, premise: Clause, hyp: Clause) -> int:
    """The verdict on `hyp` given `premise`, both read as positive statements of one event."""
    if _is_locative(hyp):
        takes_part = any(
            arg is not None and _compare_args(world, arg, hyp.agent) == _ENTAIL
            for arg in (premise.agent, premise.patient)
        )
        if premise.location is None or not takes_part:
            return _UNKNOWN
        return _compare_args(world, premise.location, hyp.location)
    if hyp.verb != premise.verb or hyp.complement != premise.complement or hyp.verb < 0:
        return _UNKNOWN
    verdicts = [
        _compare_args(world, premise.agent, hyp.agent),
        _compare_slot(world, premise.patient, hyp.patient),
        _compare_slot(world, premise.location, hyp.location),
    ]
    if hyp.time >= 0:
        verdicts.append(
            _UNKNOWN if premise.time < 0 else _ENTAIL if premise.time == hyp.time else _CONFLICT
        )
    return max(verdicts)


def judge(world: World, premise: Clause, hyp: Clause) -> str:
    """The gold label of (premise, hypothesis) from their meanings (see the module docstring)."""
    if premise.negated:
        # "X did not do p": a hypothesis as specific as p is denied (or, negated, entailed).
        plain_hyp, plain_premise = replace(hyp, negated=False), replace(premise, negated=False)
        specific = _positive(world, plain_hyp, plain_premise) == _ENTAIL
        if not specific:
            return "neutral"
        return "entailment" if hyp.negated else "contradiction"
    positive = _positive(world, premise, hyp)
    if hyp.negated:
        return "contradiction" if positive == _ENTAIL else "neutral"
    return LABELS[positive] if positive != _CONFLICT else "contradiction"


class HypothesisMaker:
    """Premises and hypotheses for the NLI data sets; every label comes from `judge`."""

    def __init__(self, world: World, sampler: MeaningSampler) -> None:
        self.world, self.sampler = world, sampler

    def premise(self, rng: random.Random, negation_rate: float = 0.3) -> Clause:
        """An event with something to drop, generalize or contradict; negated at the given rate."""
        s = self.sampler
        topic = s.topic(rng)
        frame = "transitive" if rng.random() < 0.7 else "intransitive"
        clause = s.event(rng, topic, frame, negation=False)
        # Exactly one of place and time: one to drop, one that can be added.
        if clause.location is None and clause.time < 0:
            clause = replace(clause, location=s.location(rng, topic))
        elif clause.location is not None and clause.time >= 0:
            clause = (
                replace(clause, time=-1) if rng.random() < 0.5 else replace(clause, location=None)
            )
        if clause.agent.kind == "pronoun":
            clause = replace(
                clause, agent=s.arg(rng, self.world.verbs[clause.verb].subjects, topic)
            )
        if rng.random() < 0.35:  # sometimes a general word, so that a hyponym can be neutral
            slot = "patient" if clause.patient is not None and rng.random() < 0.5 else "agent"
            arg = getattr(clause, slot)
            if arg.kind == "noun":
                general = self.world.hypernym[self.world.category_of(arg.ref)]
                clause = replace(clause, **{slot: replace(arg, ref=general, adjectives=())})
        return replace(clause, negated=rng.random() < negation_rate)

    def hypothesis(self, rng: random.Random, premise: Clause, label: str) -> Clause:
        """A hypothesis that `judge` labels `label`.

        One core edit decides the label; up to two edits that keep it follow (drops and
        hypernyms; under a negated premise additions and hyponyms), so that each label shows
        many patterns of added and missing words. `judge` has the last word.
        """
        if premise.negated:
            cores = {
                "entailment": _NEG_ENTAILING,
                "neutral": _NEG_NEUTRAL,
                "contradiction": _NEG_CONTRADICTING,
            }
            extras = (_add, _hyponym)  # more specific keeps these labels under negation
        else:
            cores = {"entailment": _ENTAILING, "neutral": _NEUTRAL, "contradiction": _CONTRADICTING}
            extras = (_drop, _hypernym)
        for _ in range(50):
            hyp = cores[label][rng.randrange(len(cores[label]))](self, rng, premise)
            if hyp is None:
                continue
            for _ in range((0, 0, 1, 2)[rng.randrange(4)]):
                if hyp.verb >= 0:
                    hyp = extras[rng.randrange(2)](self, rng, hyp) or hyp
            if hyp != premise and judge(self.world, premise, hyp) == label:
                return hyp
        # Always available (the premise has a place or a time, not both): a hypothesis about
        # someone else is neutral, the opposite polarity contradicts, and dropping the place or
        # time (positive premise) or adding the other one (negated premise) is entailed.
        if label == "neutral":
            return replace(premise, negated=True, agent=self._other(rng, premise.agent))
        if label == "contradiction":
            return replace(premise, negated=not premise.negated)
        if premise.negated:
            return _add(self, rng, premise)
        return replace(premise, time=-1, location=None)

    # --- argument helpers ------------------------------------------------------------------
    def _other(self, rng: random.Random, arg: Arg) -> Arg:
        """Another referent of the same kind (a conflicting argument)."""
        world = self.world
        if arg.kind == "entity":
            entity_type = world.entities[arg.ref].type
            pool = [
                i for i, e in enumerate(world.entities) if e.type == entity_type and i != arg.ref
            ]
            return Arg("entity", pool[rng.randrange(len(pool))])
        if arg.kind == "pronoun":
            return Arg("pronoun", (arg.ref + 1 + rng.randrange(3)) % 4)
        nouns = world.nouns[world.category_of(arg.ref)]
        pool = [n for n in nouns if n != arg.ref]
        return replace(arg, ref=pool[rng.randrange(len(pool))])

    def _slots(self, clause: Clause) -> list[str]:
        return [s for s in ("agent", "patient", "location") if getattr(clause, s) is not None]


def _drop(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    options = []
    if p.location is not None:
        options.append(lambda c: replace(c, location=None))
    if p.time >= 0:
        options.append(lambda c: replace(c, time=-1))
    if p.patient is not None:
        options.append(lambda c: replace(c, patient=None))
    for slot in ("agent", "patient", "location"):
        arg = getattr(p, slot)
        if arg is not None and arg.kind == "noun" and (arg.adjectives or arg.count >= 0):
            options.append(lambda c, s=slot: _bare(c, s))
    if not options:
        return None
    rng.shuffle(options)
    hyp = p
    for option in options[: rng.randint(1, len(options))]:
        hyp = option(hyp)
    return hyp


def _bare(clause: Clause, slot: str) -> Clause:
    """Drop the adjectives and numeral of one argument (if a previous drop kept it)."""
    arg = getattr(clause, slot)
    if arg is None:
        return clause
    return replace(clause, **{slot: replace(arg, adjectives=(), count=-1)})


def _hypernym(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    slots = [s for s in m._slots(p) if getattr(p, s).kind == "noun"]
    if not slots:
        return None
    slot = slots[rng.randrange(len(slots))]
    arg = getattr(p, slot)
    return replace(p, **{slot: replace(arg, ref=m.world.hypernym[m.world.category_of(arg.ref)])})


def _locative(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    """ "X is in L" about the agent or the patient of an event that happened in L."""
    slots = [s for s in ("agent", "patient") if getattr(p, s) is not None]
    arg = getattr(p, slots[rng.randrange(len(slots))])
    if p.location is None or arg.kind == "pronoun":
        return None
    return Clause(
        -1, replace(arg, adjectives=()) if arg.kind == "noun" else arg, location=p.location
    )


def _negate(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    base = _drop(m, rng, p) if rng.random() < 0.4 else None
    return replace(base or p, negated=True)


def _swap(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    slots = m._slots(p)
    slot = slots[rng.randrange(len(slots))]
    return replace(p, **{slot: m._other(rng, getattr(p, slot))})


def _antonym(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    slots = [s for s in m._slots(p) if getattr(p, s).kind == "noun" and getattr(p, s).adjectives]
    if not slots:
        return None
    slot = slots[rng.randrange(len(slots))]
    arg = getattr(p, slot)
    k = rng.randrange(len(arg.adjectives))
    adjectives = list(arg.adjectives)
    adjectives[k] = m.world.antonym[adjectives[k]]
    return replace(p, **{slot: replace(arg, adjectives=tuple(adjectives))})


def _elsewhere(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    if p.location is None:
        return None
    other = m._other(rng, p.location)
    if rng.random() < 0.5:
        hyp = _locative(m, rng, p)
        return replace(hyp, location=other) if hyp else None
    return replace(p, location=other)


def _add(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    s = m.sampler
    topic = s.context(m.world.lexemes[m.world.verbs[p.verb].lexeme].topic % m.world.topics, rng)
    options = []
    if p.time < 0:
        options.append(lambda: replace(p, time=s.time(rng, topic)))
    if p.location is None:
        options.append(lambda: replace(p, location=s.location(rng, topic)))
    for slot in ("agent", "patient"):
        arg = getattr(p, slot)
        if arg is not None and arg.kind == "noun" and not arg.adjectives:
            table = s.adjectives[m.world.category_of(arg.ref)]
            if table is not None:
                options.append(
                    lambda a=arg, t=table, sl=slot: replace(
                        p, **{sl: replace(a, adjectives=(t.draw(rng, topic),))}
                    )
                )
    return options[rng.randrange(len(options))]() if options else None


def _hyponym(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    world = m.world
    slots = [
        s
        for s in m._slots(p)
        if getattr(p, s).kind == "noun"
        and world.hypernym[world.category_of(getattr(p, s).ref)] == getattr(p, s).ref
    ]
    if not slots:
        return None
    slot = slots[rng.randrange(len(slots))]
    arg = getattr(p, slot)
    nouns = world.nouns[world.category_of(arg.ref)]
    return replace(p, **{slot: replace(arg, ref=nouns[rng.randrange(len(nouns))])})


def _negated_other(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    hyp = _swap(m, rng, p)
    return replace(hyp, negated=True) if hyp else None


def _outsider_locative(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    """Where someone who is not in the event is: the premise does not say."""
    hyp = _locative(m, rng, p)
    return replace(hyp, agent=m._other(rng, hyp.agent)) if hyp else None


def _negated_add(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    """ "X did not see the dog yesterday": the premise does not say when."""
    hyp = _add(m, rng, p)
    return replace(hyp, negated=True) if hyp else None


def _retime(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    if p.time < 0:
        return None
    pool = m.world.years if m.world.lexemes[p.time].kind == "number" else m.world.adverbs
    other = pool[rng.randrange(len(pool))]
    return replace(p, time=other) if other != p.time else None


def _affirm(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    """The positive version of a negated premise, maybe more specific (a contradiction)."""
    hyp = replace(p, negated=False)
    return (_add(m, rng, hyp) or hyp) if rng.random() < 0.3 else hyp


def _affirm_general(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    """The positive version, less specific: "X did not see the big dog" / "X saw a dog"."""
    general = _drop(m, rng, p) or _hypernym(m, rng, p)
    return replace(general, negated=False) if general else None


def _affirm_other(m: HypothesisMaker, rng: random.Random, p: Clause) -> Clause | None:
    """The positive version about someone else: "X did not see Y" / "Z saw Y"."""
    return replace(_swap(m, rng, p), negated=False)


_ENTAILING = (_drop, _drop, _hypernym, _hypernym, _locative)
_CONTRADICTING = (_negate, _swap, _swap, _antonym, _elsewhere, _retime)
_NEUTRAL = (_add, _add, _hyponym, _hyponym, _negated_other, _negated_add, _outsider_locative)
# Under a negated premise, specific hypotheses are entailed and general ones neutral.
_NEG_ENTAILING = (_add, _add, _hyponym)
_NEG_CONTRADICTING = (_affirm,)
_NEG_NEUTRAL = (_drop, _hypernym, _swap, _affirm_general, _affirm_general, _affirm_other)
