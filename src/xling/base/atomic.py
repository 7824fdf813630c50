"""Atomic writes: a reader (or a rerun after a kill) never sees a half-written output.

A write goes to ``.<name>.<random>.part`` next to its path. A kill (SIGKILL, or a SIGTERM with no
handler) leaves that part behind; the next write of the same path deletes it first, since one
job owns each path. (Resumable downloads use ``<name>.part``, which this never touches.)

What a rename publishes is on disk before it: every file of the part (and every folder of a
directory's part) is fsynced first, and the folder holding the path after it, so that a node's
crash right after a write leaves the old version or the new one, never a name for empty or
half-flushed files (a best model a checkpoint names, a model directory a finished job keeps).
"""

from __future__ import annotations

import contextlib
import errno
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


def fsync_file(path: str | os.PathLike) -> None:
    """Flush a file written (or linked, or copied) here to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_directory(path: str | os.PathLike) -> None:
    """Flush a folder's entries (the names created, renamed or deleted in it) to the disk.

    A file system that cannot sync a folder (EINVAL: some network and FUSE ones, which commit
    their metadata themselves) is left to do so.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno != errno.EINVAL:
            raise
    finally:
        os.close(fd)


def fsync_tree(root: str | os.PathLike) -> None:
    """:func:`fsync_file` every file under ``root`` (links aside: their targets are not ours),
    then :func:`fsync_directory` every folder, the deepest first."""
    for folder, _, files in os.walk(root, topdown=False):
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                fsync_file(path)
        fsync_directory(folder)


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
        fsync_directory(path.parent)
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
    Every file and folder built is on disk before the rename, and the rename after it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_parts(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_UMASK)
    try:
        yield tmp
        fsync_tree(tmp)
        old = None
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(path, old)
        os.replace(tmp, path)
        fsync_directory(path.parent)
        if old is not None:  # only once the new one is in place
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def atomic_write(path: str | os.PathLike, chunks: Iterable[str]) -> None:
    """Write text chunks to ``path`` through :func:`atomic_open`: a reader never sees a half file,
    and a generator of chunks streams (memory holds one chunk)."""
    with atomic_open(path) as handle:
        handle.writelines(chunks)
