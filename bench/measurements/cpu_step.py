"""Where a demo pretraining step's time goes on this processor: matrix products against the rest.

The demo's time follows its pretraining throughput, which differs about twofold between the
processors this project has run on (docs/notebook/demo_budget.md, "Another processor"). This
prints, for one thread: the matrix products' GFLOP/s at the demo's shapes against a large product
(the ratio says how close the small shapes come to what MKL reaches); the milliseconds of a step at
5 to 42 streams, with the fixed cost a step pays whatever its size (a straight-line fit); and
torch's profiler's split of a demo step (21 streams) into matrix products and everything else
(attention, GELU, layer norms, softmax, the optimizer, copies and a few hundred small ops).

    python bench/measurements/cpu_step.py            # 3 rounds
    python bench/measurements/cpu_step.py --quick    # 1 round
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for the benchmark's model
from cpu_compile import VOCABULARY, demo_shape, random_batches, trainer

MATRIX_PRODUCTS = ("aten::mm", "aten::addmm", "aten::bmm")


def gflops(m: int, k: int, n: int, seconds: float = 0.5) -> float:
    """One thread's GFLOP/s for an (m x k) by (k x n) product, over about ``seconds``."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    for _ in range(3):
        a @ b
    reps = max(3, int(seconds * 60e9 / (2 * m * k * n)))
    start = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * m * k * n * reps / (time.perf_counter() - start) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round instead of 3")
    args = parser.parse_args()
    torch.set_num_threads(1)
    architecture, demo_streams, seq_len = demo_shape()
    dim, ffn = architecture["dim"], architecture["ffn_dim"]
    tokens = demo_streams * seq_len
    print(f"one thread, torch CPU capability {torch.backends.cpu.get_cpu_capability()}")

    large = gflops(2048, 2048, 2048)
    print(f"matrix product 2048 x 2048 x 2048: {large:.1f} GFLOP/s")
    for m, k, n in [(tokens, dim, 3 * dim), (tokens, dim, ffn), (tokens, ffn, dim)]:
        rate = gflops(m, k, n)
        ratio = rate / large
        print(f"matrix product {m} x {k} x {n}: {rate:.1f} GFLOP/s, ratio to the large {ratio:.2f}")

    rng = np.random.default_rng(0)
    sizes = (5, 11, demo_streams, 2 * demo_streams)
    steps = {streams: trainer(architecture, "eager") for streams in sizes}
    data = {streams: random_batches(streams, seq_len, 20, rng) for streams in sizes}
    for streams in sizes:
        for batch in data[streams][:3]:
            steps[streams](batch)
    times: dict[int, list[float]] = {streams: [] for streams in sizes}
    for _ in range(1 if args.quick else 3):
        for streams in sizes:  # alternating, so that the machine's drift hits every size alike
            start = time.perf_counter()
            for batch in data[streams]:
                steps[streams](batch)
            times[streams].append(1000 * (time.perf_counter() - start) / len(data[streams]))
    medians = [statistics.median(times[streams]) for streams in sizes]
    per_stream, fixed = np.polyfit(sizes, medians, 1)
    for streams, ms in zip(sizes, medians, strict=True):
        rate = streams * seq_len / ms * 1000
        print(f"{streams:>3} streams of {seq_len}: {ms:5.1f} ms a step, {rate:6.0f} tokens/s")
    print(f"fit: {fixed:.1f} ms a step + {per_stream:.2f} ms a stream")

    step, batch_list = steps[demo_streams], data[demo_streams]
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for batch in batch_list:
            step(batch)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    products = sum(e.self_cpu_time_total for e in events if e.key in MATRIX_PRODUCTS)
    predicted = statistics.mean(len(batch[1]) for batch in batch_list)
    flop = 6 * tokens * architecture["layers"] * (4 * dim * dim + 2 * dim * ffn)  # fwd + bwd
    flop += 6 * predicted * dim * VOCABULARY  # the output layer, on the selected positions
    product_ms = products / 1000 / len(batch_list)
    ops_ms = total / 1000 / len(batch_list)
    print(
        f"demo step ({demo_streams} streams) under torch's profiler: {ops_ms:.1f} ms of ops; "
        f"matrix products {product_ms:.1f} ms ({product_ms / ops_ms:.0%}, about "
        f"{flop / product_ms / 1e6:.0f} GFLOP/s), everything else {ops_ms - product_ms:.1f} ms"
    )


if __name__ == "__main__":
    main()
