"""Mean-pooled sentence states (Wu §5.1.3, §5.2; Muller's similarity): batches of similar length,
as `xling.analysis.representations.mean_pooled_layers` forms them, against batches in file order,
what one writes first. Side by side in one process, rounds alternating, median of each.

The sentences are the demo world's parallel sentences (generated here, seed 1234), each as many
random subword ids as it has tokens, through a randomly initialised encoder of the demo's size
(8 layers, width 64): the time does not depend on the weights. Printed: seconds per pass of each
and the ratio, and the largest difference between the two results (float32 rounding only).

    python bench/pooled_batches.py            # 2,000 sentences, batches of 64, one thread
    python bench/pooled_batches.py --sentences 5000 --lang zh
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from xling.analysis.representations import mean_pooled_layers
from xling.contracts import layout
from xling.model import EncoderConfig, MLMEncoder
from xling.toyworld import generate
from xling.toyworld.demo import resolve_spec

EOS, PAD = 1, 2


def file_order_pooling(model, sentences, lang, batch_size):
    """The plain way: batches of consecutive sentences, as they come (each batch pooled by the
    workflow's own function, whose sorting inside one batch leaves its padding as it is)."""
    batches = [
        mean_pooled_layers(model, sentences[start : start + batch_size], lang, eos_id=EOS,
                           pad_id=PAD, batch_size=batch_size)
        for start in range(0, len(sentences), batch_size)
    ]  # fmt: skip
    return [np.concatenate(layer) for layer in zip(*batches, strict=True)]


def demo_sentence_lengths(count: int, lang: str) -> list[int]:
    spec = resolve_spec({"preset": "demo", "sizes": {"parallel": count}})
    spec["languages"] = sorted({"en", lang})
    with tempfile.TemporaryDirectory() as folder:
        generate(spec, folder)
        lines = (Path(folder) / layout.parallel_words(lang)).read_text().splitlines()
    return [len(line.split()) for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--lang", default="en")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1234)
    lengths = demo_sentence_lengths(args.sentences, args.lang)
    rng = np.random.default_rng(1234)
    sentences = [rng.integers(3, 1000, size=n).tolist() for n in lengths]
    config = EncoderConfig(
        vocab_size=1000, languages=[args.lang], dim=64, layers=8, heads=4, ffn_dim=256,
        dropout=0.0, attention_dropout=0.0, max_positions=128, sinusoidal_positions=True,
    )  # fmt: skip
    model = MLMEncoder(config).eval()
    times: dict[str, list[float]] = {"file order": [], "by length": []}
    for _ in range(args.rounds):
        start = time.perf_counter()
        plain = file_order_pooling(model, sentences, args.lang, args.batch_size)
        times["file order"].append(time.perf_counter() - start)
        start = time.perf_counter()
        by_length = mean_pooled_layers(
            model, sentences, args.lang, eos_id=EOS, pad_id=PAD, batch_size=args.batch_size
        )
        times["by length"].append(time.perf_counter() - start)
    difference = max(float(np.abs(a - b).max()) for a, b in zip(plain, by_length, strict=True))
    print(
        f"{len(sentences)} {args.lang} sentences of {min(lengths)}-{max(lengths)} tokens "
        f"(mean {np.mean(lengths):.1f}), batches of {args.batch_size}, one thread"
    )
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"  {name:10s} {value:.3f} s a pass")
    print(f"  ratio file order / by length: {medians['file order'] / medians['by length']:.2f}")
    print(f"  largest difference between the two: {difference:.1e}")


if __name__ == "__main__":
    main()
