"""Reading a CC-100 file: xling.acquire.commoncrawl.text_bytes against `xz -dc | wc -c`.

`sample_commoncrawl` (Wu §4.1) reads a language's CC-100 `.txt.xz` twice: once to count the text
bytes, once to keep a seeded sample the size of its Wikipedia. The largest files hold about 280 GB
of text, so the rule's wall time on the cluster follows from this throughput. The file here is
generated (toy-world-like word soup, one sentence a line, documents separated by empty lines),
compressed as CC-100's are (xz, preset 6). Prints MB of text per second for our reader and for
the shell pipeline a user would run instead, their ratio, and the hours for 2 x 280 GB.

Run: `python bench/commoncrawl.py` (about five minutes on 2 cores, mostly writing the test file;
the rate is the same with `--mb 30`, in about one).
"""

from __future__ import annotations

import argparse
import lzma
import random
import subprocess
import tempfile
import time
from pathlib import Path

from xling.acquire.commoncrawl import text_bytes

PAPER_TEXT_GB = 280  # the largest CC-100 files, uncompressed


def generate(path: Path, megabytes: int, seed: int = 0) -> int:
    """An xz file of about ``megabytes`` of text; returns the text's size in bytes."""
    rng = random.Random(seed)
    syllables = ["ka", "to", "ri", "me", "su", "na", "lo", "pe", "di", "vu", "sha", "ber"]
    words = ["".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(20000)]
    target, written = megabytes * 1_000_000, 0
    with lzma.open(path, "wt", encoding="utf-8", preset=6) as out:
        while written < target:
            lines = [
                " ".join(rng.choices(words, k=rng.randint(5, 30))).capitalize() + " ."
                for _ in range(rng.randint(3, 12))
            ]
            block = "\n".join(lines) + "\n\n"
            out.write(block)
            written += len(block.encode("utf-8"))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=150, help="MB of text to generate")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "xx.txt.xz"
        size = generate(path, args.mb)
        start = time.perf_counter()
        ours = text_bytes(path)
        ours_s = time.perf_counter() - start
        start = time.perf_counter()
        done = subprocess.run(
            f"xz -dc {path} | wc -c", shell=True, capture_output=True, text=True, check=True
        )
        shell_s = time.perf_counter() - start
    assert int(done.stdout) == size and 0 < ours <= size
    ours_rate, shell_rate = size / ours_s / 1e6, size / shell_s / 1e6
    hours = 2 * PAPER_TEXT_GB * 1000 / ours_rate / 3600
    print(f"text: {size / 1e6:,.0f} MB ({path.name}, xz preset 6)")
    print(f"xling text_bytes:  {ours_rate:8.1f} MB/s")
    print(f"xz -dc | wc -c:    {shell_rate:8.1f} MB/s")
    print(f"ratio (shell time / ours): {shell_s / ours_s:.2f}")
    print(f"two passes over {PAPER_TEXT_GB} GB at our rate: {hours:.1f} h")


if __name__ == "__main__":
    main()
