"""CKA on bootstrap resamples of the sentences: the Gram form of
``xling.analysis.cka.resampled_linear_cka`` against what one would write instead, the CKA of each
resample's drawn rows (``linear_cka(x[rows], y[rows])``), side by side in one process.

Sizes: the demo's Figure 7 (2,000 sentences of width 64, 200 resamples) and the paper study's
(5,000 of width 768; ``--paper``, where the direct form runs ``--direct-resamples`` of them and is
scaled up to 200). Prints seconds, the ratio and the peak memory of each (tracemalloc: numpy's
arrays), and the largest difference between the two.

    python bench/cka_resamples.py
    python bench/cka_resamples.py --paper --direct-resamples 4
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from xling.analysis.cka import linear_cka, resampled_linear_cka


def measured(function):
    tracemalloc.start()
    started = time.perf_counter()
    result = function()
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", action="store_true", help="5,000 x 768 instead of 2,000 x 64")
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--direct-resamples", type=int, default=None)
    args = parser.parse_args()
    n, width = (5000, 768) if args.paper else (2000, 64)  # the demo's analysis.cka.sentences
    direct_count = args.direct_resamples or args.resamples
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, width)) + 3.0
    y = x @ rng.normal(size=(width, width)) / width**0.5 + rng.normal(size=(n, width))
    draws = rng.integers(0, n, size=(args.resamples, n))
    gram, gram_seconds, gram_peak = measured(lambda: resampled_linear_cka(x, y, draws))
    direct, direct_seconds, direct_peak = measured(
        lambda: np.array([linear_cka(x[rows], y[rows]) for rows in draws[:direct_count]])
    )
    direct_seconds *= args.resamples / direct_count
    print(f"{n} sentences x {width}, {args.resamples} resamples:")
    print(f"  Gram form   {gram_seconds:8.2f} s   peak {gram_peak / 2**20:8.0f} MiB")
    scaled = "" if direct_count == args.resamples else f"   ({direct_count} run, scaled)"
    print(f"  drawn rows  {direct_seconds:8.2f} s   peak {direct_peak / 2**20:8.0f} MiB{scaled}")
    print(f"  ratio       {direct_seconds / gram_seconds:8.1f}x faster")
    print(f"  largest difference {np.abs(gram[:direct_count] - direct).max():.1e}")


if __name__ == "__main__":
    main()
