"""Word translation by Procrustes + CSLS: xling.analysis.alignment against plain numpy.

The experiment of Wu, Conneau et al. (2020, §5.1.1) on a planted pair of vocabularies (target =
source @ random orthogonal map + noise, float32): iterative normalization, Procrustes on a
training dictionary, CSLS (K = 10) for the test words, P@1. The plain numpy version is what one
writes from the formulas: the whole source x target cosine matrix, `np.partition` for the
k-nearest means. Its matrix is 160 GB at the paper's 200k words, so the side-by-side run is at
`--compare-n` words (20k: 1.6 GB a matrix); then ours runs alone at `--n` words. Prints time,
peak memory (resident set growth during the call, Linux) and P@1 of each, the time ratio
(numpy / ours) and how many top-1 choices differ.

Run: `python bench/alignment.py` (20k side by side, 50k ours alone: a few minutes on 2 cores).
The paper's scale: `python bench/alignment.py --compare-n 0 --n 200000` (tens of minutes on 2
cores; about 5 GB of memory).
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from xling.analysis.alignment import csls_top1, iterative_normalization, procrustes


def resident_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def measured(function):
    """(result, seconds, peak resident growth in GiB) of one call; resets the kernel's peak.

    The memory is NaN where the kernel has no resettable peak (outside Linux).
    """
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
            clear_refs.write("5")  # resets VmHWM, the peak resident set, to the current size
        baseline = resident_kib("VmRSS")
    except OSError:
        baseline = None
    start = time.perf_counter()
    result = function()
    seconds = time.perf_counter() - start
    if baseline is None:
        return result, seconds, math.nan
    return result, seconds, (resident_kib("VmHWM") - baseline) / 2**20


def planted_vocabularies(n: int, dim: int, noise: float, seed: int):
    """Source vectors, and target vectors whose row i is the translation of source row i."""
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    mapping = (q * np.sign(np.diag(r))).astype(np.float32)
    source = rng.standard_normal((n, dim), dtype=np.float32) + 0.3  # off-centre, as real spaces
    target = source @ mapping
    target += noise * rng.standard_normal((n, dim), dtype=np.float32)
    return source, target


def unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def plain_numpy_p_at_1(source, target, train, test, k: int, rounds: int = 5):
    """The same experiment written directly from the formulas, with the full cosine matrix."""
    for _ in range(rounds):
        source = unit_rows(source)
        source = source - source.mean(axis=0)
        target = unit_rows(target)
        target = target - target.mean(axis=0)
    source, target = unit_rows(source), unit_rows(target)
    u, _, vt = np.linalg.svd(source[train].T @ target[train])
    mapped = source @ (u @ vt)
    similarities = mapped @ target.T  # sources x targets
    r_source = np.partition(similarities, -k, axis=0)[-k:].mean(axis=0)  # r_S(y), every target
    query_similarities = similarities[test]
    r_target = np.partition(query_similarities, -k, axis=1)[:, -k:].mean(axis=1)  # r_T(x)
    csls = 2 * query_similarities - r_target[:, None] - r_source[None, :]
    top1 = csls.argmax(axis=1)
    return float(np.mean(top1 == test)), top1


def our_p_at_1(source, target, train, test, k: int):
    """translation_p_at_1's steps, called one by one to keep the top-1 choices."""
    source, target = iterative_normalization(source), iterative_normalization(target)
    mapped = source @ procrustes(source[train], target[train])
    del source
    top1 = csls_top1(mapped[test], target, k=k, sources=mapped)
    return float(np.mean(top1 == test)), top1


def dictionaries(n: int, n_train: int, n_queries: int, seed: int):
    order = np.random.default_rng(seed + 1).permutation(n)
    return np.sort(order[:n_train]), np.sort(order[n_train : n_train + n_queries])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--compare-n", type=int, default=20_000, help="words, side by side (0: skip)"
    )
    parser.add_argument("--n", type=int, default=50_000, help="words, ours alone (0: skip)")
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--train", type=int, default=5_000, help="training dictionary pairs")
    parser.add_argument("--queries", type=int, default=1_500, help="test words (MUSE: 1,500)")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--noise", type=float, default=3.0, help="per-coordinate noise std")
    args = parser.parse_args()
    print(
        f"{args.dim} dimensions, {args.train:,} training pairs, {args.queries:,} test words,"
        f" k = {args.k}, noise {args.noise}; {os.cpu_count()} CPU cores"
    )

    if args.compare_n:
        source, target = planted_vocabularies(args.compare_n, args.dim, args.noise, seed=1)
        train, test = dictionaries(args.compare_n, args.train, args.queries, seed=1)
        (p_ours, top1_ours), t_ours, m_ours = measured(
            lambda: our_p_at_1(source, target, train, test, args.k)
        )
        (p_plain, top1_plain), t_plain, m_plain = measured(
            lambda: plain_numpy_p_at_1(source, target, train, test, args.k)
        )
        print(
            f"{args.compare_n:,} words: ours {t_ours:7.1f} s, peak +{m_ours:5.2f} GiB,"
            f" P@1 {p_ours:.4f} | plain numpy {t_plain:7.1f} s, peak +{m_plain:5.2f} GiB,"
            f" P@1 {p_plain:.4f} | time ratio (numpy / ours) {t_plain / t_ours:4.2f}x,"
            f" memory ratio {m_plain / m_ours:4.1f}x | differing top-1:"
            f" {int(np.sum(top1_ours != top1_plain))}/{len(test)}"
        )
        del source, target

    if args.n:
        source, target = planted_vocabularies(args.n, args.dim, args.noise, seed=2)
        train, test = dictionaries(args.n, args.train, args.queries, seed=2)
        (p_ours, _), t_ours, m_ours = measured(
            lambda: our_p_at_1(source, target, train, test, args.k)
        )
        full_matrix = args.n**2 * 4 / 2**30
        print(
            f"{args.n:,} words: ours {t_ours:7.1f} s, peak +{m_ours:5.2f} GiB,"
            f" P@1 {p_ours:.4f} (plain numpy would need {full_matrix:,.0f} GiB"
            " for one float32 similarity matrix)"
        )


if __name__ == "__main__":
    main()
