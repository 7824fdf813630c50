"""The life of a training job in its work directory, written once for every trainer.

Pretraining, fine-tuning and the contextual transfer (a run and its sweep over layers) wrap their
own work in the same steps:

1. lock the work directory (:mod:`xling.jobs.worklock`): a second trainer on it fails at once,
   before it reads anything;
2. write the earlier attempts' lines into this attempt's log, and add this attempt's to the job's
   history (:mod:`xling.jobs.joblog`): Snakemake empties the rule's log before each attempt;
3. put back the outputs of the same job finished before (:mod:`xling.jobs.finished`) instead of
   training again;
4. the caller's own work: train (resuming from the work directory), then write the outputs, each
   atomically;
5. keep the outputs restorable in place of the resumable state, and delete the rest; the work
   directory itself goes with the lock if nothing is left in it.

Each entry point takes the steps it needs: a job that restores nothing (the transfer, whose sweep
keeps its finished layers itself) skips 3 and keeps nothing in 5. Under ``torchrun`` only process
0 owns the work directory (it alone writes there); the other processes learn its outcomes (the
lock, the restore) through ``agree``, so that the whole job stops or restores together.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from xling.jobs import finished, joblog
from xling.jobs.worklock import WorkDirBusyError, WorkDirLock


def _alone(value: Any) -> Any:
    """What every process agrees on in a job of one process: its own value."""
    return value


class JobLifecycle:
    """``with JobLifecycle(work_dir, "fine-tuning") as life:`` locks ``work_dir`` and records the
    job's history; within, ``life.restore(outputs, key)`` puts a finished job's outputs back and
    ``life.clean_up()`` ends a job that wrote its outputs.

    ``log`` receives the restore's messages. ``record`` names the logger whose records join the
    history (None: the caller appends its lines itself, :attr:`history`). ``owner``: whether this
    process owns the work directory (process 0 of a distributed job); ``agree(value)`` returns
    process 0's value on every process.
    """

    def __init__(
        self,
        work_dir: str | os.PathLike,
        job: str,
        *,
        log: Callable[[str], None] = print,
        record: str | None = "xling",
        owner: bool = True,
        agree: Callable[[Any], Any] = _alone,
    ):
        self.work_dir, self.job, self.log = Path(work_dir), job, log
        self.record, self.owner, self.agree = record, owner, agree
        self.lock: WorkDirLock | None = None
        self._handler: logging.Handler | None = None
        self._kept: tuple[finished.Outputs, Mapping[str, Any]] | None = None

    @property
    def history(self) -> Path | None:
        """The job's history file (None on processes that do not own the work directory)."""
        return joblog.history_path(self.work_dir) if self.owner else None

    def __enter__(self) -> JobLifecycle:
        self._lock()
        if self.owner:
            try:
                joblog.replay_earlier_attempts(self.work_dir)
                if self.record is not None:
                    self._handler = joblog.HistoryHandler(joblog.history_path(self.work_dir))
                    logging.getLogger(self.record).addHandler(self._handler)
            except BaseException:
                self._release()
                raise
        return self

    def __exit__(self, *exc) -> None:
        self._release()

    def _lock(self) -> None:
        """The owner locks; every process stops if it cannot.

        Only the owner locks, because it alone writes the work directory: its lock is what keeps
        two jobs apart. The other processes of the same job would contend for that same lock (on
        one node they exclude each other), and on other nodes ``flock`` over a network file system
        is only as good as that file system. They learn the owner's outcome instead, so that the
        whole job stops at once rather than waiting in its first collective.
        """
        failure, refusal = None, None
        if self.owner:
            lock = WorkDirLock(self.work_dir, self.job)
            try:
                lock.acquire()
                self.lock = lock
            except Exception as error:
                failure, refusal = error, str(error)
        refusal = self.agree(refusal)
        if failure is not None:
            raise failure
        if refusal is not None:
            raise WorkDirBusyError(f"process 0 could not lock the work directory: {refusal}")

    def _release(self) -> None:
        if self._handler is not None:
            logging.getLogger(self.record).removeHandler(self._handler)
            self._handler = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def restore(self, outputs: finished.Outputs, key: Mapping[str, Any] | None) -> bool:
        """Put back the outputs kept by the same job (the same ``key``) and say so on every
        process; they are then kept again by :meth:`clean_up` (``key``: the owner's only)."""
        self._kept = (outputs, key) if self.owner else None
        restored = self.owner and finished.restore(self.work_dir, outputs, key, self.log)
        return self.agree(restored)

    def clear(self) -> None:
        """Delete everything in the work directory but the lock (the owner's fresh start)."""
        if self.lock is not None:
            self.lock.clear()

    def clean_up(self, first: Iterable[str | os.PathLike] = ()) -> None:
        """End a job whose outputs are written: keep them restorable (if offered to
        :meth:`restore`), delete the files in ``first``, then everything else but the kept outputs.

        ``first`` is the state that vouches for the rest (a checkpoint naming its best model, a
        stamp naming the inputs of finished parts): a kill inside the clean-up must leave files
        that a rerun ignores, never a state that names files already gone.
        """
        if not self.owner:
            return
        if self._kept is not None:
            finished.keep(self.work_dir, *self._kept)
        for path in first:
            Path(path).unlink(missing_ok=True)
        if self.lock is not None:
            self.lock.clear(keep=(finished.FOLDER,))
