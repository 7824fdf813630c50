"""BPE: this project's backend (HF tokenizers) against subword-nmt, on the same generated text.

Learns N merges with both, applies the same merges with both, and prints the times, the ratios
(subword-nmt time / ours) and the number of words whose segmentation differs (must be 0: the
applier is built to reproduce subword-nmt's apply_bpe exactly). The corpus is a Zipfian
synthetic text of about 1M tokens, generated in code. Run: `python bench/bpe.py`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import tempfile
import time
from pathlib import Path

from subword_nmt.apply_bpe import BPE
from subword_nmt.learn_bpe import learn_bpe as subword_nmt_learn_bpe

from xling.preprocess.synthetic import synthetic_sentences
from xling.vocab import TokenizersBpe, learn_bpe, read_codes, write_codes


def timed(function, repeats: int):
    """Median wall time of `repeats` calls, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def subword_nmt_learn(path: Path, codes_path: Path, merges: int) -> None:
    with (
        open(path, encoding="utf-8") as text,
        open(codes_path, "w", encoding="utf-8") as codes,
        contextlib.redirect_stderr(io.StringIO()),  # its tqdm progress bar
    ):
        subword_nmt_learn_bpe(text, codes, merges, min_frequency=2)


def subword_nmt_apply(codes_path: Path, lines: list[str]) -> list[str]:
    with open(codes_path, encoding="utf-8") as codes:
        bpe = BPE(codes)
    return [bpe.process_line(line) for line in lines]


def differing_words(ours: list[str], reference: list[str]) -> tuple[int, int]:
    """(word tokens, distinct words) whose segmentation differs between two outputs."""
    tokens, types = 0, set()
    for line_ours, line_reference in zip(ours, reference, strict=True):
        words_ours = line_ours.replace("@@ ", "\0").split()
        words_reference = line_reference.replace("@@ ", "\0").split()
        if len(words_ours) != len(words_reference):
            tokens += max(len(words_ours), len(words_reference))
            types.add(line_reference)
            continue
        for a, b in zip(words_ours, words_reference, strict=True):
            if a != b:
                tokens += 1
                types.add(b)
    return tokens, len(types)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=80_000, help="about 13 tokens each")
    parser.add_argument("--merges", type=int, default=8_000)
    parser.add_argument("--repeats", type=int, default=3, help="runs per timing (median)")
    args = parser.parse_args()

    lines = synthetic_sentences(args.sentences, seed=1, n_types=40_000)
    lines += synthetic_sentences(args.sentences // 20, seed=2, n_types=5_000, script="cyrillic")
    tokens = sum(len(line.split()) for line in lines)
    types = len({word for line in lines for word in line.split()})
    print(
        f"corpus: {len(lines):,} lines, {tokens:,} tokens, {types:,} types; {args.merges:,} merges;"
        f" {os.cpu_count()} CPU cores (tokenizers uses them all)"
    )
    with tempfile.TemporaryDirectory() as scratch:
        corpus = Path(scratch) / "corpus.txt"
        corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
        ours_codes, reference_codes = Path(scratch) / "ours.codes", Path(scratch) / "snmt.codes"

        # Learning. subword-nmt takes ~40 s here (2-core AVX2 machine), so it runs once.
        t_ours, merges = timed(lambda: learn_bpe([corpus], args.merges), args.repeats)
        write_codes(ours_codes, merges)
        t_reference, _ = timed(lambda: subword_nmt_learn(corpus, reference_codes, args.merges), 1)
        reference_merges = read_codes(reference_codes)
        shared = len(set(merges) & set(reference_merges))
        print(
            f"learn  {args.merges} merges     : tokenizers {t_ours:6.2f} s"
            f" | subword-nmt {t_reference:6.2f} s | ratio {t_reference / t_ours:5.1f}x"
            f" (the merge lists share {shared:,}/{len(merges):,}: ties are broken differently)"
        )

        # Applying the same merges, from the codes file, to the whole corpus.
        for name, codes_path in (
            ("tokenizers-learned", ours_codes),
            ("subword-nmt-learned", reference_codes),
        ):
            codes = read_codes(codes_path)
            t_ours, ours = timed(
                lambda codes=codes: TokenizersBpe(codes).segment_lines(lines), args.repeats
            )
            t_reference, reference = timed(
                lambda codes_path=codes_path: subword_nmt_apply(codes_path, lines), args.repeats
            )
            diff_tokens, diff_types = differing_words(ours, reference)
            print(
                f"apply  {name:19s}: tokenizers {t_ours:6.2f} s | subword-nmt {t_reference:6.2f} s"
                f" | ratio {t_reference / t_ours:5.1f}x | differing words: {diff_tokens}"
                f" tokens, {diff_types} types; differing lines:"
                f" {sum(a != b for a, b in zip(ours, reference, strict=True))}"
            )


if __name__ == "__main__":
    main()
