"""Digests of files and of the xling source: what downloads are checked by and what a finished
job's record is keyed by."""

from __future__ import annotations

import hashlib
from pathlib import Path

CHUNK = 1 << 20
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # src/xling


def digests(path: str | Path, algorithms: tuple[str, ...] = ("sha256",)) -> dict[str, str]:
    """Hex digests of a file by algorithm, all in one read (a dump of tens of GB is read once)."""
    hashes = {name: hashlib.new(name) for name in algorithms}
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            for digest in hashes.values():
                digest.update(block)
    return {name: digest.hexdigest() for name, digest in hashes.items()}


def source_digest() -> str:
    """sha256 of the xling package's Python source, file by file: what a job's key holds of the
    code that computes its outputs. The whole package, since training also runs code outside its
    own modules (the optimizer, the data readers, the tokenizer): a restore must never hand back
    outputs that the code as it is now would compute differently."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()
