"""A Snakemake run's jobs, read from the run's own log (``.snakemake/log/*.snakemake.log``).

For each job that finished: its rule, when it started and finished (the log's one-second
stamps), its threads and the files it read and wrote. From these, which jobs waited on which
(a job reads a file another job wrote), the longest chain of dependent jobs, and the wall time
the same jobs would take on more cores (:func:`projected_minutes`): a projection from measured
job times, which assumes each job takes as long on the other machine's cores as on this run's.
Used by ``bench/demo_timing.py``.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
START = re.compile(r"^(?:local)?rule (\w+):$")
FILES = re.compile(r"^\s+(input|output): (.*)$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
THREADS = re.compile(r"^\s+threads: (\d+)$")
FINISH = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")


@dataclass(frozen=True)
class Job:
    jobid: str
    rule: str
    start: datetime
    end: datetime
    threads: int
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


def read_jobs(log: str | Path) -> list[Job]:
    """Every job the log saw finish, in the order they finished."""
    started: dict[str, dict] = {}
    finished: list[Job] = []
    stamp = block = last = None
    for line in Path(log).read_text(errors="replace").splitlines():
        if found := STAMP.match(line):
            stamp = datetime.strptime(" ".join(found.group(1).split()), "%a %b %d %H:%M:%S %Y")
        elif found := START.match(line):
            block = {"rule": found.group(1), "start": stamp, "input": (), "output": ()}
        elif (found := FILES.match(line)) and block is not None:
            block[found.group(1)] = tuple(found.group(2).split(", "))
        elif (found := JOBID.match(line)) and block is not None and stamp is not None:
            started[found.group(1)] = block | {"threads": 1}  # printed only when more than 1
            last, block = found.group(1), None
        elif (found := THREADS.match(line)) and last in started:
            started[last]["threads"] = int(found.group(1))
        elif (found := FINISH.match(line)) and stamp is not None and found.group(1) in started:
            job = started.pop(found.group(1))
            files = (job["input"], job["output"])
            finished.append(
                Job(found.group(1), job["rule"], job["start"], stamp, job["threads"], *files)
            )
    return finished


def dependencies(jobs: Sequence[Job]) -> dict[str, set[str]]:
    """jobid -> the jobids whose outputs it reads (inputs no job of the log wrote: none)."""
    writer = {path: job.jobid for job in jobs for path in job.outputs}
    needs = {}
    for job in jobs:
        needs[job.jobid] = {writer[p] for p in job.inputs if writer.get(p, job.jobid) != job.jobid}
    return needs


def _users(needs: dict[str, set[str]]) -> dict[str, list[str]]:
    """jobid -> the jobids that read its outputs."""
    users: dict[str, list[str]] = {jobid: [] for jobid in needs}
    for jobid, before in needs.items():
        for other in before:
            users[other].append(jobid)
    return users


def _chains(jobs: Sequence[Job], users: dict[str, list[str]]) -> dict[str, float]:
    """jobid -> seconds of the longest chain of dependent jobs that starts with it (``users``:
    :func:`_users`)."""
    seconds = {job.jobid: job.seconds for job in jobs}
    chain: dict[str, float] = {}

    def longest(jobid: str) -> float:  # iterative depth-first, so deep DAGs need no recursion
        stack = [jobid]
        while stack:
            top = stack[-1]
            missing = [u for u in users[top] if u not in chain]
            if missing:
                stack.extend(missing)
                continue
            chain[top] = seconds[top] + max((chain[u] for u in users[top]), default=0.0)
            stack.pop()
        return chain[jobid]

    for job in jobs:
        longest(job.jobid)
    return chain


def critical_path(jobs: Sequence[Job]) -> list[Job]:
    """The longest chain of jobs each of which reads an output of the one before."""
    if not jobs:
        return []
    users = _users(dependencies(jobs))
    chain = _chains(jobs, users)
    by_id = {job.jobid: job for job in jobs}
    path = [max(jobs, key=lambda job: chain[job.jobid])]
    while users[path[-1].jobid]:
        path.append(by_id[max(users[path[-1].jobid], key=lambda u: chain[u])])
    return path


def projected_minutes(jobs: Sequence[Job], cores: int) -> float:
    """Wall minutes of the same jobs on ``cores`` cores: whenever cores are free, start the ready
    jobs that fit, the one heading the longest chain of dependent jobs first (a job asking more
    threads than ``cores`` gets them all)."""
    if cores < 1:
        raise ValueError(f"cores must be at least 1, not {cores}")
    needs = dependencies(jobs)
    users = _users(needs)
    chain = _chains(jobs, users)
    waiting = {jobid: len(before) for jobid, before in needs.items()}
    by_id = {job.jobid: job for job in jobs}
    ready = [jobid for jobid, count in waiting.items() if count == 0]
    running: list[tuple[float, str]] = []  # (finish time, jobid)
    now, free = 0.0, cores
    done = 0
    while done < len(jobs):
        reserved = None  # when the first job that does not fit will have its cores
        for jobid in sorted(ready, key=lambda j: -chain[j]):
            job = by_id[jobid]
            threads = min(job.threads, cores)
            if threads > free:
                if reserved is None:
                    reserved = _cores_free_at(running, by_id, cores, free, threads)
                continue
            if reserved is not None and now + job.seconds > reserved:
                continue  # it would delay the job that waits for more cores (EASY backfill)
            free -= threads
            ready.remove(jobid)
            heapq.heappush(running, (now + job.seconds, jobid))
        now, jobid = heapq.heappop(running)
        free += min(by_id[jobid].threads, cores)
        done += 1
        for other in users[jobid]:
            waiting[other] -= 1
            if waiting[other] == 0:
                ready.append(other)
    return now / 60


def _cores_free_at(running, by_id, cores: int, free: int, threads: int) -> float:
    """When ``threads`` cores will be free if the running jobs finish as planned."""
    for end, jobid in sorted(running):
        free += min(by_id[jobid].threads, cores)
        if free >= threads:
            return end
    raise AssertionError("a job asks for more cores than there are")  # threads are capped
