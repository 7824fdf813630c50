"""A training job's log over all its attempts, kept in its work directory.

Snakemake deletes a job's log before every run of it: a retry after a time limit or a failure,
a rerun after Snakemake itself stopped. A training that runs as a chain of attempts (a
paper-study pretraining job runs for days, one partition time limit at a time) would then leave
in its log the last attempt only, and a job whose finished outputs were put back
(:mod:`xling.jobs.finished`) nothing of its training. So a trainer also appends its lines to
``<work_dir>/history.log``; each attempt first writes the earlier attempts' lines into its own
log; the history is kept with the finished outputs, and a restore writes it into the log too.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

HISTORY = "history.log"
FORMAT = "%(asctime)s %(message)s"  # as the workflow's scripts configure their logging


def history_path(work_dir: str | os.PathLike) -> Path:
    return Path(work_dir) / HISTORY


def append(path: Path, message: str) -> None:
    """Add one line; opened per line, so a kill loses at most the line being written."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(message.rstrip("\n") + "\n")


def replay(path: Path, header: str, stream: IO[str] | None = None) -> bool:
    """Write the lines of ``path`` to ``stream`` (stdout: the rule's log) between a header and a
    closing line; False, writing nothing, when there are none."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if not text.strip():
        return False
    stream = stream or sys.stdout
    stream.write(f"--- {header} ({path}) ---\n{text.rstrip()}\n--- end of {path.name} ---\n")
    stream.flush()
    return True


def replay_earlier_attempts(work_dir: str | os.PathLike, stream: IO[str] | None = None) -> bool:
    return replay(
        history_path(work_dir),
        "earlier attempts of this job logged (Snakemake deletes a job's log before each attempt)",
        stream,
    )


class HistoryHandler(logging.Handler):
    """A logging handler that appends each record to a job's history file."""

    def __init__(self, path: Path, level: int = logging.INFO):
        super().__init__(level)
        self.path = path
        self.setFormatter(logging.Formatter(FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            append(self.path, self.format(record))
        except Exception:  # logging must never stop a training
            self.handleError(record)


@contextlib.contextmanager
def recording(work_dir: str | os.PathLike, logger: str = "xling") -> Iterator[None]:
    """Within: the records of ``logger`` (and its children) are appended to the job's history,
    after the earlier attempts' lines were written to stdout."""
    replay_earlier_attempts(work_dir)
    handler = HistoryHandler(history_path(work_dir))
    target = logging.getLogger(logger)
    target.addHandler(handler)
    try:
        yield
    finally:
        target.removeHandler(handler)
