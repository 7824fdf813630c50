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
expected use per GPU type from the FLOP model (xling.cluster.expected), for the job's own GPUs
(4 GPUs train the global batch in twice the wall time of 8), and whether ``pretrain.attempts`` x
``pretrain.runtime_minutes`` cover its slow end with an attempt to spare. A stop margin
(``pretrain.stop_margin_minutes``) that the profile's early signal would beat is refused: the
command then exits 1 (xling.cluster.launch.check_stop_margin). The fine-tuning runs are
priced one a job and packed N to a job (``finetune.runs_per_job: N``; ``--pack N ...`` for other
N): jobs, GPU-hours and the longest job. ``python -m xling.cluster.preflight`` checks the same jobs
against the live cluster.
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xling.cluster.expected import GPU_TYPES, MFU_RANGE, Expected, attempts_fall_short, format_range
from xling.cluster.gpus import gpus_of
from xling.cluster.launch import check_stop_margin, launch_from_resources

REPO = Path(__file__).resolve().parents[3]
DEFAULT_PACK_SIZES = (2, 6)  # fine-tuning runs a job priced beside one, if the config packs none


# The resources sbatch sees besides time, memory and partition (snakemake-executor-plugin-slurm's
# names, and this workflow's gpus_per_node), and how the job starts its processes (mpi, which
# xling.cluster.launch reads): what the preflight checks against the cluster.
SLURM_KEYS = (
    "nodes", "gpu", "gpus", "gpu_model", "gres", "gpus_per_node", "constraint", "slurm_extra",
    "slurm_account", "qos", "tasks", "cpus_per_task", "mem_mb_per_cpu", "mpi",
)  # fmt: skip


def slurm_resources(resources: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`SLURM_KEYS` a job's resources set."""
    return {key: resources[key] for key in SLURM_KEYS if resources.get(key) not in (None, "")}


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
    wildcards: tuple[tuple[str, str], ...] = ()
    mem_mb: tuple[float, ...] = ()  # memory per node at attempt 1, 2, ... (empty: not asked)
    slurm: Mapping[str, Any] = field(default_factory=dict, compare=False)  # SLURM_KEYS asked
    # pretraining: what the job trains (its params model, pretrain and languages)
    pretraining: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def nodes(self) -> int:
        return max(int(self.slurm.get("nodes") or 1), 1)

    def wildcard(self, name: str) -> str:
        return dict(self.wildcards).get(name, "")


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


def format_plan(
    requests: Sequence[JobRequest], retries: int, pack_sizes: Sequence[int] = DEFAULT_PACK_SIZES
) -> str:
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
    lines += format_layouts(requests, pack_sizes)
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
        for gpu in GPU_TYPES:  # GPU-hours: each job's wall time on its own GPUs x those GPUs
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
        lines.append("  " + format_attempts(one))
    return lines


def format_attempts(request: JobRequest) -> str:
    """Whether a pretraining job's attempts x wall time cover its expected training at the slow
    end, with one failed attempt to spare, per GPU type; the keys to change where they do not."""
    minutes = request.minutes
    spare = (sum(minutes) - max(minutes)) / 60
    short = {
        gpu: hours[1]
        for gpu, hours in request.expected.hours.items()
        if attempts_fall_short(hours, minutes)
    }
    head = (
        f"{len(minutes)} attempt(s) give {sum(minutes) / 60:,.0f} h, {spare:,.0f} h if one fails:"
    )
    if not short:
        return f"{head} they cover the slow end on every GPU type."
    slowest = max(short.values())
    needed = math.ceil(slowest * 60 / max(minutes)) + 1
    return (
        f"{head} SHORT of the slow end on {', '.join(short)} (up to {slowest:,.0f} h): config "
        f"pretrain.attempts >= {needed} at pretrain.runtime_minutes {max(minutes):,.0f} (or more "
        "minutes an attempt, within the partition's MaxTime) on those GPUs."
    )


def stop_margin_refusals(plan: StudyPlan) -> dict[tuple[str, str], list[str]]:
    """(problem, change) -> the pretraining rules whose profile signal (``--signal=...@N`` in
    slurm_extra) would come before the trainer stops itself (xling.cluster.launch)."""
    from xling.pretrain.settings import PretrainSettings

    default = PretrainSettings.__dataclass_fields__["stop_margin_minutes"].default
    margin = float((plan.config.get("pretrain") or {}).get("stop_margin_minutes", default))
    refusals: dict[tuple[str, str], list[str]] = {}
    for request in plan.requests:
        if request.expected is not None and not request.local:
            found = check_stop_margin(margin, request.slurm.get("slurm_extra"))
            rules = refusals.setdefault(found, []) if found else []
            if found and request.rule not in rules:
                rules.append(request.rule)
    return refusals


@dataclass(frozen=True)
class FinetuneRun:
    """One fine-tuning run's ask, and the runs it may share a job with (``group``)."""

    family: str  # the config key that packs its runs
    group: tuple[str, ...]
    gpus: int
    minutes: float  # at the first attempt


# rule -> (the config key that groups its runs into jobs, the wildcards of a group of runs that
# may share a job): Table 1's grid points of a (pair, variant, task), Muller et al.'s runs of a
# setup (experiment, task, source).
FINETUNE_FAMILIES = {
    "finetune_run": ("finetune.runs_per_job", ("pair", "variant", "task")),
    "finetune_pack": ("finetune.runs_per_job", ("pair", "variant", "task")),
    "muller_finetune": ("muller.runs_per_job", ("experiment", "mtask", "msource")),
}


def finetune_runs(requests: Iterable[JobRequest]) -> list[FinetuneRun]:
    """Every fine-tuning run of the plan whose own wall time the jobs show: one run a job, or a
    pack of ``runs`` (``finetune_pack``: its time is the runs'); a job of every run of a model
    or setup (``model``, ``all``) asks for one time for them all and is left out."""
    runs = []
    for request in requests:
        family = FINETUNE_FAMILIES.get(request.rule)
        if family is None or request.local or request.wildcard("job") == "all":
            continue
        key, group_names = family
        count = int(request.wildcard("runs") or 1)
        group = tuple(request.wildcard(name) for name in group_names)
        run = FinetuneRun(key, group, request.gpus, request.minutes[0] / count)
        runs.extend([run] * count)
    return runs


@dataclass(frozen=True)
class LayoutCost:
    jobs: int
    gpu_hours: float
    longest_hours: float  # the longest job's wall time: it must fit the partition's MaxTime


def layout_cost(runs: Sequence[FinetuneRun], runs_per_job: int) -> LayoutCost:
    """The jobs, GPU-hours and longest job if the runs of each group share jobs of
    ``runs_per_job`` runs, one after the other (in grid order, as the rules pack them)."""
    groups: dict[tuple[str, ...], list[FinetuneRun]] = defaultdict(list)
    for run in runs:
        groups[(run.family, *run.group)].append(run)
    jobs, longest = 0, 0.0
    for members in groups.values():
        for first in range(0, len(members), runs_per_job):
            jobs += 1
            pack = members[first : first + runs_per_job]
            longest = max(longest, sum(run.minutes for run in pack) / 60)
    hours = sum(run.gpus * run.minutes for run in runs) / 60
    return LayoutCost(jobs, hours, longest)


def format_layouts(requests: Sequence[JobRequest], pack_sizes: Sequence[int]) -> list[str]:
    """The fine-tuning runs priced one a job and packed, per config key that packs them."""
    runs = finetune_runs(requests)
    if not runs:
        return []
    lines = [
        "",
        "Fine-tuning runs by layout (the runs of a job train one after the other, so GPU-hours "
        "asked stay the same; jobs and the longest job change, which must fit the partition's "
        "MaxTime: python -m xling.cluster.preflight):",
        f"{'runs of':<24}{'runs a job':>11}{'jobs':>8}{'GPU-hours':>12}{'longest job (h)':>17}",
    ]
    for family in dict.fromkeys(run.family for run in runs):
        members = [run for run in runs if run.family == family]
        for size in sorted({1, *pack_sizes}):
            cost = layout_cost(members, size)
            lines.append(
                f"{family if size == 1 else '':<24}{size:>11}{cost.jobs:>8,}"
                f"{cost.gpu_hours:>12,.1f}{cost.longest_hours:>17,.1f}"
            )
    return lines


def pack_sizes_of(config: Mapping[str, Any]) -> tuple[int, ...]:
    """The packings to price: the config's own (``finetune.runs_per_job: N``), else a few."""
    configured = (config.get("finetune") or {}).get("runs_per_job")
    if isinstance(configured, int) and configured > 1:
        return (configured,)
    return DEFAULT_PACK_SIZES


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


@dataclass
class StudyPlan:
    """The jobs still to run with the profile's resources, and the settings they come from."""

    requests: list[JobRequest]
    retries: int  # the profile's (a rule's own `retries` win: JobRequest.minutes has them all)
    jobs: int | None  # the profile's `jobs`: how many are queued or running at once
    set_resources: dict[str, set[str]]  # rule -> resources the profile sets for it
    default_resources: set[str]  # resources the profile's default-resources set
    set_threads: set[str]  # rules whose threads the profile sets
    config: Mapping[str, Any]  # the study's validated config


def plan_requests(
    profile: str,
    configfiles: Sequence[str],
    targets: Sequence[str],
    workdir: str | Path | None = None,
) -> tuple[list[JobRequest], int]:
    """The jobs still to run for ``targets`` with the profile's resources, and its retries."""
    plan = read_plan(profile, configfiles, targets, workdir)
    return plan.requests, plan.retries


def read_plan(
    profile: str,
    configfiles: Sequence[str],
    targets: Sequence[str],
    workdir: str | Path | None = None,
) -> StudyPlan:
    """Snakemake's own DAG for ``targets`` under the profile, as a :class:`StudyPlan`."""
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
        config = dict(workflow.config)
    return StudyPlan(
        requests=[r for r in requests if r is not None],
        retries=retries,
        jobs=int(args.jobs) if str(args.jobs or "").isdigit() else None,
        set_resources={rule: set(named) for rule, named in (args.set_resources or {}).items()},
        default_resources=_profile_default_resources(profile),
        set_threads=set(args.set_threads or {}),
        config=config,
    )


def profile_file(profile: str) -> Path | None:
    """The profile's YAML file, found as Snakemake finds it (``./NAME``, then the user's and the
    site's config folders)."""
    from snakemake import cli

    found = cli.get_profile_dir(profile)
    return Path(found[1]) if found else None


def read_profile(profile: str) -> dict:
    """The profile after Snakemake's templating (YTE), as a plain mapping ({} if none)."""
    import yte

    path = profile_file(profile)
    if path is None:
        return {}
    with open(path, encoding="utf-8") as handle:
        return yte.process_yaml(handle, require_use_yte=True) or {}


def _profile_default_resources(profile: str) -> set[str]:
    """The resources the profile's own default-resources name (Snakemake adds mem_mb, disk_mb
    and tmpdir to every run's defaults itself)."""
    named = read_profile(profile).get("default-resources") or {}
    if isinstance(named, Mapping):
        return set(named)
    return {str(item).split("=", 1)[0] for item in named}  # the command line's form, key=value


def job_request(job, retries: int, local_rules: set[str]) -> JobRequest | None:
    if job.rule.norun:
        return None  # target rules (all, report, ...) run nothing
    # A rule's own `retries` (pretraining: config pretrain.attempts - 1) wins over the profile's.
    # (Read from the rule: Job.restart_times needs the executor settings a DAG-only run lacks.)
    own = getattr(job.rule, "_restart_times", None)
    restarts = own if own is not None else retries
    resources = dict(job.resources.items())  # at the first attempt
    minutes = [float(resources.get("runtime") or 0)]
    memory = [float(resources.get("mem_mb") or 0)]
    # At a retry only the wall time and memory matter to the plan, so only they (and the threads,
    # which Snakemake always evaluates) are evaluated again: expanding every resource, input sizes
    # included, for each attempt took 70 of the paper plan's 80 s.
    others = set(job.rule.resources.keys()) - {"runtime", "mem_mb", "_cores"}
    for attempt in range(2, restarts + 2):
        retry = job.rule.expand_resources(
            job.wildcards_dict, job.input, attempt, skip_evaluation=others
        )
        minutes.append(float(retry.get("runtime") or 0))
        memory.append(float(retry.get("mem_mb") or 0))
    expected, pretraining = None, {}
    params = dict(job.params.items())
    if "pretrain" in params and "model" in params:
        from xling.cluster.expected import pretraining_expected

        pretraining = {key: params[key] for key in ("model", "pretrain", "languages")}
        expected = pretraining_expected(
            params["model"], params["pretrain"], params["languages"], processes_of(resources)
        )
    return JobRequest(
        rule=job.rule.name,
        stage=stage_of(job.rule.snakefile),
        gpus=gpus_of(resources),
        cpus=cpus_of(resources, job.threads),
        minutes=tuple(minutes),
        partition=str(resources.get("slurm_partition") or ""),
        local=job.rule.name in local_rules,
        expected=expected,
        wildcards=tuple((str(k), str(v)) for k, v in job.wildcards_dict.items()),
        mem_mb=tuple(memory) if any(memory) else (),
        slurm=slurm_resources(resources),
        pretraining=pretraining,
    )


def processes_of(resources: Mapping[str, Any]) -> int:
    """The training processes a pretraining job's resources start (xling.cluster.launch); its
    GPUs where they are inconsistent, which the preflight reports."""
    try:
        return launch_from_resources(resources).world_size
    except ValueError:
        return max(gpus_of(resources), 1)


def plan_parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    """The command line of a command that reads the plan (:func:`read_plan`): the targets, the
    profile, the config files and the working directory, as Snakemake takes them."""
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("targets", nargs="*", default=["all"], help="default: all")
    parser.add_argument("--profile", default="slurm", help="default: slurm (./slurm)")
    parser.add_argument("--configfile", nargs="+", default=[], help="default: the paper study")
    parser.add_argument("--directory", help="working directory of the run (default: here)")
    return parser


def main(argv: Sequence[str] | None = None) -> str:
    parser = plan_parser("python -m xling.cluster.plan", __doc__)
    parser.add_argument(
        "--pack",
        type=int,
        nargs="+",
        help="runs a job to price the fine-tuning runs at besides one (default: the config's "
        f"finetune.runs_per_job, else {' and '.join(map(str, DEFAULT_PACK_SIZES))})",
    )
    args = parser.parse_args(argv)
    plan = read_plan(args.profile, args.configfile, args.targets, args.directory)
    if not plan.requests:
        text = "Nothing to run: every target is up to date."
    else:
        sizes = args.pack or pack_sizes_of(plan.config)
        text = format_plan(plan.requests, plan.retries, sizes)
    refusals = stop_margin_refusals(plan)
    if refusals:
        text += "\n\nREFUSED (fix before submitting):"
        for (problem, change), rules in refusals.items():
            text += f"\n  {', '.join(rules)}: {problem}.\n     Change: {change}."
    print(text)
    if refusals:
        raise SystemExit(1)
    return text


if __name__ == "__main__":
    main()
