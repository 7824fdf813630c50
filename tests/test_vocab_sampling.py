"""The language-balanced sample that BPE is learned on."""

from __future__ import annotations

from collections import Counter

from xling.vocab.sampling import write_bpe_sample


def _corpus(path, prefix, n_lines):
    path.write_text("".join(f"{prefix} {index}\n" for index in range(n_lines)), encoding="utf-8")
    return path


def _sample(tmp_path, corpora, wanted, seed=0, upsample=True):
    out = tmp_path / f"sample.{seed}.{upsample}.txt"
    written = write_bpe_sample(out, corpora, wanted, seed=seed, upsample=upsample)
    return written, out.read_text(encoding="utf-8").splitlines()


def test_large_corpora_give_distinct_lines_and_small_ones_are_repeated(tmp_path) -> None:
    corpora = {
        "en": _corpus(tmp_path / "en.txt", "en", 1000),
        "fr": _corpus(tmp_path / "fr.txt", "fr", 30),
    }
    written, lines = _sample(tmp_path, corpora, 100)
    assert written == {"en": 100, "fr": 100}
    english = [line for line in lines if line.startswith("en ")]
    french = Counter(line for line in lines if line.startswith("fr "))
    assert len(english) == len(set(english)) == 100
    assert set(french) == {f"fr {index}" for index in range(30)}
    assert set(french.values()) == {3, 4} and sum(french.values()) == 100
    english_order = [int(line.split()[1]) for line in english]
    assert english_order == sorted(english_order)  # corpus order kept


def test_sampling_is_seeded_and_per_language(tmp_path) -> None:
    corpora = {
        "en": _corpus(tmp_path / "en.txt", "x", 500),
        "fr": _corpus(tmp_path / "fr.txt", "x", 500),
    }
    first = _sample(tmp_path, corpora, 50, seed=1)[1]
    assert _sample(tmp_path, {**corpora}, 50, seed=1)[1] == first
    assert _sample(tmp_path, corpora, 50, seed=2)[1] != first
    assert first[:50] != first[50:]  # each language draws its own lines


def test_repetition_only_balances(tmp_path) -> None:
    corpora = {
        "en": _corpus(tmp_path / "en.txt", "en", 40),
        "fr": _corpus(tmp_path / "fr.txt", "fr", 20),
    }
    written, lines = _sample(tmp_path, corpora, 1000)  # both smaller than 1000: up to 40 each
    assert written == {"en": 40, "fr": 40}
    assert Counter(lines) == {
        **{f"en {i}": 1 for i in range(40)},
        **{f"fr {i}": 2 for i in range(20)},
    }


def test_without_upsampling_a_small_corpus_goes_in_once(tmp_path) -> None:
    corpora = {"fr": _corpus(tmp_path / "fr.txt", "fr", 30)}
    written, lines = _sample(tmp_path, corpora, 100, upsample=False)
    assert written == {"fr": 30} and sorted(lines) == sorted(f"fr {i}" for i in range(30))
