"""When the SLURM job a trainer runs in reaches its time limit, so that it stops before, with a
checkpoint, on its own.

The profile's early signal (``--signal=TERM@600``) has to cross the job script's shells and
Snakemake's job step to reach the trainer, and a shell in between may die of it first (bash before
5.1 does, as RHEL 8's 4.4): a trainer that watches the clock itself depends on no signal. SLURM
says when the job ends in ``SLURM_JOB_END_TIME`` (recent versions), and otherwise through
``squeue`` and ``scontrol``; the end is read once, at the start (a time limit changed later by
``scontrol update`` reaches the trainer as the early signal only).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

END_TIME_VARIABLE = "SLURM_JOB_END_TIME"
JOB_ID_VARIABLE = "SLURM_JOB_ID"
QUERY_TIMEOUT_SECONDS = 30
_SCONTROL_END = re.compile(r"\bEndTime=(\S+)")


@dataclass(frozen=True)
class JobEnd:
    """The time (seconds since the epoch) a SLURM job ends, and where that was read."""

    time: float
    source: str

    def clock(self) -> str:
        return datetime.fromtimestamp(self.time).strftime("%Y-%m-%d %H:%M:%S")


def parse_end_time(text: str) -> float | None:
    """SLURM's end time, as seconds since the epoch or a local ``YYYY-MM-DDTHH:MM:SS``; None for
    none (``Unknown``, ``N/A``, ``NONE``, an unlimited job)."""
    text = text.strip()
    if text.isdigit():
        return float(text) if int(text) > 0 else None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def slurm_job_end(
    environ: Mapping[str, str] = os.environ, run: Callable = subprocess.run
) -> JobEnd | None:
    """When this process's SLURM job ends; None outside SLURM or where SLURM does not say."""
    if environ.get(END_TIME_VARIABLE):
        end = parse_end_time(environ[END_TIME_VARIABLE])
        if end is not None:
            return JobEnd(end, END_TIME_VARIABLE)
    job = environ.get(JOB_ID_VARIABLE)
    if not job:
        return None
    queries = (
        (["squeue", "-h", "-j", job, "-o", "%e"], _first_line),
        (["scontrol", "show", "job", job], _scontrol_end),
    )
    for command, extract in queries:
        output = _query(command, run)
        end = parse_end_time(extract(output)) if output else None
        if end is not None:
            return JobEnd(end, command[0])
    return None


def stop_time(
    end: JobEnd | None, margin_minutes: float, *, margin_key: str, more_time: str
) -> float | None:
    """When a trainer of a job ending at ``end`` stops: ``margin_minutes`` before (None: no end).

    Raises ValueError, naming ``margin_key`` and the setting that gives a job more time
    (``more_time``), if that moment has passed already: every attempt would stop before its
    first step.
    """
    if end is None:
        return None
    stop_at = end.time - 60 * margin_minutes
    now = time.time()
    if now >= stop_at:
        raise ValueError(
            f"this job has {(end.time - now) / 60:.1f} minutes left of its SLURM time limit (it "
            f"ends {end.clock()}, says {end.source}), no more than {margin_key} = "
            f"{margin_minutes:g}: it would stop before its first step. Raise {more_time} or lower "
            f"{margin_key}"
        )
    return stop_at


def _query(command: list[str], run: Callable) -> str | None:
    try:
        done = run(command, capture_output=True, text=True, timeout=QUERY_TIMEOUT_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _first_line(output: str) -> str:
    lines = output.strip().splitlines()
    return lines[0] if lines else ""


def _scontrol_end(output: str) -> str:
    found = _SCONTROL_END.search(output)
    return found.group(1) if found else ""


def process_start_time(stat: str = "/proc/self/stat", uptime: str = "/proc/uptime") -> float | None:
    """When this process started (seconds since the epoch), to 10 ms; None where ``/proc`` does
    not say (not Linux).

    The resume time of an attempt counts from here: Python's and torch's imports, reading the data
    and the checkpoint all come before the trainer's first line of code could take a time.
    """
    try:
        with open(stat, encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        with open(uptime, encoding="ascii") as handle:
            seconds_since_boot = float(handle.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    # Field 22 of stat (the 20th after the command's closing parenthesis): start, in clock ticks.
    started_after_boot = int(fields[19]) / ticks
    return time.time() - (seconds_since_boot - started_after_boot)
