"""Word vectors of an encoder (Wu §5.1.1): contextual averages per layer, single-subword
embedding rows."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xling.analysis.contextual import contextual_word_vectors, single_subword_embeddings
from xling.model import EncoderConfig, MLMEncoder
from xling.preprocess import TextPipeline
from xling.vocab import SPECIAL_TOKENS, LanguageSetup, SubwordTokenizer

EOS = SubwordTokenizer.eos_id
EN_PIECES = ["abc", "ab@@", "x", "c", "a@@", "(", ")"]
RU_PIECES = ["да", "д@@", "а"]


def _tokenizer(prefixed: bool = False) -> SubwordTokenizer:
    en, ru = ("en:", "ru:") if prefixed else ("", "")
    return SubwordTokenizer(
        scheme="per_language_prefixed" if prefixed else "joint",
        vocab=[*SPECIAL_TOKENS, *(en + p for p in EN_PIECES), *(ru + p for p in RU_PIECES)],
        languages={
            "en": LanguageSetup(TextPipeline("en", "moses"), "joint", en),
            "ru": LanguageSetup(TextPipeline("ru", "moses"), "joint", ru),
        },
        codes={"joint": [("a", "b"), ("ab", "c</w>"), ("д", "а</w>")]},
        language_token_ranges={"en": [(5, 12)], "ru": [(12, 15)]},
    )


def _model(max_positions: int = 32, **sharing) -> MLMEncoder:
    """A tiny encoder in float64, so that results can be compared to 1e-12."""
    torch.manual_seed(0)
    config = EncoderConfig(
        vocab_size=15,
        languages=["en", "ru"],
        dim=8,
        layers=2,
        heads=2,
        ffn_dim=16,
        max_positions=max_positions,
        **sharing,
    )
    return MLMEncoder(config).double().eval()


def _states(model: MLMEncoder, ids: list[int]) -> list[np.ndarray]:
    """Hidden states L0..Ln of one sentence framed ``</s> ids </s>``, alone (no padding)."""
    with torch.no_grad():
        hidden = model(torch.tensor([[EOS, *ids, EOS]]), "en", output_hidden_states=True)
    return [h[0].numpy() for h in hidden.hidden_states]


# A corpus over the tiny vocabulary: sentences of different lengths, so batches have padding.
CORPUS = [
    "abc x abx",
    "x",
    "ac abc ( abc )",
    "abx abx x c",
    "c",
    "abc abc abc ac x abx",
    "( x )",
    "ac",
]


def test_an_occurrence_is_averaged_over_its_subwords_then_over_occurrences(monkeypatch):
    model, tokenizer = _model(), _tokenizer()
    i = tokenizer.token_to_id
    # `w` is cut into 2 pieces in one sentence and 3 in the other (as a sampling segmenter
    # would): the mean of the two occurrence means differs from the mean over all 5 pieces.
    segmented = iter(
        [
            [[i("ab@@"), i("x")], [i("c")]],
            [[i("x")], [i("a@@"), i("ab@@"), i("abc")]],
        ]
    )
    monkeypatch.setattr(tokenizer, "encode_tokenized_words", lambda words, lang: next(segmented))
    vocabulary, layers = contextual_word_vectors(model, tokenizer, [["w", "c"], ["x", "w"]], "en")
    first, second = (
        _states(model, [i("ab@@"), i("x"), i("c")]),
        _states(model, [i("x"), i("a@@"), i("ab@@"), i("abc")]),
    )
    assert vocabulary == ["w", "c", "x"]  # by count, then alphabetically
    assert len(layers) == model.config.layers + 1
    for layer, got in enumerate(layers):
        assert got.dtype == np.float64 and got.shape == (3, 8)
        # Positions 1.. are the pieces: position 0 and the last are the </s> frames.
        w_first, w_second = first[layer][1:3].mean(0), second[layer][2:5].mean(0)
        expected_w = (w_first + w_second) / 2
        pooled_w = np.concatenate([first[layer][1:3], second[layer][2:5]]).mean(0)
        assert np.abs(expected_w - pooled_w).max() > 1e-3  # the test tells the two apart
        np.testing.assert_allclose(got[0], expected_w, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got[1], first[layer][3], rtol=0, atol=1e-12)
        np.testing.assert_allclose(got[2], second[layer][1], rtol=0, atol=1e-12)


def test_frames_and_padding_never_enter_an_average():
    model, tokenizer = _model(), _tokenizer()
    sentences = [line.split() for line in CORPUS]
    vocabulary, layers = contextual_word_vectors(model, tokenizer, sentences, "en", batch_size=8)
    # "c" occurs alone in a sentence and with context in another: recompute both by hand.
    alone = _states(model, tokenizer.encode_tokenized("c", "en"))
    ids = tokenizer.encode_tokenized("abx abx x c", "en")
    context = _states(model, ids)
    for layer, got in enumerate(layers):
        expected = (alone[layer][1] + context[layer][len(ids)]) / 2
        np.testing.assert_allclose(got[vocabulary.index("c")], expected, rtol=0, atol=1e-12)


def test_vocabulary_is_ordered_by_frequency_and_skips_unknown_words():
    model, tokenizer = _model(), _tokenizer()
    sentences = [line.split() for line in [*CORPUS, "zq x"]]
    vocabulary, layers = contextual_word_vectors(model, tokenizer, sentences, "en")
    # counts: abc 6, x 6, abx 4, ac 3, c 2, ( 2, ) 2; `zq` is all <unk>: context only.
    assert vocabulary == ["abc", "x", "abx", "ac", "(", ")", "c"]
    assert all(layer.shape == (7, 8) for layer in layers)


def test_batch_size_does_not_change_the_vectors():
    model, tokenizer = _model(), _tokenizer()
    sentences = [line.split() for line in CORPUS]
    reference = contextual_word_vectors(model, tokenizer, sentences, "en", batch_size=64)
    for batch_size in (1, 3):
        vocabulary, layers = contextual_word_vectors(
            model, tokenizer, sentences, "en", batch_size=batch_size
        )
        assert vocabulary == reference[0]
        for got, expected in zip(layers, reference[1], strict=True):
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_words_restricts_the_averages_but_not_the_context():
    model, tokenizer = _model(), _tokenizer()
    sentences = [line.split() for line in CORPUS]
    all_words, all_layers = contextual_word_vectors(model, tokenizer, sentences, "en")
    wanted = ["c", "abx", "never-seen"]
    vocabulary, layers = contextual_word_vectors(model, tokenizer, sentences, "en", words=wanted)
    assert vocabulary == ["abx", "c"]  # a word that never occurs has no vector
    rows = [all_words.index(word) for word in vocabulary]
    for got, full in zip(layers, all_layers, strict=True):
        np.testing.assert_allclose(got, full[rows], rtol=0, atol=1e-12)


def test_long_sentences_are_cut_before_the_first_word_that_does_not_fit():
    model, tokenizer = _model(max_positions=6), _tokenizer()  # room for 4 subwords
    # abx (2) + abc (1) + abx (2) = 5 subwords: the second abx is dropped whole.
    vocabulary, layers = contextual_word_vectors(model, tokenizer, [["abx", "abc", "abx"]], "en")
    assert vocabulary == ["abc", "abx"]
    states = _states(model, tokenizer.encode_tokenized("abx abc", "en"))
    for layer, got in enumerate(layers):
        np.testing.assert_allclose(got[1], states[layer][1:3].mean(0), rtol=0, atol=1e-12)
    # A sentence whose first word does not fit at all is skipped.
    model = _model(max_positions=3)
    vocabulary, layers = contextual_word_vectors(model, tokenizer, [["abx", "x"]], "en")
    assert vocabulary == [] and layers[0].shape == (0, 8)


def test_max_sentences_counts_sentences_with_words():
    model, tokenizer = _model(), _tokenizer()
    sentences = iter([[], ["x"], ["abc"]])  # a stream is enough
    vocabulary, _ = contextual_word_vectors(model, tokenizer, sentences, "en", max_sentences=1)
    assert vocabulary == ["x"]


def test_single_subword_embeddings_keep_whole_word_entries():
    model, tokenizer = _model(), _tokenizer()
    words, matrix = single_subword_embeddings(model, tokenizer, "en")
    assert words == ["abc", "x", "c", "(", ")"]  # no `ab@@`, `a@@`, specials or ru entries
    ids = [tokenizer.token_to_id(word) for word in words]
    expected = model.embeddings["shared"].tokens.weight[ids].detach().numpy()
    np.testing.assert_array_equal(matrix, expected)


def test_single_subword_embeddings_use_the_languages_own_matrix():
    model, tokenizer = _model(sep_embeddings=True), _tokenizer(prefixed=True)
    words, matrix = single_subword_embeddings(model, tokenizer, "ru")
    assert words == ["да", "а"]  # prefix stripped
    ids = [tokenizer.token_to_id(f"ru:{word}") for word in words]
    own = model.embeddings["ru"].tokens.weight[ids].detach().numpy()
    other = model.embeddings["en"].tokens.weight[ids].detach().numpy()
    np.testing.assert_array_equal(matrix, own)
    assert not np.allclose(matrix, other)


def test_a_model_and_tokenizer_of_different_vocabularies_are_refused():
    tokenizer = _tokenizer()
    torch.manual_seed(0)
    model = MLMEncoder(EncoderConfig(vocab_size=20, languages=["en"], dim=8, heads=2, layers=1))
    with pytest.raises(ValueError, match="20 token embeddings and the tokenizer 15 tokens"):
        single_subword_embeddings(model, tokenizer, "en")
