"""Contextual maps of Wu 5.1.2: occurrences, one-to-one links, Procrustes per layer."""

import numpy as np
import pytest
import torch

from tests.test_contextual import CORPUS, _model, _states, _tokenizer
from xling.analysis.contextual import contextual_word_vectors, word_occurrence_vectors
from xling.analysis.mappings import contextual_mappings, one_to_one_links


def test_one_to_one_links_drop_words_with_several_links():
    links = [[(0, 0), (1, 1), (1, 2), (3, 3)], [], [(2, 0)]]
    source, target = one_to_one_links(links)
    assert source == [(0, 0), (0, 3), (2, 2)]
    assert target == [(0, 0), (0, 3), (2, 0)]


def test_an_occurrence_vector_is_the_mean_of_its_subwords_in_that_sentence():
    model, tokenizer = _model(), _tokenizer()
    sentences = [line.split() for line in CORPUS]
    found, layers = word_occurrence_vectors(model, tokenizer, sentences, "en", [(0, 0), (4, 0)])
    assert found.all()
    ids = tokenizer.encode_tokenized_words(sentences[0], "en")
    first_word = len(ids[0])
    states = _states(model, [i for word in ids for i in word])
    for layer, hidden in enumerate(states):
        expected = hidden[1 : 1 + first_word].mean(axis=0)  # after the leading </s>
        assert np.allclose(layers[layer][0], expected, atol=1e-12)
    # a word that occurs once: its occurrence vector is its averaged contextual vector
    words, averaged = contextual_word_vectors(model, tokenizer, [sentences[4]], "en")
    assert words == ["c"]
    assert np.allclose(layers[2][1], averaged[2][0], atol=1e-12)


def test_maps_between_a_model_and_itself_leave_every_aligned_state_in_place():
    torch.manual_seed(1)
    model, tokenizer = _model(), _tokenizer()
    sentences = [line.split() for line in CORPUS * 3]
    links = [[(i, i) for i in range(len(words))] for words in sentences]
    maps, pairs = contextual_mappings(
        (model, tokenizer, "en"), (model, tokenizer, "en"), sentences, sentences, links,
        min_pairs=5,
    )  # fmt: skip
    assert pairs > 5
    assert maps.shape == (model.config.layers + 1, model.config.dim, model.config.dim)
    occurrences, _ = one_to_one_links(links)
    _, layers = word_occurrence_vectors(model, tokenizer, sentences, "en", occurrences)
    for mapping, states in zip(maps, layers, strict=True):
        assert np.allclose(mapping @ mapping.T, np.eye(model.config.dim), atol=1e-10)
        # the states span fewer than dim directions: the map is the identity on their span
        assert np.allclose(states @ mapping, states, atol=1e-8)


def test_too_few_aligned_pairs_are_reported():
    model, tokenizer = _model(), _tokenizer()
    sentences = [["abc"]]
    with pytest.raises(ValueError, match="only 1 one-to-one aligned word pairs"):
        contextual_mappings(
            (model, tokenizer, "en"), (model, tokenizer, "en"), sentences, sentences, [[(0, 0)]]
        )


def test_maps_learned_on_units_of_several_tokens_use_those_units():
    model, tokenizer = _model(), _tokenizer()
    sentences = [line.split() for line in CORPUS * 3]
    units = [[(0, len(words))] for words in sentences]  # each sentence one unit
    links = [[(0, 0)] for _ in sentences]
    maps, pairs = contextual_mappings(
        (model, tokenizer, "en"), (model, tokenizer, "en"), sentences, sentences, links,
        source_units=units, target_units=units, min_pairs=5,
    )  # fmt: skip
    assert pairs == len(sentences)
    _, layers = word_occurrence_vectors(
        model, tokenizer, sentences, "en", [(s, 0) for s in range(len(sentences))], units=units
    )
    for mapping, states in zip(maps, layers, strict=True):
        assert np.allclose(states @ mapping, states, atol=1e-8)
