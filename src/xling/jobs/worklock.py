"""One trainer per work directory: an exclusive ``flock`` on ``trainer.lock`` inside it.

A killed Snakemake leaves its training process running, and a rerun would start a second trainer
that reads and overwrites the same checkpoints. The second one now fails at once, naming the
holder. ``flock`` locks belong to the open file, so the kernel drops them when the holder dies
(SIGKILL, OOM, node reboot): a crash never leaves a stale lock that blocks the rerun, and the
file's content (PID, host, start time) is only informative.

A file system without ``flock`` (Lustre mounted without ``-o flock``, for one) cannot give this
guarantee: the trainer then runs unlocked, with a warning, rather than not at all.

The lock file is removed on release. A process that opened it just before and locks it just after
would then hold a lock on a deleted file, so the holder checks, once locked, that the path still
names the file it locked, and starts over otherwise.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import shutil
import socket
import time
from collections.abc import Iterable
from pathlib import Path

LOCK_NAME = "trainer.lock"
_NO_FLOCK = {errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOLCK}  # what such file systems answer
log = logging.getLogger(__name__)


class WorkDirBusyError(RuntimeError):
    """Another live process holds the work directory's lock."""


class WorkDirLock:
    """Exclusive lock on ``work_dir`` (created if missing) for one trainer's whole run.

    ``with WorkDirLock(work_dir, "pretraining"):`` ... On release the lock file goes, and so does
    ``work_dir`` if nothing else is left in it.
    """

    def __init__(self, work_dir: str | os.PathLike, job: str):
        self.work_dir, self.job = Path(work_dir), job
        self.path = self.work_dir / LOCK_NAME
        self._fd: int | None = None

    def __enter__(self) -> WorkDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock or raise :class:`WorkDirBusyError` at once (never waits)."""
        while self._fd is None:
            self.work_dir.mkdir(parents=True, exist_ok=True)
            try:
                # O_CLOEXEC: a subprocess the trainer starts must not keep the lock alive after it.
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except FileNotFoundError:
                continue  # the directory was removed by a holder releasing it: start over
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise WorkDirBusyError(self._busy_message(holder)) from None
            except OSError as error:
                os.close(fd)
                if error.errno not in _NO_FLOCK:
                    raise
                log.warning(
                    "%s: this file system does not support flock (%s), so nothing stops a second "
                    "trainer on this directory; make sure only one runs",
                    self.work_dir,
                    error.strerror,
                )
                self.path.unlink(missing_ok=True)  # it means nothing here; leave no trace
                return
            if _names_open_file(self.path, fd):
                self._fd = fd
            else:
                os.close(fd)  # locked a file its holder had just deleted: lock the current one
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "job": self.job}
        holder["since"] = time.strftime("%Y-%m-%d %H:%M:%S %z")
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, (json.dumps(holder) + "\n").encode(), 0)
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        """Delete the lock file, unlock, and remove ``work_dir`` if it is then empty."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if _names_open_file(self.path, fd):
                self.path.unlink()
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):
            self.work_dir.rmdir()  # only if empty: a kept work directory stays

    def clear(self, keep: Iterable[str] = ()) -> None:
        """Delete everything in ``work_dir`` but the lock file and the entries named in ``keep``
        (the holder's own cleanup)."""
        kept = {LOCK_NAME, *keep}
        for child in self.work_dir.iterdir():
            if child.name in kept:
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)

    def _busy_message(self, holder: dict) -> str:
        pid, host = holder.get("pid", "?"), holder.get("host", "?")
        since = f", since {holder['since']}" if "since" in holder else ""
        job = holder.get("job", "a trainer")
        return (
            f"{self.work_dir} is in use by {job} (PID {pid} on host {host}{since}), probably "
            f"left running by a killed workflow. Wait for it to finish, or stop it (on {host}: "
            f"kill {pid}) and rerun: the rerun resumes from its checkpoint. Do not delete "
            f"{self.path} by hand: the lock goes away by itself when that process ends"
        )


def _names_open_file(path: Path, fd: int) -> bool:
    """Whether ``path`` is still the file open as ``fd`` (not deleted or replaced meanwhile)."""
    try:
        on_disk, opened = os.stat(path), os.fstat(fd)
    except FileNotFoundError:
        return False
    return (on_disk.st_dev, on_disk.st_ino) == (opened.st_dev, opened.st_ino)


def _read_holder(fd: int) -> dict:
    """What the holder wrote into the lock file (empty if it has not written yet)."""
    try:
        holder = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}
