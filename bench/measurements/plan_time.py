"""How long the paper study takes to plan: reading the workflow, building its DAG, and the dry run.

    python bench/measurements/plan_time.py    # the paper study, all targets, the SLURM profile
    python bench/measurements/plan_time.py --target results/paper/tables/table1.md

Runs `snakemake --profile slurm -n TARGET` in this process through Snakemake's own command-line
entry, timing its phases by wrapping Snakemake's `Workflow._build_dag` (an internal method: if a
Snakemake release renames it, this bench says so): before the DAG (imports, profile, Snakefile,
config validation), the DAG build itself, and the dry run's scheduling and printing of every job.
Prints each phase and the job count; the ratio is the DAG build's share of the whole dry run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", default="all")
    args = parser.parse_args()

    start = time.perf_counter()
    from snakemake import cli
    from snakemake.workflow import Workflow

    if not hasattr(Workflow, "_build_dag"):
        sys.exit(f"this Snakemake has no Workflow._build_dag: update {Path(__file__).name}")
    marks: dict[str, float] = {}
    build = Workflow._build_dag

    def timed_build(self, *a, **kw):
        marks.setdefault("dag_start", time.perf_counter())
        result = build(self, *a, **kw)
        marks["dag_end"] = time.perf_counter()
        return result

    Workflow._build_dag = timed_build
    os.chdir(REPO)
    out, err = io.StringIO(), io.StringIO()
    cpu = time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            # the profile reads sys.argv to tell a dry run (it then needs no conda)
            sys.argv = ["snakemake", "--profile", "slurm", "-n", args.target]
            cli.main(sys.argv[1:])
        except SystemExit as code:
            if code.code not in (0, None):
                print(err.getvalue()[-3000:], file=sys.__stderr__)
                raise
    end, cpu = time.perf_counter(), time.process_time() - cpu
    total = re.search(r"^total\s+(\d+)$", out.getvalue() + err.getvalue(), re.MULTILINE)
    jobs = int(total.group(1)) if total else 0
    before, dag = marks["dag_start"] - start, marks["dag_end"] - marks["dag_start"]
    after = end - marks["dag_end"]
    print(f"plan of {args.target!r}: {jobs} jobs, {end - start:.1f} s wall ({cpu:.1f} s CPU)")
    print(f"  workflow and config read: {before:5.1f} s")
    print(f"  DAG build:                {dag:5.1f} s  ({1000 * dag / max(jobs, 1):.2f} ms a job)")
    print(f"  dry-run scheduling, print:{after:5.1f} s")
    print(f"ratio DAG build / whole dry run: {dag / (end - start):.2f}")


if __name__ == "__main__":
    main()
