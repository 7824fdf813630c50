"""fastText vectors: the ``.vec`` reader and training the demo's baseline."""

from __future__ import annotations

import random
import time
from collections import Counter

import numpy as np
import pytest

from xling.analysis.fasttext_training import train_fasttext
from xling.analysis.fasttext_vectors import read_vec
from xling.base.errors import DataFormatError, InputFileError


def _write_vec(path, words, matrix) -> None:
    lines = [f"{len(words)} {matrix.shape[1]}"]
    for word, row in zip(words, matrix, strict=True):
        # fastText ends every vector line with a space.
        lines.append(word + " " + " ".join(f"{v:.9g}" for v in row) + " ")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_read_vec_round_trips_and_honours_limit(tmp_path):
    words = ["the", ",", "été", "a\u00a0b", "</s>"]  # a no-break space is part of a word
    matrix = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    _write_vec(tmp_path / "w.vec", words, matrix)
    got_words, got = read_vec(tmp_path / "w.vec")
    assert got_words == words and got.dtype == np.float32
    np.testing.assert_array_equal(got, matrix)
    first_words, first = read_vec(tmp_path / "w.vec", limit=2)
    assert first_words == ["the", ","] and first.shape == (2, 3)
    np.testing.assert_array_equal(first, matrix[:2])


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("2 3 x\nthe 1 2 3\n", r"w\.vec:1: the header '2 3 x' is not `count dim`"),
        ("2 3\nthe 1 2 3\nof 1 2\n", r"w\.vec:3: 2 values instead of 3 \(each line after"),
        ("2 3\nthe 1 2 3\nof 1 two 3\n", r"w\.vec:3: 'two' is not a number"),
        ("2 3\nthe 1 2 3\n 1 2 3\n", r"w\.vec:3: an empty word"),
        ("1 2\nthe 1 nan\n", r"w\.vec:2: a value is not finite"),
    ],
)
def test_read_vec_names_the_line_of_a_malformed_file(tmp_path, content, error):
    (tmp_path / "w.vec").write_text(content, encoding="utf-8")
    with pytest.raises(DataFormatError, match=error):
        read_vec(tmp_path / "w.vec")


def test_read_vec_refuses_a_truncated_or_missing_file(tmp_path):
    (tmp_path / "w.vec").write_text("3 2\nthe 1 2\n", encoding="utf-8")
    with pytest.raises(InputFileError, match="announces 3 words but the file has 1"):
        read_vec(tmp_path / "w.vec")
    assert read_vec(tmp_path / "w.vec", limit=1)[0] == ["the"]  # the limit is within the file
    with pytest.raises(InputFileError, match=r"missing\.vec: no such file"):
        read_vec(tmp_path / "missing.vec")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """3000 lines of 12 words drawn from a Zipf-like distribution over 300 words."""
    rng = random.Random(0)
    vocabulary = [f"w{i}" for i in range(300)]
    weights = [1 / (rank + 1) for rank in range(300)]
    path = tmp_path_factory.mktemp("fasttext") / "corpus.txt"
    lines = [" ".join(rng.choices(vocabulary, weights, k=12)) for _ in range(3000)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _train(corpus, out, seed=1, **changes):
    pytest.importorskip("fasttext", reason="the fasttext package is not installed (pyproject)")
    settings = dict(dim=8, epochs=2, min_count=2, seed=seed, threads=1, max_words=50)
    return train_fasttext(corpus, out, **{**settings, **changes})


def test_train_fasttext_writes_the_most_frequent_words(corpus, tmp_path):
    start = time.perf_counter()
    assert _train(corpus, tmp_path / "ft.vec") == 50
    assert time.perf_counter() - start < 10
    assert (tmp_path / "ft.vec").read_text(encoding="utf-8").startswith("50 8\n")
    words, matrix = read_vec(tmp_path / "ft.vec")
    assert matrix.shape == (50, 8) and np.isfinite(matrix).all() and np.abs(matrix).max() > 0
    assert "</s>" not in words  # fastText's line-end token is no word
    counts = Counter(corpus.read_text(encoding="utf-8").split())
    # The 50 most frequent words (ties aside), most frequent first.
    assert [counts[word] for word in words] == sorted((counts[w] for w in words), reverse=True)
    assert min(counts[w] for w in words) >= sorted(counts.values(), reverse=True)[49]
    assert not list(tmp_path.glob(".*part"))  # written atomically


def test_one_thread_and_a_seed_give_identical_files(corpus, tmp_path):
    _train(corpus, tmp_path / "a.vec")
    _train(corpus, tmp_path / "b.vec")
    _train(corpus, tmp_path / "c.vec", seed=2)
    first = (tmp_path / "a.vec").read_bytes()
    assert first == (tmp_path / "b.vec").read_bytes()
    assert first != (tmp_path / "c.vec").read_bytes()


def test_train_fasttext_names_a_corpus_without_words(corpus, tmp_path):
    with pytest.raises(InputFileError, match=r"corpus\.txt: fastText cannot train on it"):
        _train(corpus, tmp_path / "ft.vec", min_count=10**9)
    assert not (tmp_path / "ft.vec").exists()


def test_keep_first_words_keeps_the_most_frequent_rows_exactly(tmp_path):
    from xling.analysis.fasttext_vectors import keep_first_words, write_vec

    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((5, 3)).astype(np.float32)
    source = tmp_path / "wiki.xx.vec"
    write_vec(source, ["a", "b", "c", "d", "e"], matrix)
    assert keep_first_words(source, tmp_path / "kept.vec", limit=3) == (3, [])
    words, kept = read_vec(tmp_path / "kept.vec", limit=None)
    assert words == ["a", "b", "c"]
    assert np.array_equal(kept, matrix[:3])


def test_keep_first_words_leaves_out_the_line_end_token_and_still_keeps_limit_words(tmp_path):
    from xling.analysis.fasttext_vectors import FASTTEXT_LINE_END, keep_first_words, write_vec

    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((5, 3)).astype(np.float32)
    source = tmp_path / "wiki.xx.vec"
    write_vec(source, [",", FASTTEXT_LINE_END, "the", "of", "and"], matrix)
    assert keep_first_words(source, tmp_path / "kept.vec", limit=3) == (3, [])
    words, kept = read_vec(tmp_path / "kept.vec", limit=None)
    assert words == [",", "the", "of"]
    assert np.array_equal(kept, matrix[[0, 2, 3]])


def test_published_vectors_skip_malformed_lines_as_muse_does(tmp_path):
    """MUSE skips a line of the wrong dimension; the strict reader names it instead."""
    from xling.analysis.fasttext_vectors import keep_first_words

    rows = [f"w{i} {i} 1 2" for i in range(300)]
    rows[10] = "cut word 1 2 3"  # a word split by a character taken for a separator
    lines = ["300 3", *rows]
    data = ("\n".join(lines) + "\n").encode().replace(b"w20 ", b"w\xff20 ")  # a bad byte
    (tmp_path / "wiki.xx.vec").write_bytes(data)
    with pytest.raises(DataFormatError, match=r"wiki\.xx\.vec:12: 4 values instead of 3"):
        read_vec(tmp_path / "wiki.xx.vec")
    kept, skipped = keep_first_words(tmp_path / "wiki.xx.vec", tmp_path / "kept.vec", limit=50)
    assert (kept, skipped) == (50, [12, 22])
    words, matrix = read_vec(tmp_path / "kept.vec", limit=None)
    assert words == [f"w{i}" for i in range(52) if i not in (10, 20)]
    assert matrix[0].tolist() == [0, 1, 2] and matrix[-1].tolist() == [51, 1, 2]
    # To the end of the file: 298 words of 300 lines is not a truncated file.
    assert keep_first_words(tmp_path / "wiki.xx.vec", tmp_path / "all.vec", limit=300)[0] == 298


def test_published_vectors_with_many_malformed_lines_stop_with_their_lines(tmp_path):
    from xling.analysis.fasttext_vectors import keep_first_words

    rows = [f"w{i} {i} 1" if i % 5 == 0 else f"w{i} {i} 1 2" for i in range(100)]
    (tmp_path / "wiki.xx.vec").write_text("\n".join(["100 3", *rows]) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"xx\.vec:2: 20 of the first 100 lines are mal"):
        keep_first_words(tmp_path / "wiki.xx.vec", tmp_path / "kept.vec", limit=100)
    assert not (tmp_path / "kept.vec").exists()


def test_a_header_that_disagrees_with_the_rows_is_an_error(tmp_path):
    from xling.analysis.fasttext_vectors import keep_first_words

    (tmp_path / "w.vec").write_text("1 2\nthe 1 2\nof 3 4\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"w\.vec: line 3 follows the 1 words its header"):
        read_vec(tmp_path / "w.vec", limit=None)
    # every row of another dimension: no word is kept, which is no published file
    (tmp_path / "wiki.xx.vec").write_text("2 4\nthe 1 2 3\nof 1 2 3\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"xx\.vec:2: 2 of the first 2 lines are malformed"):
        keep_first_words(tmp_path / "wiki.xx.vec", tmp_path / "kept.vec", limit=10)
