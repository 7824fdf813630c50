"""Where a run's time went, per stage and rule, read from Snakemake's own log of the run.

    python bench/demo_timing.py                      # the newest log under .snakemake/log/
    python bench/demo_timing.py .snakemake/log/<run>.snakemake.log
    python bench/demo_timing.py demo.log --results results/demo   # a copy of Snakemake's output

For each stage (the rule's file under workflow/rules/) and rule: jobs, the sum of the jobs' wall
times (core-busy time at one job a core), the longest job, and the stage's span from its first
start to its last finish. Jobs run side by side, so the sums add up to more than the run's wall
time; the last lines give that, how long cores stood idle (from each job's threads, at
``--cores``): where the run waited on a job rather than ran out of work, the longest chain of
dependent jobs, and the same jobs projected on 4, 8 and 16 cores (``xling.report.runlog``: each job
as long as in this run, the job heading the longest chain started first). Used to budget the demo
(2 cores, 30 minutes) and to say what `make demo CORES=N` would take.

The same jobs run 10 to 20 % faster or slower from day to day on the same 2-core machine, so
the last line also gives the machine's speed during the run: the median training throughput of
its pretraining jobs (their logs under ``results/<study>/logs/pretrain/``), which compares runs
of the same settings (the pretraining batch included: 21 streams a step read about 11 % fewer
tokens/s than 42 on the same machine), and the product of minutes and that speed: a measure of
the settings' cost that the machine's day does not move.
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from xling.report.runlog import Job, critical_path, projected_minutes, read_jobs

REPO = Path(__file__).resolve().parents[1]
THROUGHPUT = re.compile(r"^step (\d+)/\d+ \|.*\| ([\d,]+) tok/s \|")
PROJECTED_CORES = (4, 8, 16)


def rule_stages() -> dict[str, str]:
    """Rule name -> its stage (the .smk file that defines it)."""
    stages = {}
    for path in sorted((REPO / "workflow/rules").glob("*.smk")):
        for name in re.findall(r"^\s*rule (\w+):", path.read_text(), re.MULTILINE):
            stages[name] = path.stem
    return stages


def idle_core_seconds(jobs: list[Job], cores: int) -> int:
    """Core-seconds with no job on them between the first start and the last finish (the log's
    one-second stamps; a job asking more threads than ``cores`` counts as ``cores``)."""
    first = min(job.start for job in jobs)
    seconds = int((max(job.end for job in jobs) - first).total_seconds())
    busy = [0] * seconds
    for job in jobs:
        start, stop = ((moment - first).total_seconds() for moment in (job.start, job.end))
        for second in range(int(start), int(stop)):
            busy[second] += min(job.threads, cores)
    return sum(max(0, cores - used) for used in busy)


def pretraining_throughput(log_dir: Path) -> float | None:
    """Median tokens/s of the progress lines of every pretraining log in ``log_dir`` (step 1,
    which includes start-up, left out); None without any."""
    rates = []
    for path in sorted(log_dir.glob("*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if (found := THROUGHPUT.match(line)) and found.group(1) != "1":
                rates.append(float(found.group(2).replace(",", "")))
    return statistics.median(rates) if rates else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, nargs="?", help="default: the newest run's log")
    parser.add_argument(
        "--study", default="demo", help="the study whose pretraining logs give the throughput"
    )
    parser.add_argument(
        "--results",
        type=Path,
        help="the study's results folder (default: results/<study> beside the log's .snakemake)",
    )
    parser.add_argument("--cores", type=int, default=2, help="the run's --cores (default 2)")
    args = parser.parse_args()
    if args.log is None:
        logs = sorted((REPO / ".snakemake/log").glob("*.snakemake.log"), reverse=True)
        found = ((log, read_jobs(log)) for log in logs)
        args.log, jobs = next(((log, jobs) for log, jobs in found if jobs), (None, []))
        if args.log is None:  # dry runs finish no job
            print("No Snakemake log of a run under .snakemake/log yet: run `make demo` first.")
            return
    else:
        jobs = read_jobs(args.log)
    if not jobs:
        raise SystemExit(f"{args.log}: no finished job found")
    print(f"{args.log}:")
    stages = rule_stages()
    by_rule: dict[tuple[str, str], list[tuple[datetime, datetime]]] = defaultdict(list)
    for job in jobs:
        by_rule[(stages.get(job.rule, "?"), job.rule)].append((job.start, job.end))
    print(f"{'stage':<12}{'rule':<32}{'jobs':>5}{'sum min':>9}{'max min':>9}{'span min':>9}")
    for stage in dict.fromkeys(stage for stage, _ in sorted(by_rule)):
        spans = []
        for (rule_stage, rule), times in sorted(by_rule.items()):
            if rule_stage != stage:
                continue
            spans += times
            total = sum((e - b).total_seconds() for b, e in times) / 60
            longest = max((e - b).total_seconds() for b, e in times) / 60
            print(f"{stage:<12}{rule:<32}{len(times):>5}{total:>9.1f}{longest:>9.1f}")
        span = (max(e for _, e in spans) - min(b for b, _ in spans)).total_seconds() / 60
        print(f"{'':<12}{'= ' + stage:<32}{len(spans):>5}{'':>18}{span:>9.1f}")
    wall = (max(job.end for job in jobs) - min(job.start for job in jobs)).total_seconds() / 60
    print(f"{len(jobs)} jobs, {wall:.1f} minutes from the first start to the last finish")
    total = sum(job.seconds for job in jobs) / 60
    idle = idle_core_seconds(jobs, args.cores)
    print(f"jobs' wall times in all: {total:.1f} minutes; cores idle: {idle} core-seconds")
    print_projection(jobs, args.cores, wall)
    log_dir = _results(args) / "logs" / "pretrain"
    rate = pretraining_throughput(log_dir)
    if rate is not None:
        print(f"machine speed: pretraining at {rate:,.0f} tokens/s a job (median, {log_dir})")
        # The run's minutes scale inversely with the machine's speed: their product is what
        # the settings cost, and the speed at which they fit the demo's 30 minutes follows.
        print(
            f"minutes x tokens/s: {wall * rate:,.0f}, so these settings fit 30 minutes (first "
            f"job to last) at {wall * rate / 30:,.0f} tokens/s or more"
        )
    else:
        print(f"machine speed: no pretraining log under {log_dir} (see --results)")


def print_projection(jobs, cores: int, wall: float) -> None:
    """The longest chain of dependent jobs, and the same jobs on more cores."""
    chain = critical_path(jobs)
    minutes = sum(job.seconds for job in chain) / 60
    rules = " -> ".join(dict.fromkeys(job.rule for job in chain if job.rule != "all"))
    print(f"longest chain of dependent jobs: {minutes:.1f} minutes ({rules})")
    # Each job as long as in this run: another machine's cores may be faster or slower, and
    # jobs side by side may slow each other (shared memory bandwidth) more than on 2 cores.
    here = projected_minutes(jobs, cores)
    more = ", ".join(f"{n} cores {projected_minutes(jobs, n):.1f}" for n in PROJECTED_CORES)
    print(
        f"projected from these job times: {more} minutes (the projection gives {here:.1f} for "
        f"this run's {cores}, against the {wall:.1f} measured)"
    )


def _results(args) -> Path:
    """The study's results folder: given, or beside the log's .snakemake folder, or this
    repository's."""
    if args.results is not None:
        return args.results
    log = args.log.resolve()
    if log.parent.name == "log" and log.parent.parent.name == ".snakemake":
        return log.parents[2] / "results" / args.study
    return REPO / "results" / args.study


if __name__ == "__main__":
    main()
