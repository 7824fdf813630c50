"""What a study asks of the cluster, per stage, before anything is submitted.

    python -m xling.cluster.plan                                  # the paper study, profile slurm
    python -m xling.cluster.plan --configfile config/demo.yaml
    python -m xling.cluster.plan results/paper/tables/table1.md   # one table's share
    python -m xling.cluster.plan --configfile config/demo.yaml -- results/demo/tables/table1.md

The jobs and their resources come from Snakemake's own dry run with the SLURM profile applied (so
the numbers are what sbatch will be asked for), and only jobs that still have to run count. GPU
hours are GPUs x wall time asked at the first attempt; a retry asks for more, and the worst case
(every job using every retry) is printed too. Jobs of local rules run on the submit host.
Pretraining jobs, which ask for a fixed wall time per attempt whatever they need, also get their
expected use per GPU type from the FLOP model (xling.cluster.expected).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from xling.cluster.expected import GPU_TYPES, MFU_RANGE, Expected, format_range
from xling.cluster.gpus import gpus_of

REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class JobRequest:
    """One job's ask: GPUs and CPU cores in all, and wall-time minutes at attempt 1, 2, ..."""

    rule: str
    stage: str
    gpus: int
    cpus: int
    minutes: tuple[float, ...]
    partition: str = ""
    local: bool = False
    expected: Expected | None = None  # pretraining: expected wall hours per GPU type


def cpus_of(resources: Mapping[str, object], threads: int) -> int:
    per_task = resources.get("cpus_per_task")
    per_task = int(per_task) if isinstance(per_task, int) and per_task > 0 else threads
    return per_task * int(resources.get("nodes") or 1)


@dataclass
class StageTotals:
    jobs: int = 0
    gpu_jobs: int = 0
    local_jobs: int = 0
    gpu_hours: float = 0.0
    gpu_hours_all_retries: float = 0.0
    cpu_hours: float = 0.0


def totals_by(requests: Iterable[JobRequest], key) -> dict[str, StageTotals]:
    """Sum of the requests grouped by ``key(request)``, in order of first appearance."""
    totals: dict[str, StageTotals] = defaultdict(StageTotals)
    for request in requests:
        total = totals[key(request)]
        total.jobs += 1
        if request.local:
            total.local_jobs += 1
            continue
        total.gpu_jobs += request.gpus > 0
        total.gpu_hours += request.gpus * request.minutes[0] / 60
        total.gpu_hours_all_retries += request.gpus * sum(request.minutes) / 60
        total.cpu_hours += request.cpus * request.minutes[0] / 60
    return dict(totals)


STAGE_ORDER = (
    "acquire", "preprocess", "vocab", "pretrain", "finetune", "analysis", "report", "muller",
)  # fmt: skip


def format_plan(requests: Sequence[JobRequest], retries: int) -> str:
    """A table per stage and rule, and the totals."""
    order = {stage: i for i, stage in enumerate(STAGE_ORDER)}
    requests = sorted(requests, key=lambda r: (order.get(r.stage, len(order)), r.stage, r.rule))
    by_rule = totals_by(requests, lambda r: (r.stage, r.rule))
    by_stage = totals_by(requests, lambda r: r.stage)
    header = f"{'stage':<11}{'rule':<22}{'jobs':>7}{'local':>7}{'GPU jobs':>10}{'GPU-hours':>12}"
    header += f"{'CPU core-hours':>16}"
    lines = [header, "-" * len(header)]

    def row(stage: str, rule: str, t: StageTotals) -> str:
        return (
            f"{stage:<11}{rule:<22}{t.jobs:>7}{t.local_jobs:>7}{t.gpu_jobs:>10}"
            f"{t.gpu_hours:>12,.1f}{t.cpu_hours:>16,.1f}"
        )

    for stage, stage_total in by_stage.items():
        for (rule_stage, rule), total in by_rule.items():
            if rule_stage == stage:
                lines.append(row(stage, rule, total))
        if sum(1 for s, _ in by_rule if s == stage) > 1:
            lines.append(row("", f"= {stage}", stage_total))
    overall = totals_by(requests, lambda r: "all")
    total = overall.get("all", StageTotals())
    lines += ["-" * len(header), row("total", "", total)]
    lines.append(
        f"GPU-hours asked for at the first attempt: {total.gpu_hours:,.1f}; if every job used its "
        f"{retries} retries (pretraining: config pretrain.attempts): "
        f"{total.gpu_hours_all_retries:,.1f}."
    )
    lines += format_expected(requests)
    partitions = sorted({r.partition for r in requests if r.partition and not r.local})
    if partitions:
        lines.append(f"Partitions: {', '.join(partitions)}. {check_partitions(partitions)}")
    return "\n".join(lines)


def format_expected(requests: Sequence[JobRequest]) -> list[str]:
    """Expected GPU-hours of the pretraining jobs per GPU type, beside the hours asked for."""
    rules: dict[str, list[JobRequest]] = defaultdict(list)
    for request in requests:
        if request.expected is not None and not request.local:
            rules[request.rule].append(request)
    if not rules:
        return []
    low, high = MFU_RANGE
    header = f"{'rule':<22}{'jobs':>6}{'asked GPU-h':>13}" + "".join(
        f"{gpu + ' GPU-h':>18}" for gpu in GPU_TYPES
    )
    lines = [
        "",
        f"Pretraining: expected use by the FLOP model at MFU {low:.2f} to {high:.2f} "
        "(xling.cluster.expected), beside what is asked for at the first attempt:",
        header,
    ]
    for rule, jobs in rules.items():
        asked = sum(r.gpus * r.minutes[0] / 60 for r in jobs)
        cells = ""
        for gpu in GPU_TYPES:
            fast = sum(r.gpus * r.expected.hours[gpu][0] for r in jobs)
            slow = sum(r.gpus * r.expected.hours[gpu][1] for r in jobs)
            cells += f"{format_range(fast, slow):>18}"
        lines.append(f"{rule:<22}{len(jobs):>6}{asked:>13,.0f}{cells}")
        one = jobs[0]
        walls = ", ".join(f"{gpu} {format_range(*one.expected.hours[gpu])} h" for gpu in GPU_TYPES)
        lines.append(
            f"  one job on its {one.gpus} GPU(s): {walls}; asked per attempt: "
            f"{one.minutes[0] / 60:,.1f} h, {len(one.minutes)} attempt(s) in all"
        )
    return lines


def check_partitions(partitions: Sequence[str]) -> str:
    """Whether this cluster has the partitions (sinfo), in words."""
    if shutil.which("sinfo") is None:
        return "(No sinfo here: check them with `sinfo -s` on the cluster.)"
    done = subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"(sinfo failed here, {last!r}: check them with `sinfo -s` on the cluster.)"
    known = set(done.stdout.split())
    missing = [p for p in partitions if p not in known]
    if not missing:
        return "This cluster has them all."
    return (
        f"MISSING on this cluster: {', '.join(missing)} (it has {', '.join(sorted(known))}); set "
        "the SITE partitions in the profile (docs/cluster.md)."
    )


def stage_of(snakefile: str | None) -> str:
    """Rules live in workflow/rules/<stage>.smk."""
    return Path(snakefile).stem if snakefile else "targets"


def plan_requests(
    profile: str,
    configfiles: Sequence[str],
    targets: Sequence[str],
    workdir: str | Path | None = None,
) -> tuple[list[JobRequest], int]:
    """The jobs still to run for ``targets`` with the profile's resources, and its retries."""
    from snakemake import cli
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        ResourceSettings,
    )

    argv = ["--profile", profile, "--dry-run"]
    if configfiles:
        argv += ["--configfile", *configfiles]
    _, args = cli.parse_args(argv)
    retries = int(args.retries or 0)
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL}, dryrun=True)) as api:
        workflow_api = api.workflow(
            # Threads are capped by cores: a large number keeps each rule's own.
            resource_settings=ResourceSettings(
                cores=4096,
                overwrite_threads=args.set_threads,
                overwrite_resources=args.set_resources,
                default_resources=args.default_resources,
            ),
            config_settings=ConfigSettings(configfiles=[Path(f).resolve() for f in configfiles]),
            snakefile=REPO / "Snakefile",
            workdir=Path(workdir or Path.cwd()).resolve(),
        )
        # Build the DAG only (a dry run would mark its jobs done), as `snakemake --dag` does.
        workflow_api.dag(DAGSettings(targets=set(targets), rerun_triggers=args.rerun_triggers))
        workflow = workflow_api._workflow  # the API keeps the DAG itself private
        workflow._prepare_dag(forceall=False, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        local_rules = set(workflow._localrules)
        requests = [job_request(job, retries, local_rules) for job in workflow.dag.needrun_jobs()]
    return [r for r in requests if r is not None], retries


def job_request(job, retries: int, local_rules: set[str]) -> JobRequest | None:
    if job.rule.norun:
        return None  # target rules (all, report, ...) run nothing
    # A rule's own `retries` (pretraining: config pretrain.attempts - 1) wins over the profile's.
    # (Read from the rule: Job.restart_times needs the executor settings a DAG-only run lacks.)
    own = getattr(job.rule, "_restart_times", None)
    restarts = own if own is not None else retries
    resources = dict(job.resources.items())  # at the first attempt
    minutes = [float(resources.get("runtime") or 0)]
    # At a retry only the wall time matters to the plan, so only it (and the threads, which
    # Snakemake always evaluates) is evaluated again: expanding every resource, input sizes
    # included, for each attempt took 70 of the paper plan's 80 s.
    others = set(job.rule.resources.keys()) - {"runtime", "_cores"}
    for attempt in range(2, restarts + 2):
        retry = job.rule.expand_resources(
            job.wildcards_dict, job.input, attempt, skip_evaluation=others
        )
        minutes.append(float(retry.get("runtime") or 0))
    expected = None
    params = dict(job.params.items())
    if "pretrain" in params and "model" in params:
        from xling.cluster.expected import pretraining_expected

        expected = pretraining_expected(params["model"], params["pretrain"], params["languages"])
    return JobRequest(
        rule=job.rule.name,
        stage=stage_of(job.rule.snakefile),
        gpus=gpus_of(resources),
        cpus=cpus_of(resources, job.threads),
        minutes=tuple(minutes),
        partition=str(resources.get("slurm_partition") or ""),
        local=job.rule.name in local_rules,
        expected=expected,
    )


def main(argv: Sequence[str] | None = None) -> str:
    parser = argparse.ArgumentParser(
        prog="python -m xling.cluster.plan",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("targets", nargs="*", default=["all"], help="default: all")
    parser.add_argument("--profile", default="slurm", help="default: slurm (./slurm)")
    parser.add_argument("--configfile", nargs="+", default=[], help="default: the paper study")
    parser.add_argument("--directory", help="working directory of the run (default: here)")
    args = parser.parse_args(argv)
    requests, retries = plan_requests(args.profile, args.configfile, args.targets, args.directory)
    if not requests:
        text = "Nothing to run: every target is up to date."
    else:
        text = format_plan(requests, retries)
    print(text)
    return text


if __name__ == "__main__":
    main()
