"""Word alignment of parallel sentences (Wu §5.1.2: the dictionary of parallel contextual words).

The paper runs fast_align on the 10k XNLI parallel sentences; this module runs eflomal (an aligner
of the same IBM-model family, maintained and pip-installable, more accurate) in both directions and
symmetrizes the two directed alignments as fast_align's ``atools -c grow-diag-final-and`` does.
Links are 0-based ``(source word, target word)`` pairs, written in the Pharaoh format of
:mod:`xling.contracts.alignment`. See docs/alignment.md.

Determinism: eflomal 2.0.0 has no seed option; its sampler seeds itself from ``/dev/urandom``, so
the links of two runs on the same input differ slightly (measured in docs/alignment.md). Everything
else here (the handling of empty sentences, symmetrization, the written file) is a pure function
of eflomal's directed links. There is therefore no ``seed`` argument: one would not be honoured.
"""

from __future__ import annotations

import signal
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from xling.base.atomic import atomic_write
from xling.contracts.alignment import Link, format_alignment, read_alignments

SYMMETRIZATIONS = ("grow-diag-final-and", "intersection", "union")

# eflomal's text writer stores a sentence of 0x400 words or more as an empty one (no links); such
# sentences are set aside with the empty ones so that what happens to them is decided here.
EFLOMAL_MAX_WORDS = 0x400 - 1

# atools' neighbourhood for growing: the 8 cells around a link ("diag" adds the corners).
_NEIGHBOURS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


def align_words(
    source_sentences: Sequence[Sequence[str]],
    target_sentences: Sequence[Sequence[str]],
    out_path: str | Path,
    *,
    symmetrization: str = "grow-diag-final-and",
    model: int = 3,
    n_samplers: int = 3,
    rel_iterations: float = 1.0,
) -> list[list[Link]]:
    """Align parallel sentences (lists of words) with eflomal; write and return the links.

    Sentence ``k`` of the result (and line ``k + 1`` of ``out_path``, Pharaoh format, written
    atomically) holds the symmetrized links of pair ``k``. A pair with an empty side, or a side of
    more than :data:`EFLOMAL_MAX_WORDS` words, gets no links (an empty line). eflomal lowercases
    words before counting them. ``model`` (1 IBM1, 2 +HMM, 3 +fertility), ``n_samplers`` and
    ``rel_iterations`` are eflomal's settings, with its defaults.

    Raises:
        ValueError: the sides have different numbers of sentences, a word is empty or contains
            whitespace (eflomal would split it and shift the indices), or ``symmetrization`` is not
            one of :data:`SYMMETRIZATIONS`.
    """
    if len(source_sentences) != len(target_sentences):
        raise ValueError(
            f"the source side has {len(source_sentences)} sentences and the target side "
            f"{len(target_sentences)}; parallel inputs need one target sentence per source sentence"
        )
    if symmetrization not in SYMMETRIZATIONS:
        raise ValueError(
            f"unknown symmetrization {symmetrization!r}; use one of {', '.join(SYMMETRIZATIONS)}"
        )
    _check_words(source_sentences, "source")
    _check_words(target_sentences, "target")

    alignable = [
        k
        for k, (source, target) in enumerate(zip(source_sentences, target_sentences, strict=True))
        if 0 < len(source) <= EFLOMAL_MAX_WORDS and 0 < len(target) <= EFLOMAL_MAX_WORDS
    ]
    forward, reverse = _run_eflomal(
        [source_sentences[k] for k in alignable],
        [target_sentences[k] for k in alignable],
        model=model,
        n_samplers=n_samplers,
        rel_iterations=rel_iterations,
    )
    links: list[list[Link]] = [[] for _ in source_sentences]
    for k, forward_links, reverse_links in zip(alignable, forward, reverse, strict=True):
        links[k] = symmetrize(forward_links, reverse_links, symmetrization)
    atomic_write(out_path, (format_alignment(sentence) for sentence in links))
    return links


def _check_words(sentences: Sequence[Sequence[str]], side: str) -> None:
    for k, words in enumerate(sentences):
        if isinstance(words, str):
            raise ValueError(
                f"{side} sentence {k + 1} is a string; pass each sentence as a list of words "
                "(line.split(' '))"
            )
        for index, word in enumerate(words):
            if not word or word.split() != [word]:
                raise ValueError(
                    f"{side} sentence {k + 1}, word {index}: {word!r} is empty or contains "
                    "whitespace, which would shift the word indices of the links; split words on "
                    "spaces and drop empty ones"
                )


def _run_eflomal(
    source_sentences: Sequence[Sequence[str]],
    target_sentences: Sequence[Sequence[str]],
    *,
    model: int,
    n_samplers: int,
    rel_iterations: float,
) -> tuple[list[list[Link]], list[list[Link]]]:
    """eflomal's forward and reverse links (both as source-target pairs), one list per sentence."""
    if not source_sentences:
        return [], []
    import eflomal  # imported here: its C build is needed only by the stage that aligns

    aligner = eflomal.Aligner(model=model, n_samplers=n_samplers, rel_iterations=rel_iterations)
    with tempfile.TemporaryDirectory(prefix="xling-eflomal-") as directory:
        forward_path = Path(directory, "forward.links")
        reverse_path = Path(directory, "reverse.links")
        try:
            aligner.align(
                [" ".join(words) for words in source_sentences],
                [" ".join(words) for words in target_sentences],
                links_filename_fwd=str(forward_path),
                links_filename_rev=str(reverse_path),
            )
        except subprocess.CalledProcessError as error:
            raise RuntimeError(_eflomal_failure(error)) from error
        forward, reverse = read_alignments(forward_path), read_alignments(reverse_path)
    for name, directed in (("forward", forward), ("reverse", reverse)):
        if len(directed) != len(source_sentences):
            raise RuntimeError(
                f"eflomal wrote {len(directed)} {name} alignment lines for "
                f"{len(source_sentences)} sentence pairs; check the eflomal installation "
                "(pip install --force-reinstall eflomal)"
            )
    return forward, reverse


def _eflomal_failure(error: subprocess.CalledProcessError) -> str:
    """Why eflomal's C aligner failed, and the fix where it is known.

    pip builds eflomal from its source with ``-march=native``: for the CPU of the machine that
    creates the env. A cluster's login node often has a newer CPU than its compute nodes, whose
    processor then stops the aligner at its first unknown instruction (SIGILL).
    """
    if error.returncode == -signal.SIGILL:
        return (
            "eflomal's aligner stopped on an illegal instruction: its env was built on a machine "
            "with another CPU (pip compiles eflomal with -march=native unless slurm/envs.sh builds "
            "it). Delete the text env under .snakemake/conda (or your conda-prefix) and run "
            "`bash slurm/envs.sh` (docs/cluster.md, Envs), which builds it for any CPU"
        )
    return f"eflomal's aligner failed ({error}); check the eflomal installation"


def symmetrize(forward: Iterable[Link], reverse: Iterable[Link], heuristic: str) -> list[Link]:
    """Combine the links of the two directions of one sentence pair, sorted.

    ``grow-diag-final-and`` is fast_align's ``atools -i forward -j reverse -c grow-diag-final-and``,
    written out here because atools is not on PyPI, step for step so that the links are the same:
    start from the intersection; pass over the other union links in (source, target) order, adding
    each that touches a current link (8 neighbours) while its source or its target word is still
    unaligned, until a pass adds none; then add the forward links, and after them the reverse
    links, whose source and target words are both unaligned.
    """
    forward, reverse = set(forward), set(reverse)
    if heuristic == "intersection":
        return sorted(forward & reverse)
    if heuristic == "union":
        return sorted(forward | reverse)
    if heuristic != "grow-diag-final-and":
        raise ValueError(
            f"unknown symmetrization {heuristic!r}; use one of {', '.join(SYMMETRIZATIONS)}"
        )
    links = forward & reverse
    aligned_source = {i for i, _ in links}
    aligned_target = {j for _, j in links}

    def add(i: int, j: int) -> None:
        links.add((i, j))
        aligned_source.add(i)
        aligned_target.add(j)

    candidates = sorted((forward | reverse) - links)
    grew = True
    while grew:
        grew = False
        for i, j in candidates:
            # A link added in this pass already counts for the candidates after it, as in atools.
            if (
                (i, j) not in links
                and (i not in aligned_source or j not in aligned_target)
                and any((i + di, j + dj) in links for di, dj in _NEIGHBOURS)
            ):
                add(i, j)
                grew = True
    for directed in (forward, reverse):
        for i, j in sorted(directed):
            if i not in aligned_source and j not in aligned_target:
                add(i, j)
    return sorted(links)


def alignment_error_rate(
    predicted: Sequence[Iterable[Link]], gold: Sequence[Iterable[Link]]
) -> float:
    """Corpus AER with sure links only (Och and Ney 2003): ``1 - 2|A∩S| / (|A| + |S|)``.

    ``predicted`` (A) and ``gold`` (S) hold one link collection per sentence pair; counts are
    summed over the corpus. With no link on either side the rate is 0.
    """
    if len(predicted) != len(gold):
        raise ValueError(
            f"{len(predicted)} predicted sentence alignments and {len(gold)} gold ones; "
            "they must cover the same sentence pairs"
        )
    matched = total = 0
    for predicted_links, gold_links in zip(predicted, gold, strict=True):
        predicted_set, gold_set = set(predicted_links), set(gold_links)
        matched += len(predicted_set & gold_set)
        total += len(predicted_set) + len(gold_set)
    return 0.0 if total == 0 else 1.0 - 2.0 * matched / total
