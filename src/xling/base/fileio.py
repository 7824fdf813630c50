"""Line-oriented file reading with precise errors, shared by every stage.

A "line" in this project ends at ``\\n`` only (never at a lone ``\\r``, ``\\x85`` or ``\\u2028``, as
Python's universal newlines would), so that line *i* of a file is line *i* for ``wc -l``, for
subword-nmt and for every stage that keeps files line-aligned. Atomic writing is
:mod:`xling.base.atomic`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import IO

from xling.base.errors import InputFileError

StrPath = str | os.PathLike[str]

_UTF8_FIX = "re-encode the file as UTF-8 (for example `iconv -f <encoding> -t utf-8`)"


def decode_line(raw: bytes, path: StrPath, line_number: int) -> str:
    """Decode one raw line (without its ``\\n``) as strict UTF-8, or raise naming file and line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        bad_bytes = raw[error.start : error.start + 4]
        raise InputFileError(
            path,
            f"not valid UTF-8 (byte {error.start} of the line: {bad_bytes!r})",
            line=line_number,
            fix=_UTF8_FIX,
        ) from None


def iter_lines(path: StrPath) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every line of a UTF-8 file, streaming.

    Line numbers start at 1. The trailing ``\\n`` (and a ``\\r`` before it) is removed; a UTF-8
    byte-order mark at the start is dropped. Undecodable bytes raise :class:`InputFileError`.
    """
    with open(path, "rb") as handle:
        for number, raw in raw_lines(handle):
            yield number, decode_line(raw, path, number)


def raw_lines(handle: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """``(line_number, bytes)`` of an open binary file, as :func:`iter_lines` reads it but not
    decoded: for readers that treat a line that is not UTF-8 otherwise than by stopping."""
    for number, raw in enumerate(handle, start=1):
        raw = raw.rstrip(b"\n").removesuffix(b"\r")
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        yield number, raw


def iter_text(paths: Iterable[StrPath]) -> Iterator[str]:
    """Yield the lines of several files in order, as one stream of text (no line numbers)."""
    for path in paths:
        for _, text in iter_lines(path):
            yield text


def count_lines(path: StrPath) -> int:
    """Number of lines (a last line without ``\\n`` counts), reading in large binary blocks."""
    count = 0
    last = b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 22):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def read_lines(path: StrPath, limit: int | None = None) -> list[str]:
    """The first ``limit`` lines of a UTF-8 file (all when None), read by :func:`iter_lines`."""
    lines = []
    for _, text in iter_lines(path):
        if limit is not None and len(lines) == limit:
            break
        lines.append(text)
    return lines


def require_file(path: StrPath, what: str, fix: str) -> None:
    """Stop with the path, what the file is and where to get it, before reading begins."""
    if not os.path.isfile(path):
        raise InputFileError(path, f"missing: {what}", fix=fix)


def file_stamp(path: StrPath) -> list:
    """What identifies a file's content for resuming a job without reading it: its resolved
    path, size and modification time (ns)."""
    info = os.stat(path)
    return [os.path.realpath(path), info.st_size, info.st_mtime_ns]
