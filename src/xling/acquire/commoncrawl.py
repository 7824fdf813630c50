"""The Wiki-CC row's corpus (Wu §4.1): "a random subset of Common Crawl of the same size" as the
other language's Wikipedia text.

The source is a CC-100 file (``{lang}.txt.xz``: one sentence a line, documents separated by empty
lines). Size is measured in UTF-8 bytes, so that Wikipedia's paragraph lines and Common Crawl's
sentence lines compare fairly. Two streaming passes: count the bytes, then keep every non-empty line
independently with probability ``target / total`` drawn from a seeded generator, which gives a
uniform random subset of the wanted size (up to sampling noise) in constant memory.
"""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np

from xling.atomic import atomic_open


def _open_text(path: Path):
    opener = lzma.open if path.suffix == ".xz" or _is_xz(path) else open
    return opener(path, "rt", encoding="utf-8")


def _is_xz(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(6) == b"\xfd7zXZ\x00"


def text_bytes(path: str | Path) -> int:
    """UTF-8 bytes of the non-empty lines of a (possibly xz-compressed) text file."""
    with _open_text(Path(path)) as handle:
        return sum(len(line.encode("utf-8")) for line in handle if line.strip())


def sample_to_size(source: str | Path, target_bytes: int, out_path: str | Path, seed: int) -> int:
    """Write a uniform random subset of ``source``'s non-empty lines of about ``target_bytes``.

    Returns the number of lines written. If the source is smaller than the target, all of it is
    kept (and the caller is told through the returned count).
    """
    source = Path(source)
    total = text_bytes(source)
    if total == 0:
        raise ValueError(f"{source}: no text; is this a CC-100 file?")
    keep = min(1.0, target_bytes / total)
    rng = np.random.default_rng(seed)
    written = 0
    with _open_text(source) as handle, atomic_open(out_path) as out:
        for line in handle:
            if line.strip() and rng.random() < keep:
                out.write(line.rstrip("\n") + "\n")
                written += 1
    return written
