"""Preprocessing throughput: sentences per second per core, and the speed-up of N shards.

Tokenizes a generated raw corpus (Moses normalization + tokenization, as the pipeline of `en`)
once in one process, then again as N shards tokenized by N processes (scatter, tokenize,
gather, as the workflow's shard jobs do), checks that both outputs are identical, and prints
the times and the speed-up. Run: `python bench/preprocess.py [--shards N]`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from xling.preprocess import TextPipeline, concatenate_files, split_into_shards, tokenize_file
from xling.preprocess.synthetic import synthetic_sentences


def tokenize_shard(paths: tuple[Path, Path]) -> int:
    return tokenize_file(paths[0], paths[1], TextPipeline("en", "moses"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=40_000)
    parser.add_argument("--shards", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()

    lines = synthetic_sentences(args.sentences, seed=1, raw=True)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        raw = root / "raw.txt"
        raw.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(
            f"corpus: {len(lines):,} raw sentences, {raw.stat().st_size / 1e6:.1f} MB;"
            f" {os.cpu_count()} CPU cores; {args.shards} shards"
        )

        # One process (includes building the Moses tokenizer, as a job would).
        start = time.perf_counter()
        tokenize_shard((raw, root / "single.txt"))
        single = time.perf_counter() - start
        print(f"1 process : {single:6.2f} s, {len(lines) / single:8,.0f} sentences/s per core")

        # Scatter, N processes, gather.
        start = time.perf_counter()
        raw_shards = [root / f"raw.{index}.txt" for index in range(args.shards)]
        split_into_shards(raw, raw_shards)
        scattered = time.perf_counter()
        tokenized = [path.with_suffix(".tok") for path in raw_shards]
        with ProcessPoolExecutor(max_workers=args.shards) as pool:
            list(pool.map(tokenize_shard, zip(raw_shards, tokenized, strict=True)))
        parallel = time.perf_counter()
        concatenate_files(tokenized, root / "sharded.txt")
        sharded = time.perf_counter() - start
        identical = (root / "single.txt").read_bytes() == (root / "sharded.txt").read_bytes()
        print(
            f"{args.shards} shards  : {sharded:6.2f} s, {len(lines) / sharded:8,.0f} sentences/s,"
            f" {len(lines) / sharded / args.shards:8,.0f} per core"
            f" | speed-up {single / sharded:4.2f}x (ideal {args.shards}x)"
            f" | output identical to 1 process: {identical}"
        )
        print(
            f"            scatter {scattered - start:.2f} s, {args.shards} parallel jobs"
            f" {parallel - scattered:.2f} s, gather {start + sharded - parallel:.2f} s"
        )


if __name__ == "__main__":
    main()
