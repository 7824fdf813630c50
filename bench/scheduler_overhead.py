"""What Snakemake's own process costs while jobs run on 2 cores, with and without its job-rate
re-evaluation.

Snakemake 9 limits job starts to `--max-jobs-per-timespan` (default 100/1s). To honour the limit
its scheduler wakes itself once per timespan, and every wake-up re-selects among all ready jobs:
it re-evaluates their params and resources and stats every input file of every ready job. In
the demo, where hundreds of jobs wait for the two cores, that loop alone took about a quarter of
a core (py-spy: `update_input_sizes` and `exists` dominate). `--max-jobs-per-timespan 500/5s` keeps
the default's rate (100 a second) but wakes it every 5 s; a finished job still wakes it at once.
A longer timespan is no better: each wake-up is a non-daemon timer thread, and Snakemake does not
exit before the last one fires (with 10000/1h a finished run stayed waiting for its hour).

The bench runs a synthetic workflow (JOBS jobs that sleep, each with INPUTS input files of its own,
all ready at once, 2 cores) twice in this process's Python, with the default and with the demo's
setting, and prints the CPU seconds of Snakemake's own process (the jobs only sleep) and the
ratio.

    python bench/scheduler_overhead.py              # 120 jobs x 2 s, 20 inputs each
    python bench/scheduler_overhead.py --jobs 60 --seconds 1
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def demo_setting() -> list[str]:
    """The `--max-jobs-per-timespan` of the Makefile's demo target, so the bench measures it."""
    found = re.search(r"--max-jobs-per-timespan (\S+)", (REPO / "Makefile").read_text())
    if found is None:
        sys.exit("the Makefile's demo target sets no --max-jobs-per-timespan: update this bench")
    return ["--max-jobs-per-timespan", found[1]]


SNAKEFILE = textwrap.dedent(
    """
    JOBS = range(config["jobs"])
    INPUTS = range(config["inputs"])

    rule all:
        input: expand("out/{job}.txt", job=JOBS)

    rule inputs:
        output: expand("in/{job}_{i}.txt", job=JOBS, i=INPUTS)
        run:
            for path in output:
                open(path, "w").close()

    rule work:
        input: expand("in/{{job}}_{i}.txt", i=INPUTS)
        output: "out/{job}.txt"
        params: seconds=config["seconds"]
        shell: "sleep {params.seconds} && touch {output}"
    """
)


def snakemake_cpu_seconds(
    workdir: Path, config: list[str], extra: list[str]
) -> tuple[float, float]:
    """CPU seconds of the Snakemake process itself (children excluded) and the wall time."""
    command = [
        sys.executable, "-c",
        "import resource, sys\n"
        "from snakemake.cli import main\n"
        "try:\n    main()\n"
        "finally:\n"
        "    usage = resource.getrusage(resource.RUSAGE_SELF)\n"
        "    print(f'SELF_CPU {usage.ru_utime + usage.ru_stime}', file=sys.stderr)\n",
        "--cores", "2", "--scheduler", "greedy", "--quiet", "all", "--config", *config, *extra,
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"snakemake failed:\n{done.stderr[-2000:]}")
    line = next(x for x in done.stderr.splitlines() if x.startswith("SELF_CPU"))
    return float(line.split()[1]), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=120)
    parser.add_argument("--inputs", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    config = [f"jobs={args.jobs}", f"inputs={args.inputs}", f"seconds={args.seconds}"]
    results = {}
    demo = demo_setting()
    for name, extra in (("default 100/1s", []), (f"demo {demo[1]}", demo)):
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp)
            (workdir / "Snakefile").write_text(SNAKEFILE)
            cpu, wall = snakemake_cpu_seconds(workdir, config, extra)
        results[name] = cpu
        print(
            f"{name:>15}: Snakemake's own CPU {cpu:6.1f} s over {wall:6.1f} s wall"
            f" ({cpu / wall:.0%} of a core); {args.jobs} jobs x {args.seconds:g} s on 2 cores",
            flush=True,
        )
    default, ours = results.values()
    print(f"ratio own CPU, demo setting / default: {ours / default:.2f}")


if __name__ == "__main__":
    main()
