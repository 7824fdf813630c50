"""Atomic writes: a reader (or a rerun after a kill) never sees a half-written output.

A write goes to ``.<name>.<random>.part`` next to its path. A kill (SIGKILL, or a SIGTERM with no
handler) leaves that part behind; the next write of the same path deletes it first, since one
job owns each path. (Resumable downloads use ``<name>.part``, which this never touches.)
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

# mkstemp/mkdtemp create owner-only files; outputs get the usual permissions (umask) instead.
_UMASK = os.umask(0)
os.umask(_UMASK)


def remove_stale_parts(path: Path) -> None:
    """Delete the temporary files and folders that killed writes of ``path`` left (tempfile's
    8-character names, so that ``a``'s parts never match those of ``a.b``)."""
    own = re.compile(re.escape(f".{path.name}.") + r"[a-z0-9_]{8}\.part")
    with contextlib.suppress(FileNotFoundError), os.scandir(path.parent) as entries:
        stale = [entry.path for entry in entries if own.fullmatch(entry.name)]
    for part in stale:
        _remove(part)


def remove_parts(folder: str | os.PathLike, prefix: str = "") -> None:
    """Delete every part in ``folder`` of the paths whose names start with ``prefix``, for a
    folder whose only writer is the caller (a trainer's locked work directory), where the paths
    change from write to write (one checkpoint per step)."""
    for part in Path(folder).glob(f".{glob.escape(prefix)}*.part"):
        _remove(part)


def _remove(part: str | os.PathLike) -> None:
    if os.path.isdir(part) and not os.path.islink(part):
        shutil.rmtree(part, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part)


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8"
) -> Iterator[IO]:
    """Open a temporary file next to ``path``; on success it replaces ``path`` in one rename.

    Text modes write ``\n`` line ends; on any exception the temporary file is deleted.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_parts(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_UMASK)
    os.close(fd)
    try:
        text = "b" not in mode
        with open(
            tmp, mode, encoding=encoding if text else None, newline="\n" if text else None
        ) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: str | os.PathLike, obj: Any) -> None:
    with atomic_open(path) as handle:
        json.dump(obj, handle, indent=2, sort_keys=True)
        handle.write("\n")


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Build a directory under a temporary name; it appears at ``path`` only when complete.

    An existing ``path`` is replaced (moved aside, then deleted), so a rerun overwrites cleanly.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_parts(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_UMASK)
    try:
        yield tmp
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(path, old)
            shutil.rmtree(old, ignore_errors=True)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def atomic_write(path: str | os.PathLike, chunks: Iterable[str]) -> None:
    """Write text chunks to ``path`` through :func:`atomic_open`: a reader never sees a half file,
    and a generator of chunks streams (memory holds one chunk)."""
    with atomic_open(path) as handle:
        handle.writelines(chunks)
