"""Word alignment with eflomal (xling.analysis.wordalign) on the toy world's gold alignments."""

import random
import signal
import subprocess
from pathlib import Path

import pytest

from xling.analysis.wordalign import align_words, alignment_error_rate, symmetrize
from xling.base.fileio import iter_lines
from xling.contracts import layout
from xling.contracts.alignment import read_alignments
from xling.toyworld import TINY_SPEC, generate

# eflomal + grow-diag-final-and on TINY_SPEC's 300 en-fr sentences, eflomal's default settings:
# AER 0.011-0.026 (mean 0.018) over 50 runs (eflomal cannot be seeded), against 0.26 for the
# diagonal baseline and 0.90 for random links. 0.05, twice the worst run, leaves room for the
# sampler's noise and still fails a shift of the indices, swapped directions or a broken
# symmetrization (docs/alignment.md).
AER_THRESHOLD = 0.05
# An aligner must beat the diagonal by this factor at least.
DIAGONAL_BASELINE_FACTOR = 4


def _words(path: Path) -> list[list[str]]:
    return [line.split(" ") for _, line in iter_lines(path)]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("toy")
    generate(TINY_SPEC, directory)
    return directory


@pytest.fixture(scope="module")
def en_fr(world):
    english = _words(world / layout.parallel_words("en"))
    french = _words(world / layout.parallel_words("fr"))
    gold = read_alignments(world / layout.alignment("en", "fr"))
    assert len(english) == len(french) == len(gold) == TINY_SPEC["sizes"]["parallel"]
    return english, french, gold


@pytest.fixture(scope="module")
def aligned(en_fr, tmp_path_factory):
    english, french, _ = en_fr
    path = tmp_path_factory.mktemp("align") / "en-fr.txt"
    return align_words(english, french, path), path


def _diagonal(source, target):
    return [
        [(i, round(i * (len(t) - 1) / max(1, len(s) - 1))) for i in range(len(s))]
        for s, t in zip(source, target, strict=True)
    ]


def _random_links(source, target):
    rng = random.Random(0)
    pairs = zip(source, target, strict=True)
    return [[(i, rng.randrange(len(t))) for i in range(len(s))] for s, t in pairs]


def test_eflomal_with_gdfa_recovers_the_gold_alignments(en_fr, aligned):
    english, french, gold = en_fr
    links, _ = aligned
    aer = alignment_error_rate(links, gold)
    diagonal = alignment_error_rate(_diagonal(english, french), gold)
    assert aer < AER_THRESHOLD, aer
    assert aer * DIAGONAL_BASELINE_FACTOR < diagonal, (aer, diagonal)
    assert alignment_error_rate(_random_links(english, french), gold) > 0.8


def test_links_lie_within_their_sentences(en_fr, aligned):
    english, french, _ = en_fr
    links, _ = aligned
    for k, (sentence_links, source, target) in enumerate(zip(links, english, french, strict=True)):
        assert sentence_links, f"sentence {k} got no link"
        assert sentence_links == sorted(set(sentence_links))
        assert all(0 <= i < len(source) and 0 <= j < len(target) for i, j in sentence_links), k


def test_the_pharaoh_file_round_trips(aligned):
    links, path = aligned
    assert read_alignments(path) == links
    assert not list(path.parent.glob(".*.part"))  # the atomic write left no temporary file


def test_intersection_is_one_to_one(en_fr, tmp_path):
    # Forward links give each target word one source word and reverse links each source word one
    # target word, so their intersection is one-to-one: this fails if a direction is misread.
    english, french, _ = en_fr
    links = align_words(
        english[:80],
        french[:80],
        tmp_path / "x.txt",
        symmetrization="intersection",
        rel_iterations=0.1,
    )
    for sentence_links in links:
        sources = [i for i, _ in sentence_links]
        targets = [j for _, j in sentence_links]
        assert len(set(sources)) == len(sources) and len(set(targets)) == len(targets)


# Hand-made directed links (source i, target j) of a 6 x 6 pair: the intersection is (0,0) (1,1)
# (3,3); grow adds (1,2) (new target 2, next to (1,1)) and (2,4) (new source 2, diagonal to (3,3));
# final-and adds (5,5) (both words unaligned, no neighbour) but not (4,0), whose target 0 is taken.
FORWARD = [(0, 0), (1, 1), (1, 2), (2, 4), (3, 3), (5, 5)]
REVERSE = [(0, 0), (1, 1), (3, 3), (4, 0)]


def test_grow_diag_final_and_gives_the_textbook_links():
    intersection = symmetrize(FORWARD, REVERSE, "intersection")
    gdfa = symmetrize(FORWARD, REVERSE, "grow-diag-final-and")
    union = symmetrize(FORWARD, REVERSE, "union")
    assert intersection == [(0, 0), (1, 1), (3, 3)]
    assert gdfa == [(0, 0), (1, 1), (1, 2), (2, 4), (3, 3), (5, 5)]
    assert set(intersection) <= set(gdfa) <= set(union) and (4, 0) in union
    assert symmetrize(reversed(FORWARD), reversed(REVERSE), "grow-diag-final-and") == gdfa


def test_grow_reaches_links_through_links_it_added():
    # (2,1) touches only (1,1), which is itself grown from (0,0); final-and cannot add it (its
    # target is taken), so only growing from grown links does.
    forward, reverse = [(0, 0), (1, 1)], [(0, 0), (2, 1)]
    assert symmetrize(forward, reverse, "grow-diag-final-and") == [(0, 0), (1, 1), (2, 1)]


def test_final_and_takes_forward_links_before_reverse_ones_as_atools():
    # (2,3) and (1,3) both qualify on their own; atools adds the forward one first, which then
    # takes target 3 from the reverse one.
    forward, reverse = [(0, 0), (2, 3)], [(0, 0), (1, 3)]
    assert symmetrize(forward, reverse, "grow-diag-final-and") == [(0, 0), (2, 3)]
    assert symmetrize(reverse, forward, "grow-diag-final-and") == [(0, 0), (1, 3)]


def test_symmetrize_without_links():
    assert symmetrize([], [], "grow-diag-final-and") == []


def test_empty_sentences_keep_their_lines(en_fr, tmp_path):
    english, french, _ = en_fr
    source, target = [list(s) for s in english[:60]], [list(t) for t in french[:60]]
    emptied = {0, 7, 59}
    for k in emptied:
        (source if k % 2 else target)[k] = []
    source[30] = target[30] = []
    emptied.add(30)
    path = tmp_path / "aligned.txt"
    links = align_words(source, target, path, rel_iterations=0.1)
    assert len(links) == 60 and read_alignments(path) == links
    assert all(not links[k] for k in emptied)
    assert all(links[k] for k in range(60) if k not in emptied)
    # Left in place, the other pairs keep their own words: link indices fit their sentences.
    for k in set(range(60)) - emptied:
        assert all(i < len(source[k]) and j < len(target[k]) for i, j in links[k]), k


def test_pairs_that_all_have_an_empty_side_give_empty_lines(tmp_path):
    path = tmp_path / "aligned.txt"
    assert align_words([[], []], [["a"], []], path) == [[], []]
    assert path.read_text(encoding="utf-8") == "\n\n"


def test_mismatched_inputs_raise_naming_both_counts(tmp_path):
    with pytest.raises(ValueError, match=r"source side has 3 sentences.*target side 2"):
        align_words([["a"]] * 3, [["b"]] * 2, tmp_path / "x.txt")
    assert not (tmp_path / "x.txt").exists()


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ([["a b", "c"]], r"source sentence 1, word 0: 'a b'"),
        ([["a", ""]], r"source sentence 1, word 1: ''"),
        (["a b"], r"source sentence 1 is a string"),
    ],
)
def test_words_that_would_shift_indices_raise(source, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        align_words(source, [["x"]], tmp_path / "x.txt")


def test_unknown_symmetrization_raises(tmp_path):
    with pytest.raises(ValueError, match="grow-diag-final-and, intersection, union"):
        align_words([["a"]], [["b"]], tmp_path / "x.txt", symmetrization="grow-diag")


def test_alignment_error_rate():
    gold = [[(0, 0), (1, 1)], [(0, 1)]]
    assert alignment_error_rate(gold, gold) == 0.0
    assert alignment_error_rate([[(0, 1)], [(0, 0)]], gold) == 1.0
    # |A| = 2, |S| = 3, |A ∩ S| = 1, summed over the corpus: 1 - 2 * 1 / 5.
    assert alignment_error_rate([[(0, 0), (1, 0)], []], gold) == pytest.approx(0.6)
    assert alignment_error_rate([[], []], [[], []]) == 0.0
    with pytest.raises(ValueError, match="2 predicted sentence alignments and 1 gold"):
        alignment_error_rate(gold, gold[:1])


@pytest.mark.parametrize(
    "returncode, message",
    [(-signal.SIGILL, "illegal instruction.*slurm/envs.sh"), (1, "aligner failed")],
)
def test_a_failed_aligner_says_why_and_an_illegal_instruction_how_to_rebuild(
    returncode, message, tmp_path, monkeypatch
):
    """pip compiles eflomal for the CPU that builds the env: on a compute node with an older CPU
    the aligner dies of SIGILL, which the job must name, with the fix."""
    import eflomal

    def crash(self, *args, **kwargs):
        raise subprocess.CalledProcessError(returncode, ["eflomal"])

    monkeypatch.setattr(eflomal.Aligner, "align", crash)
    with pytest.raises(RuntimeError, match=message):
        align_words([["a", "b"]], [["c", "d"]], tmp_path / "out.txt")
