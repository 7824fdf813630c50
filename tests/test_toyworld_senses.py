"""Distributional meaning in the toy world: word and scene vectors, documents of one scene."""

import copy
import itertools
import random
import statistics

import pytest

from xling.toyworld import TINY_SPEC, build, generate
from xling.toyworld.api import _documents
from xling.toyworld.meanings import MeaningSampler

SENSES = {"dims": 4, "scenes": 32, "strength": 10.0, "document_sentences": 5}


def _spec(**senses):
    spec = copy.deepcopy(TINY_SPEC)
    spec["languages"] = ["en", "fr"]
    spec["profiles"] = {lang: spec["profiles"][lang] for lang in spec["languages"]}
    spec["lexicon"]["senses"] = {**SENSES, **senses}
    return spec


@pytest.fixture(scope="module")
def toy():
    return build(_spec())


def _content_words(world, clause):
    """The noun, verb and adjective lexemes of a clause (entities and pronouns left out)."""
    out = [world.verbs[clause.verb].lexeme] if clause.verb >= 0 else []
    for arg in (clause.agent, clause.patient, clause.location, clause.predicate):
        if arg is not None and arg.kind == "noun":
            out += [arg.ref, *arg.adjectives]
    return out


def _mean_sense_dot_of_cooccurring_words(world, sampler, n=1500):
    """Mean dot product of the sense vectors of two content words of one sentence."""
    rng = random.Random(7)
    dots = []
    for _ in range(n):
        sentence = sampler.sentence(rng)
        words = _content_words(world, sentence.main)
        if sentence.second is not None:
            words += _content_words(world, sentence.second)
        hypernyms = set(world.hypernym.values())
        words = [w for w in words if w not in hypernyms]
        for a, b in itertools.combinations(words, 2):
            if a != b:
                dots.append(sum(x * y for x, y in zip(world.sense[a], world.sense[b], strict=True)))
    return statistics.mean(dots)


def test_every_content_word_and_entity_has_a_unit_vector_and_hypernyms_are_neutral(toy):
    world = toy.world
    assert set(world.sense) == set(world.content_lexemes())
    assert len(world.entity_sense) == len(world.entities)
    assert len(world.scenes) == SENSES["scenes"]
    hypernyms = set(world.hypernym.values())
    for lexeme, vector in world.sense.items():
        norm = sum(x * x for x in vector)
        assert len(vector) == SENSES["dims"]
        assert norm == 0.0 if lexeme in hypernyms else norm == pytest.approx(1.0)


def test_words_of_one_sentence_have_similar_senses(toy):
    """The scene ties a sentence's words together: their vectors point the same way on average,
    and not at all when the same world's sampler ignores the scenes (strength 0)."""
    domain = toy.spec["domains"]["wiki"]
    lexicon = toy.spec["lexicon"]
    with_scenes = _mean_sense_dot_of_cooccurring_words(toy.world, toy.samplers["wiki"])
    blind = MeaningSampler(toy.world, domain, lexicon["zipf_exponent"], lexicon["topic_boost"])
    without = _mean_sense_dot_of_cooccurring_words(toy.world, blind)
    assert with_scenes > 0.2
    assert abs(without) < 0.05


def test_strength_zero_builds_no_vectors():
    world = build(_spec(strength=0.0)).world
    assert world.sense == {} and world.entity_sense == [] and world.scenes == []


def _document_contexts(sampler, n, length, seed):
    """The context `_documents` gives each of n sentences."""
    contexts = []
    original = sampler.sentence
    sampler.sentence = lambda rng, topic=None: contexts.append(topic) or original(rng, topic)
    try:
        list(_documents(sampler, random.Random(seed), n, length))
    finally:
        del sampler.sentence
    return contexts


def test_documents_share_one_context(toy):
    contexts = _document_contexts(toy.samplers["wiki"], 12, 5, seed=1)
    assert len(contexts) == 12
    assert contexts[0:5] == [contexts[0]] * 5 and contexts[5:10] == [contexts[5]] * 5
    assert contexts[10:] == [contexts[10]] * 2
    assert len({contexts[0], contexts[5], contexts[10]}) > 1  # 192 contexts: new draws


def test_one_sentence_documents_draw_a_context_each(toy):
    assert len(set(_document_contexts(toy.samplers["cc"], 40, 1, seed=2))) > 30


def test_generation_with_senses_is_deterministic(tmp_path):
    spec = _spec()
    first, second = tmp_path / "a", tmp_path / "b"
    paths = generate(spec, first)
    generate(spec, second)
    for rel in paths:
        assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel
