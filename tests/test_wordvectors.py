import numpy as np
import pytest

from xling.analysis.wordvectors import (
    corpus_sentences,
    frequent_words,
    load_word_vectors,
    save_word_vectors,
)
from xling.base.errors import InputFileError


def test_frequent_words_ranks_by_count_then_alphabet(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("b a a\n\nc b\nz z z z\n", encoding="utf-8")
    assert list(corpus_sentences(corpus, 3, seed=0)) == [["b", "a", "a"], ["c", "b"], ["z"] * 4]
    assert frequent_words(corpus, 3, limit=2, seed=0) == ["z", "a"]  # a, b: 2 each; alphabetical


def test_the_sentences_are_drawn_from_the_whole_corpus_in_its_order(tmp_path):
    corpus = tmp_path / "corpus.txt"
    lines = [f"first {i}" for i in range(500)] + [""] + [f"second {i}" for i in range(500)]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    drawn = [" ".join(words) for words in corpus_sentences(corpus, 100, seed=3)]
    assert len(drawn) == len(set(drawn)) == 100
    assert drawn == [line for line in lines if line in set(drawn)]  # corpus order
    halves = {line.split()[0] for line in drawn}
    assert halves == {"first", "second"}  # not the first 100 lines: a topic-ordered dump
    assert drawn == [" ".join(w) for w in corpus_sentences(corpus, 100, seed=3)]
    assert drawn != [" ".join(w) for w in corpus_sentences(corpus, 100, seed=4)]
    assert frequent_words(corpus, 100, 1, seed=3)[0] in halves


def test_an_empty_corpus_is_named(tmp_path):
    corpus = tmp_path / "empty.txt"
    corpus.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"empty\.txt: no word"):
        frequent_words(corpus, 10, limit=5, seed=0)


def test_word_vectors_round_trip_as_float32(tmp_path):
    layers = [np.arange(6, dtype=np.float64).reshape(2, 3) + layer for layer in range(3)]
    save_word_vectors(tmp_path / "v.npz", ["über", "b"], layers)
    words, loaded = load_word_vectors(tmp_path / "v.npz")
    assert words == ["über", "b"]
    assert loaded.shape == (3, 2, 3) and loaded.dtype == np.float32
    assert np.array_equal(loaded[2], layers[2].astype(np.float32))


def test_a_missing_dictionary_or_tatoeba_file_says_where_to_get_it(tmp_path):
    from xling.analysis.sentences import read_tatoeba
    from xling.analysis.words import dictionary_pairs

    with pytest.raises(InputFileError, match=r"en-fr\.test\.txt: missing: a MUSE") as error:
        dictionary_pairs(tmp_path / "en-fr.test.txt")
    assert "data.muse.url" in str(error.value)
    with pytest.raises(InputFileError, match="missing: one side of a Tatoeba") as error:
        read_tatoeba(tmp_path / "en-fr.fr.txt")
    assert "data.tatoeba" in str(error.value)


def test_tatoeba_sides_of_different_lengths_stop_before_any_model_loads(tmp_path):
    from xling.analysis.sentences import read_tatoeba_pair

    english, french = tmp_path / "tatoeba.en.txt", tmp_path / "tatoeba.fr.txt"
    english.write_text("a b\nc d\n")
    french.write_text("x y\nz\nw\n")
    with pytest.raises(InputFileError, match=r"tatoeba\.fr\.txt: 3 sentences against 2 in "):
        read_tatoeba_pair(english, french)
    french.write_text("x y\nz\n")
    assert read_tatoeba_pair(english, french) == (["a b", "c d"], ["x y", "z"])
    english.write_text("")
    french.write_text("")
    with pytest.raises(InputFileError, match="0 sentences against 0"):
        read_tatoeba_pair(english, french)


def _scored_words(monkeypatch, embedding_words, fasttext_words, pairs, **settings):
    """word_alignment_rows on stand-in vectors: each row's (method, source words, target words,
    test pairs) as handed to the retrieval."""
    from xling.analysis import words as module

    def vectors(words):
        return words, np.arange(2.0 * len(words)).reshape(-1, 2)

    monkeypatch.setattr(
        module, "single_subword_embeddings", lambda model, tok, lang: vectors(embedding_words[lang])
    )
    monkeypatch.setattr(module, "read_vec", lambda path, limit: vectors(fasttext_words[path]))
    monkeypatch.setattr(module, "load_word_vectors", lambda path: ([], np.zeros((0, 0, 2))))
    monkeypatch.setattr(module, "dictionary_pairs", lambda path: pairs)
    scored = []

    def record(source, target, _train, test, *args, map_spaces, **kw):
        (source_words, source_vectors), (target_words, _) = source, target
        scored.append((list(source_words), list(target_words), list(test), source_vectors))
        return {"p_at_1": 0.0, "hits": {}}

    monkeypatch.setattr(module, "translation_p_at_1", record)
    settings = {"vocabulary": 10, "csls_k": 10, "normalize_rounds": 5, **settings}
    rows = module.word_alignment_rows(
        ((None, None, "en"), (None, None, "fr")), ("c_en", "c_fr"), ("en", "fr"), ("tr", "te"),
        settings,
    )  # fmt: skip
    return {row["method"]: found for row, found in zip(rows, scored, strict=True)}


def test_figure_4a_scores_embeddings_and_fasttext_on_the_same_words(monkeypatch):
    scored = _scored_words(
        monkeypatch,
        {"en": ["cat", "dog", "house", "ing"], "fr": ["chat", "chien", "tion"]},
        {"en": ["the", "cat", "dog", "house"], "fr": ["le", "chat", "maison"]},
        [("cat", "chat")],
    )
    for method in ("embeddings", "fasttext_subset"):
        assert scored[method][:2] == (["cat", "dog", "house"], ["chat"])


def test_words_and_dictionaries_are_lowercased_as_muse_reads_them(monkeypatch):
    english = ["Paris", "the", "paris", "The"]  # frequency order: "Paris" is the common form
    kwargs = {"embedding_words": {"en": english, "fr": ["Paris"]}, "pairs": [("Paris", "Paris")]}
    kwargs["fasttext_words"] = {"en": english, "fr": ["Paris"]}
    source_words, target_words, test, vectors = _scored_words(monkeypatch, **kwargs)["fasttext"]
    assert (source_words, target_words, test) == (["paris", "the"], ["paris"], [("paris", "paris")])
    assert np.array_equal(vectors, [[0.0, 1.0], [2.0, 3.0]])  # the first rows of each word
    cased = _scored_words(monkeypatch, **kwargs, lowercase=False)["fasttext"]
    assert cased[0] == english and cased[2] == [("Paris", "Paris")]


def test_same_words_keeps_the_vectors_of_the_given_words_in_their_own_order():
    from xling.analysis.words import same_words

    matrix = np.arange(8, dtype=np.float32).reshape(4, 2)
    words, rows = same_words((["the", "cat", "sat", "mat"], matrix), ["mat", "cat", "dog"])
    assert words == ["cat", "mat"]  # fastText's order; "dog" has no vector and is left out
    assert np.array_equal(rows, matrix[[1, 3]])
    empty_words, empty = same_words((["the"], matrix[:1]), [])
    assert empty_words == [] and empty.shape == (0, 2)
