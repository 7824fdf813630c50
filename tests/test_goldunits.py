"""Gold word alignments carried onto the text pipeline's tokens (xling.analysis.goldunits), and
occurrence vectors of units of several tokens."""

import numpy as np
import pytest

from tests.test_contextual import CORPUS, _model, _states, _tokenizer
from xling.analysis.contextual import word_occurrence_vectors
from xling.analysis.goldunits import gold_units, word_spans
from xling.toyworld import TINY_SPEC, generate


def test_identical_tokenization_gives_one_token_per_word():
    words = ["The", "dog", "sleeps", "."]
    assert word_spans(words, words) == [(0, 1), (1, 2), (2, 3), (3, 4)]


def test_a_split_word_spans_its_tokens_and_a_rewritten_character_still_maps():
    # jieba without the toy world's dictionary cuts toy Chinese into characters; "。" becomes "."
    words = ["黠", "瑰谻", "鮪臁鎴", "。"]
    tokens = ["黠", "瑰", "谻", "鮪", "臁", "鎴", "."]
    assert word_spans(words, tokens) == [(0, 1), (1, 3), (3, 6), (6, 7)]


def test_joined_words_share_one_span():
    # Moses keeps French "ca." whole where the toy world has two words
    assert word_spans(["bint", "ca", "."], ["bint", "ca."]) == [(0, 1), (1, 2), (1, 2)]


def test_crossing_spans_merge_and_a_vanished_word_gets_none():
    assert word_spans(["ab", "cd", "e"], ["a", "bc", "d", "e"]) == [(0, 3), (0, 3), (3, 4)]
    assert word_spans(["a", "@", "b"], ["a", "b"]) == [(0, 1), None, (1, 2)]


def test_gold_links_become_unit_links():
    source_words, source_tokens = [["the", "dog", "ca", "."]], [["the", "dog", "ca."]]
    target_words, target_tokens = [["瑰谻", "狗", "。"]], [["瑰", "谻", "狗", "."]]
    links = [[(0, 0), (1, 1), (2, 2), (3, 2)]]
    source_units, target_units, unit_links = gold_units(
        source_words, source_tokens, target_words, target_tokens, links
    )
    assert source_units == [[(0, 1), (1, 2), (2, 3)]]
    assert target_units == [[(0, 2), (2, 3), (3, 4)]]
    assert unit_links == [[(0, 0), (1, 1), (2, 2)]]  # "ca" and "." share a unit: one link


def test_gold_units_reject_mismatched_inputs_and_links_outside_the_sentence():
    with pytest.raises(ValueError, match="differ in length"):
        gold_units([["a"]], [["a"]], [["b"]], [["b"]], [])
    with pytest.raises(ValueError, match="alignment line 1: link 0-3"):
        gold_units([["a"]], [["a"]], [["b"]], [["b"]], [[(0, 3)]])


def test_a_units_vector_is_the_mean_of_all_its_tokens_subwords():
    model, tokenizer = _model(), _tokenizer()
    sentence = CORPUS[0].split()  # three tokens; the unit is the last two
    units = [[(1, 3)]]
    found, layers = word_occurrence_vectors(
        model, tokenizer, [sentence], "en", [(0, 0)], units=units
    )
    assert found.all()
    ids = tokenizer.encode_tokenized_words(sentence, "en")
    first = len(ids[0])
    states = _states(model, [i for word in ids for i in word])
    for layer, hidden in enumerate(states):
        expected = hidden[1 + first : -1].mean(axis=0)  # every subword after the first token
        assert np.allclose(layers[layer][0], expected, atol=1e-12)


def test_overlapping_units_are_refused():
    model, tokenizer = _model(), _tokenizer()
    with pytest.raises(ValueError, match="disjoint token spans"):
        word_occurrence_vectors(
            model, tokenizer, [CORPUS[0].split()], "en", [(0, 0)], units=[[(0, 2), (1, 3)]]
        )


@pytest.mark.parametrize("lang", ["fr", "zh"])
def test_the_toy_worlds_gold_alignments_reach_the_pipeline_tokens(tmp_path, lang):
    """On the toy world's own files: nearly every gold link survives as a link between units,
    and Chinese words of several characters become units of several tokens."""
    from xling.contracts import layout
    from xling.contracts.alignment import read_alignments
    from xling.preprocess import TextPipeline

    generate(TINY_SPEC, tmp_path)

    def lines(path):
        return [line.split() for line in (tmp_path / path).read_text("utf-8").splitlines()]

    segmenter = "jieba" if lang == "zh" else "moses"
    pipeline = {code: TextPipeline(code, seg) for code, seg in (("en", "moses"), (lang, segmenter))}

    def tokens(code):
        raw = (tmp_path / layout.parallel(code)).read_text("utf-8").splitlines()
        return [pipeline[code].tokenize(line) for line in raw]

    links = read_alignments(tmp_path / layout.alignment("en", lang))
    _, target_units, unit_links = gold_units(
        lines(layout.parallel_words("en")), tokens("en"),
        lines(layout.parallel_words(lang)), tokens(lang), links,
    )  # fmt: skip
    assert sum(map(len, unit_links)) >= 0.95 * sum(map(len, links))
    widest = max(end - start for units in target_units for start, end in units)
    assert (widest > 1) == (lang == "zh")
