"""What a study asks of the cluster, per stage, before anything is submitted.

    python -m xling.cluster.plan                                  # the paper study, profile slurm
    python -m xling.cluster.plan --configfile config/demo.yaml
    python -m xling.cluster.plan results/paper/tables/table1.md   # one table's share
    python -m xling.cluster.plan --configfile config/demo.yaml -- results/demo/tables/table1.md

The jobs and their resources come from Snakemake's own dry run with the SLURM profile applied (so
the numbers are what sbatch will be asked for), and only jobs that still have to run count. GPU
hours are GPUs x wall time asked at the first attempt; a retry asks for more, and the worst case
(every job using every retry) is printed too. Jobs of local rules run on the submit host.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
_GRES_GPUS = re.compile(r"(?:^|,)gpu(?::[A-Za-z0-9_.]+)?:(\d+)")


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


def gpus_of(resources: Mapping[str, object]) -> int:
    """GPUs a job holds in all: nodes x gpus_per_node, else gpu (SLURM's --gpus), else gres."""
    nodes = int(resources.get("nodes") or 1)
    if resources.get("gpus_per_node"):
        return nodes * int(resources["gpus_per_node"])
    for name in ("gpu", "gpus"):
        if resources.get(name):
            return int(resources[name])
    found = _GRES_GPUS.search(str(resources.get("gres") or ""))
    return nodes * int(found.group(1)) if found else 0


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
        f"{retries} retries: {total.gpu_hours_all_retries:,.1f}."
    )
    partitions = sorted({r.partition for r in requests if r.partition and not r.local})
    if partitions:
        lines.append(f"Partitions: {', '.join(partitions)}. {check_partitions(partitions)}")
    return "\n".join(lines)


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
    minutes = []
    for attempt in range(1, retries + 2):
        job.attempt = attempt
        minutes.append(float(job.resources.get("runtime") or 0))
    job.attempt = 1
    resources = dict(job.resources.items())
    return JobRequest(
        rule=job.rule.name,
        stage=stage_of(job.rule.snakefile),
        gpus=gpus_of(resources),
        cpus=cpus_of(resources, job.threads),
        minutes=tuple(minutes),
        partition=str(resources.get("slurm_partition") or ""),
        local=job.rule.name in local_rules,
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
