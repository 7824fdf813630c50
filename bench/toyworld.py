"""How long generating the demo toy world takes on one core, against two yardsticks.

1. The issue's budget: at most 30 s for DEMO_SPEC on one core.
2. A naive baseline that writes the same files with the same number of lines and of words per
   line, each word a `random.choice` from the toy world's own vocabulary: no meanings, grammar or
   annotation, just the cost of drawing words and writing text. The ratio says what the grammar
   and the gold annotation cost on top of that.

Both run in this process, pinned to one CPU, best of --runs (noise from other jobs only adds time).

    .venv/bin/python bench/toyworld.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from xling.toyworld import DEMO_SPEC, generate, output_paths

BUDGET_S = 30.0


def _pin_to_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        first = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {first})
        return f"pinned to CPU {first}"
    return "not pinned (no sched_setaffinity here)"


def _shape(out: Path) -> tuple[dict[str, list[int]], list[str]]:
    """Words per line of every output file, and the vocabulary of all of them."""
    shape, vocabulary = {}, set()
    for rel in output_paths(DEMO_SPEC):
        lines = (out / rel).read_text(encoding="utf-8").split("\n")[:-1]
        shape[rel] = [len(line.split()) for line in lines]
        for line in lines:
            vocabulary.update(line.split())
    return shape, sorted(vocabulary)


def _baseline(shape: dict[str, list[int]], vocabulary: list[str], out: Path) -> None:
    rng = random.Random(0)
    choice = rng.choice
    for rel, counts in shape.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(choice(vocabulary) for _ in range(n)) + "\n" for n in counts]
        path.write_text("".join(lines), encoding="utf-8")


def _best(runs: int, work) -> float:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            work(Path(tmp))
            times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="repetitions; the best one counts")
    args = parser.parse_args()
    pinned = _pin_to_one_core()
    with tempfile.TemporaryDirectory() as tmp:
        generate(DEMO_SPEC, tmp)  # warm-up, and the shape the baseline copies
        shape, vocabulary = _shape(Path(tmp))
    lines = sum(len(v) for v in shape.values())
    words = sum(sum(v) for v in shape.values())
    toy = _best(args.runs, lambda out: generate(DEMO_SPEC, out))
    naive = _best(args.runs, lambda out: _baseline(shape, vocabulary, out))
    print(f"toy world demo ({pinned}, best of {args.runs}): {len(shape)} files, {lines:,} lines, "
          f"{words:,} words")  # fmt: skip
    print(f"  generate(DEMO_SPEC)          {toy:7.2f} s  ({lines / toy:,.0f} lines/s)")
    print(f"  naive random.choice writer   {naive:7.2f} s  ({lines / naive:,.0f} lines/s)")
    print(f"  ratio toy / naive            {toy / naive:7.2f} x")
    print(f"  share of the {BUDGET_S:.0f} s budget     {toy / BUDGET_S:7.2f}")


if __name__ == "__main__":
    main()
