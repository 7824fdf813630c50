"""Realization: word order, morphology, scripts and gold annotation follow the profiles."""

import collections
import copy
import random
import re

import pytest

from xling.toyworld import TINY_SPEC, build
from xling.toyworld.meanings import Arg, Clause, Sentence, entities_of
from xling.toyworld.phonology import to_cyrillic


@pytest.fixture(scope="module")
def toy():
    return build(TINY_SPEC)


def _with(**profile_changes):
    """A world whose `fr` profile has the given knobs (other languages as in TINY_SPEC)."""
    spec = copy.deepcopy(TINY_SPEC)
    spec["languages"] = ["en", "fr"]
    spec["profiles"]["fr"].update(profile_changes)
    return build(spec)


def _event(toy, with_adjective=True, time=False, negated=False):
    """'PER <verb>ed the <adj> <noun> in LOC [time]' with a verb that allows these roles."""
    world = toy.world
    v = next(
        i
        for i, verb in enumerate(world.verbs)
        if verb.frame == "transitive"
        and "PER" in verb.subjects
        and any(c in world.nouns for c in verb.objects)
    )
    category = next(c for c in world.verbs[v].objects if c in world.nouns)
    adjectives = [a for a in world.adjectives if category in world.adjective_categories[a]]
    noun = Arg(
        "noun",
        world.nouns[category][0],
        plural=False,
        definite=True,
        adjectives=(adjectives[0],) if with_adjective and adjectives else (),
    )
    per = next(i for i, e in enumerate(world.entities) if e.type == "PER")
    loc = next(i for i, e in enumerate(world.entities) if e.type == "LOC")
    return Clause(
        v,
        Arg("entity", per),
        noun,
        Arg("entity", loc),
        time=world.adverbs[0] if time else -1,
        negated=negated,
    )


def _roles(tokens):
    """Position of the first token with each alignment-key suffix (verb, agent name, ...)."""
    out = {}
    for i, t in enumerate(tokens):
        out.setdefault(t.key, i)
    return out


def _position(tokens, fragment):
    return next(i for i, t in enumerate(tokens) if fragment in t.key)


def test_svo_sov_v2_word_orders():
    for order, expected in (("SVO", "SVO"), ("SOV", "SOV")):
        toy = _with(word_order=order, scramble=0.0, modifier_fronting=0.0)
        tokens = toy.realize("fr", Sentence(_event(toy)), random.Random(0))
        s, v, o = (_position(tokens, k) for k in (".agent/name0", "/verb", ".patient/head"))
        got = "".join(k for _, k in sorted([(s, "S"), (v, "V"), (o, "O")]))
        assert got == expected
    toy = _with(word_order="V2", modifier_fronting=1.0, scramble=0.0)
    tokens = toy.realize("fr", Sentence(_event(toy, time=True)), random.Random(0))
    assert tokens[0].key.endswith(".time/head") and tokens[1].key.endswith("/verb")
    assert _position(tokens, ".agent/name0") == 2  # the subject follows the verb
    # V2 subordinate clauses are verb-final.
    clause = _event(toy)
    tokens = toy.realize("fr", Sentence(clause, "because", clause), random.Random(0))
    second = [t for t in tokens if t.key.startswith("c1")]
    assert second[-1].key == "c1/verb"


def test_adjective_and_adposition_positions(toy):
    for position in ("before", "after"):
        t = _with(adjective_position=position, adposition="postposition")
        tokens = t.realize("fr", Sentence(_event(t)), random.Random(0))
        adj, noun = _position(tokens, "patient/adj0"), _position(tokens, "patient/head")
        assert (adj < noun) == (position == "before")
        case, loc = _position(tokens, "location/case"), _position(tokens, "location/name0")
        assert case > loc


def test_chinese_particles_classifiers_and_preverbal_modifiers(toy):
    clause = _event(toy, time=True)
    patient = Arg(
        "noun", clause.patient.ref, True, False, clause.patient.adjectives, toy.world.cardinals[0]
    )
    tokens = toy.realize(
        "zh", Sentence(Clause(**{**_fields(clause), "patient": patient})), random.Random(1)
    )
    keys = [t.key for t in tokens]
    adj = keys.index("c0.patient/adj0")
    assert keys[adj + 1] == "c0.patient/adjpart0" and tokens[adj + 1].upos == "PART"
    num = keys.index("c0.patient/num")
    assert keys[num + 1] == "c0.patient/clf" and tokens[num + 1].deprel == "clf"
    verb = keys.index("c0/verb")
    assert keys.index("c0.location/name0") < verb and keys.index("c0.time/head") < verb
    assert all(not t.space_after for t in tokens)


def _fields(clause):
    return {f: getattr(clause, f) for f in clause.__dataclass_fields__}


def test_morphology_plural_case_and_negation(toy):
    clause = _event(toy, negated=True)
    patient = Arg("noun", clause.patient.ref, plural=True)
    sentence = Sentence(Clause(**{**_fields(clause), "patient": patient}))
    en = toy.realize("en", sentence, random.Random(0))
    noun = en[_position(en, "patient/head")]
    assert noun.form.endswith("s") and noun.feats == "Number=Plur"
    assert [t.form for t in en if t.key == "c0/neg"] == ["does", "not"]
    ru = toy.realize("ru", sentence, random.Random(0))
    noun = ru[_position(ru, "patient/head")]
    lexicon = toy.lexicons["ru"]
    if patient.ref not in lexicon.anchored:  # object case after the plural suffix
        assert noun.form == lexicon.stems[patient.ref] + to_cyrillic("i") + to_cyrillic("u")
    fr = toy.realize("fr", sentence, random.Random(0))
    neg = [i for i, t in enumerate(fr) if t.key == "c0/neg"]
    verb = _position(fr, "/verb")
    assert len(neg) == 2 and neg[0] < verb < neg[1]  # ne ... pas


def test_copula_only_where_the_profile_has_one(toy):
    world = toy.world
    per = next(i for i, e in enumerate(world.entities) if e.type == "PER")
    clause = Clause(
        -1, Arg("entity", per), predicate=Arg("noun", world.entities[per].kind, False, False)
    )
    en = toy.realize("en", Sentence(clause), random.Random(0))
    ru = toy.realize("ru", Sentence(clause), random.Random(0))
    assert [t.deprel for t in en].count("cop") == 1 and "cop" not in [t.deprel for t in ru]
    root = next(t for t in ru if t.deprel == "root")
    assert root.upos == "NOUN"


def test_scripts_of_native_words_and_identity_of_anchors(toy):
    english = toy.lexicons["en"]
    scripts = {
        "ru": r"[а-яё]+",
        "zh": r"[\u4e00-\u9fff]+",
        "de": r"[a-zäöüß]+",
        "fr": r"[a-zéèêàç]+",
    }
    for lang, pattern in scripts.items():
        lexicon = toy.lexicons[lang]
        assert lexicon.anchored, lang
        for lex, lexeme in enumerate(toy.world.lexemes):
            stem = lexicon.stems[lex]
            if lex in lexicon.anchored:
                assert stem == english.stems[lex]
            elif lexeme.kind != "number":
                assert re.fullmatch(pattern, stem), (lang, lexeme.key, stem)
            else:
                assert stem != english.stems[lex]
        for key, form in lexicon.function.items():
            if key not in lexicon.anchored_function:
                assert re.fullmatch(pattern, form), (lang, key, form)
    rng = random.Random(3)
    allowed = re.compile(r"[\u4e00-\u9fff]+|[0-9]+|[。，！]|[A-Za-z]+")
    for _ in range(100):
        for t in toy.realize("zh", toy.samplers["wiki"].sentence(rng), rng):
            assert allowed.fullmatch(t.form), t.form


def test_german_capitalizes_nouns(toy):
    rng = random.Random(4)
    for _ in range(50):
        for t in toy.realize("de", toy.samplers["cc"].sentence(rng), rng):
            if t.upos == "NOUN":
                assert t.form[0].isupper(), t.form


@pytest.mark.parametrize("lang", TINY_SPEC["languages"])
def test_ner_spans_are_the_meanings_entities(toy, lang):
    rng = random.Random(5)
    lexicon, world = toy.lexicons[lang], toy.world
    for _ in range(150):
        sentence = toy.samplers["wiki"].sentence_with_entity(rng)
        tokens = toy.realize(lang, sentence, rng)
        spans, current = [], None
        for t in tokens:
            if t.ner.startswith("B-"):
                current = [t.ner[2:], [t.form]]
                spans.append(current)
            elif t.ner.startswith("I-"):
                current[1].append(t.form)
            else:
                current = None
        expected = []
        for e in entities_of(sentence):
            entity = world.entities[e]
            forms = [lexicon.stems[p] for p in entity.parts]
            expected.append([entity.type, forms])
        found = sorted((kind, [f.casefold() for f in forms]) for kind, forms in spans)
        wanted = sorted((kind, [f.casefold() for f in forms]) for kind, forms in expected)
        assert found == wanted


CONTENT = re.compile(r"/(head|verb|adj\d|name\d|num)$")


def test_every_language_realizes_every_content_node_once(toy):
    rng = random.Random(6)
    for _ in range(200):
        sentence = toy.samplers["cc"].sentence(rng)
        keys = {
            lang: collections.Counter(
                t.key for t in toy.realize(lang, sentence, rng) if CONTENT.search(t.key)
            )
            for lang in TINY_SPEC["languages"]
        }
        assert all(k == keys["en"] for k in keys.values()), keys
        assert all(n == 1 for n in keys["en"].values())


def test_domains_differ_in_shapes(toy):
    rng = random.Random(7)
    stats = {}
    for domain in ("wiki", "cc"):
        sentences = [toy.samplers[domain].sentence(rng) for _ in range(400)]
        stats[domain] = (
            sum(s.main.agent.kind == "pronoun" for s in sentences),
            sum(s.exclamation for s in sentences),
            sum(bool(entities_of(s)) for s in sentences),
        )
    assert stats["cc"][0] > 3 * stats["wiki"][0] and stats["wiki"][1] == 0 < stats["cc"][1]
    assert stats["wiki"][2] > 1.5 * stats["cc"][2]
