"""The Wiki-CC row's corpus (Wu §4.1): "a random subset of Common Crawl of the same size" as the
other language's Wikipedia text.

The source is a CC-100 file (``{lang}.txt.xz``: one paragraph a line, documents separated by empty
lines). Size is measured in UTF-8 bytes, so that Wikipedia's paragraph lines and Common Crawl's
(shorter) lines compare fairly. Two streaming passes: count the bytes, then keep every document
whole, independently with probability ``target / total`` drawn from a seeded generator, which gives
a uniform random subset of the wanted size (up to sampling noise) in constant memory. Whole
documents, not lines: pretraining streams run across lines (as XLM's do), so the Wikipedia side's
consecutive lines are paragraphs of one article; kept line by line at the rates of the paper study
(about 0.03 to 0.1), two consecutive Common Crawl lines would come from one document a tenth to a
third of the time, and the Wiki-CC row would measure lost context as well as another domain.

Lines end at ``\\n`` only (xling.base.fileio's rule), and a byte that is not UTF-8 reads as U+FFFD:
a web crawl is not clean text, and one bad byte must not end a pass of hours over hundreds of GB.
"""

from __future__ import annotations

import lzma
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from xling.base.atomic import atomic_open
from xling.base.errors import InputFileError
from xling.base.fileio import raw_lines

CC100_FIX = (
    "delete it and rerun the download job (config data.commoncrawl; pin its sha256 there so that a "
    "damaged download fails at once)"
)
# Compressions CC-100 does not use: read as text, they would give a sample of binary noise.
OTHER_COMPRESSIONS = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"(\xb5/\xfd": "zstd"}


def _lines(path: Path) -> Iterator[str]:
    magic = _magic(path)
    for prefix, name in OTHER_COMPRESSIONS.items():
        if magic.startswith(prefix):
            raise InputFileError(
                path, f"a {name} file; CC-100 files are xz-compressed text", fix=CC100_FIX
            )
    xz = path.suffix == ".xz" or magic == b"\xfd7zXZ\x00"
    try:
        with (lzma.open if xz else open)(path, "rb") as handle:
            for _, raw in raw_lines(handle):
                yield raw.decode("utf-8", "replace")
    except (EOFError, lzma.LZMAError) as error:
        raise InputFileError(path, f"damaged xz stream ({error})", fix=CC100_FIX) from error


def _magic(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(6)


def _documents(path: Path) -> Iterator[list[str]]:
    """The non-empty lines of each document (a run of lines between empty ones)."""
    document: list[str] = []
    for line in _lines(path):
        if line.strip():
            document.append(line)
        elif document:
            yield document
            document = []
    if document:
        yield document


def text_bytes(path: str | Path) -> int:
    """UTF-8 bytes of the non-empty lines (with their newline) of a (possibly xz) text file."""
    return sum(len(line.encode("utf-8")) + 1 for line in _lines(Path(path)) if line.strip())


def sample_to_size(source: str | Path, target_bytes: int, out_path: str | Path, seed: int) -> int:
    """Write a uniform random subset of ``source``'s documents, about ``target_bytes`` of text, one
    non-empty line a line (the documents' separating empty lines left out, as in Wikipedia's text).

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
    with atomic_open(out_path) as out:
        for document in _documents(source):
            if rng.random() < keep:
                out.write("\n".join(document) + "\n")
                written += len(document)
    return written
