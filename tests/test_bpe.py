"""BPE: exact merge counts, the codes format, and output identical to subword-nmt's apply_bpe."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from subword_nmt.apply_bpe import BPE

from xling.base.errors import InputFileError
from xling.preprocess.synthetic import synthetic_sentences
from xling.vocab import SubwordNmtBpe, TokenizersBpe, learn_bpe, read_codes, write_codes
from xling.vocab.bpe import corpus_alphabet, corpus_characters
from xling.vocab.codes import emittable_pieces

# Words the training text never shows: other scripts, a combining mark, emoji, the markers
# themselves, single characters, repeated letters.
ODD_LINE = "ωλ ξένος unseen€ e\u0301te 😀😀x a@@b </w> @@ q z aaaaaaa 日本語 ﬁ Ǆ"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("bpe") / "train.txt"
    lines = synthetic_sentences(1500, seed=5, n_types=2000)
    lines += synthetic_sentences(300, seed=6, n_types=500, script="cyrillic")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, lines


def _subword_nmt(merges) -> BPE:
    codes = "#version: 0.2\n" + "".join(f"{left} {right}\n" for left, right in merges)
    return BPE(io.StringIO(codes))


def test_tokenizers_learns_exactly_the_requested_merges(corpus) -> None:
    path, _ = corpus
    merges = learn_bpe([path], 400)
    assert len(merges) == 400 == len(set(merges))
    assert learn_bpe([path], 150) == merges[:150]  # greedy: a shorter run is a prefix
    assert any(right.endswith("</w>") for _, right in merges)


def test_learning_stops_when_no_pair_is_frequent_enough(tmp_path) -> None:
    path = tmp_path / "tiny.txt"
    path.write_text("abc abc abcd\nxyz\n", encoding="utf-8")  # no tie between pair counts
    for backend in ("tokenizers", "subword-nmt"):
        assert learn_bpe([path], 100, backend=backend) == [("a", "b"), ("ab", "c</w>")]


def test_tokenizers_learning_does_not_depend_on_the_process(corpus) -> None:
    # Without fixed symbol ids, HF breaks ties in hash-map order: 3 outcomes in 6 processes.
    path, _ = corpus
    script = (
        "import json, sys; from xling.vocab import learn_bpe;"
        "print(json.dumps(learn_bpe([sys.argv[1]], 300)))"
    )
    expected = learn_bpe([path], 300)
    for _ in range(2):
        output = subprocess.run(
            [sys.executable, "-c", script, str(path)], capture_output=True, check=True
        ).stdout
        assert [tuple(merge) for merge in json.loads(output)] == expected


@pytest.mark.parametrize("learner", ["tokenizers", "subword-nmt"])
def test_applying_the_same_merges_gives_subword_nmt_output(corpus, learner) -> None:
    path, lines = corpus
    merges = learn_bpe([path], 300, backend=learner)
    reference = _subword_nmt(merges)
    test_lines = [*lines, ODD_LINE, "  leading and trailing  ", ""]
    expected = [reference.segment(line) for line in test_lines]
    assert TokenizersBpe(merges).segment_lines(test_lines) == expected
    assert SubwordNmtBpe(merges).segment_lines(test_lines) == expected
    applier = TokenizersBpe(merges)
    assert [applier.segment_line(line) for line in test_lines[-3:]] == expected[-3:]
    words = sorted({word for line in test_lines for word in line.split()})
    differing = [
        word
        for word, pieces in zip(words, applier.segment_words(words), strict=True)
        if list(pieces) != reference.segment_tokens([word])
    ]
    assert differing == []


def test_unseen_characters_are_kept_not_dropped() -> None:
    merges = [("a", "b"), ("ab", "c</w>")]
    assert TokenizersBpe(merges).segment_line("abc xabcq €") == "abc x@@ ab@@ c@@ q €"


def test_a_literal_end_of_word_marker_inside_a_word() -> None:
    # These merges build the symbol "</w>" inside a word, which the fast path would cut at.
    merges = [("<", "/"), ("</", "w"), ("</w", ">"), ("a", "b</w>")]
    line = "x</w>ab cab </w> ab"
    assert TokenizersBpe(merges).segment_line(line) == _subword_nmt(merges).segment(line)
    assert TokenizersBpe(merges).segment_line("x</w>y") == "x@@ </w>@@ y"


def test_repeated_merges_keep_their_first_rank() -> None:
    merges = [("b", "c"), ("a", "b"), ("b", "c")]
    assert TokenizersBpe(merges).segment_line("abc") == _subword_nmt(merges).segment("abc")


def test_emittable_pieces_cover_every_output_on_the_training_alphabet(corpus) -> None:
    path, lines = corpus
    merges = learn_bpe([path], 300)
    alphabet = {char for line in lines for char in line if not char.isspace()}
    emittable = emittable_pieces(merges, alphabet)
    produced = {
        piece for line in TokenizersBpe(merges).segment_lines(lines) for piece in line.split()
    }
    assert produced <= emittable
    assert emittable_pieces(merges, {"x"}) == {"x", "x@@"}


def test_codes_round_trip_and_format(tmp_path) -> None:
    merges = [("a", "b"), ("ab", "c</w>"), ("д", "а</w>")]
    path = tmp_path / "x.codes"
    write_codes(path, merges)
    assert path.read_text(encoding="utf-8") == "#version: 0.2\na b\nab c</w>\nд а</w>\n"
    assert read_codes(path) == merges
    assert _subword_nmt(merges).segment("abc") == "abc"
    with pytest.raises(ValueError, match=r"whitespace"):
        write_codes(tmp_path / "bad.codes", [("a b", "c")])


def test_bad_codes_files_name_the_line(tmp_path) -> None:
    no_header = tmp_path / "old.codes"
    no_header.write_text("a b\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"old.codes, line 1: expected the header"):
        read_codes(no_header)
    truncated = tmp_path / "cut.codes"
    truncated.write_text("#version: 0.2\na b\nab\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"cut.codes, line 3: a merge line"):
        read_codes(truncated)


def test_corpus_alphabet_reads_every_character(tmp_path) -> None:
    path = tmp_path / "chars.txt"
    path.write_text("ab 😀\tд\x1c日\r\nz", encoding="utf-8")
    assert corpus_characters([path]) == set("ab 😀\tд\x1c日\r\nz")
    assert corpus_alphabet([path]) == set("ab😀д日z")
