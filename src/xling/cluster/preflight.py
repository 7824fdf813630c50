"""Preflight: every job of a study against the live cluster, before a single GPU is asked for.

    python -m xling.cluster.preflight                                  # the paper study
    python -m xling.cluster.preflight --configfile config/demo.yaml
    python -m xling.cluster.preflight results/paper/tables/table1.md   # one table's jobs

Run it on the login node you submit from. The jobs and their resources are those of
``python -m xling.cluster.plan`` (Snakemake's own dry run with the SLURM profile, every attempt's
wall time and memory). Each is checked against what the cluster says
(:mod:`xling.cluster.slurminfo`):

* its partition exists, and its wall time at every attempt is within the partition's MaxTime
  (and its QOS's and account's MaxWall): a longer job pends forever;
* the partition takes it at all: its State (DRAIN and INACTIVE take no job, DOWN holds them),
  RootOnly, ReqResv (a job without ``--reservation`` is refused), AllowGroups (against the user's
  groups, ``id -Gn``) and AllocNodes (against this machine, which submits);
* its nodes (within MinNodes and MaxNodes), GPUs per node (of the pinned type, where one is
  pinned), CPUs (within MaxCPUsPerNode) and memory per node (asked, or the partition's
  DefMemPerCPU / DefMemPerNode / DefMemPerGPU where none is, within MaxMemPerNode; above
  MaxMemPerCPU SLURM raises its CPUs, which must still fit) exist on the partition's nodes, or
  in its TRES where the nodes could not be read; a pinned GPU type (the profile's ``GPU_TYPE``)
  that the partition lacks is an error, none pinned on a partition of several types a warning;
* the profile's ``jobs`` (how many are queued at once) is within MaxSubmitJobs (the account's and
  the QOS's, sacctmgr) and the controller's MaxJobCount: the jobs beyond fail to submit;
* the account and QOS (its own, else its association's default) are the user's, and the
  partition admits them (AllowAccounts / DenyAccounts, AllowQos / DenyQos);
* a pretraining model's attempts x wall time cover its expected training on its GPUs with an
  attempt to spare, its stop margin comes before the profile's early signal
  (``pretrain.stop_margin_minutes``), and a process fits its GPU's memory
  (:mod:`xling.cluster.memory`; a warning naming the ``pretrain.micro_batch`` that would fit).

ExclusiveUser=YES (a node runs one user's jobs at a time) refuses nothing and is not checked.

It then estimates the disk the jobs write under ``results/<study>`` (:mod:`xling.cluster.disk`,
against the free space there) and the GPU-hours: asked, and expected per GPU type for
pretraining (:mod:`xling.cluster.expected`). It exits 1 when a check fails, naming the setting to
change; what it could not read (no sacctmgr, no accounting) it says, and checks the rest.
"""

from __future__ import annotations

import math
import re
import shutil
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xling.cluster.disk import format_disk
from xling.cluster.expected import GPU_TYPES, attempts_fall_short
from xling.cluster.launch import launch_from_resources
from xling.cluster.memory import ASSUMED_VOCAB, MemoryJob, estimate, gpu_memory_gib, largest_fitting
from xling.cluster.plan import (
    JobRequest,
    StudyPlan,
    format_expected,
    plan_parser,
    profile_file,
    read_plan,
    stop_margin_refusals,
)
from xling.cluster.slurminfo import ClusterFacts, Node, Runner, read_cluster, run_command
from xling.model.config import EncoderConfig
from xling.pretrain.batching import plan_batches

PRETRAIN_KEYS = "config pretrain.runtime_minutes"
TYPED_GPU_FLAGS = (
    re.compile(r"--gpus(?:-per-node)?[= ]([A-Za-z][\w.-]*):\d+"),
    re.compile(r"--gres[= ]gpu:([A-Za-z][\w.-]*):\d+"),
)


@dataclass(frozen=True)
class Finding:
    """A check that failed (``error``) or may fail (``warning``), and the setting to change."""

    severity: str
    rule: str
    problem: str
    change: str


@dataclass(frozen=True)
class Settings:
    """Where each setting a finding names lives."""

    plan: StudyPlan
    profile: str  # the profile's file, for messages
    pins_in_one_place: bool  # the profile defines GPU_TYPE (every GPU rule reads it)

    def resource(self, rule: str, name: str) -> str:
        """The profile key that sets resource ``name`` of ``rule``."""
        if name in self.plan.set_resources.get(rule, set()):
            return f"set-resources: {rule}: {name} in {self.profile}"
        if name in self.plan.default_resources:
            return f"default-resources: {name} in {self.profile} (or a set-resources: {rule})"
        return f"set-resources: {rule}: {name} in {self.profile} (add it)"

    def runtime(self, request: JobRequest) -> str:
        own = "runtime" in self.plan.set_resources.get(request.rule, set())
        if not own and request.expected is not None:
            return PRETRAIN_KEYS  # every pretraining rule's (workflow/rules/common/pretrain.smk)
        return self.resource(request.rule, "runtime")

    def gpu_type(self, rule: str, source: str) -> str:
        """Where a job's GPU type is set: the profile's GPU_TYPE, which gpu_model and the typed
        --gpus-per-node of the multi-node example read, or the rule's own resource."""
        if source in ("gpu_model", "slurm_extra") and self.pins_in_one_place:
            return f"GPU_TYPE in the __definitions__ of {self.profile} (every GPU rule reads it)"
        return self.resource(rule, source)

    def threads(self, rule: str) -> str:
        return f"set-threads: {rule} in {self.profile}"


# --------------------------------------------------------------------------- jobs and their asks
def cluster_requests(requests: Iterable[JobRequest]) -> list[JobRequest]:
    return [request for request in requests if not request.local]


def by_rule(requests: Iterable[JobRequest]) -> dict[str, list[JobRequest]]:
    grouped: dict[str, list[JobRequest]] = defaultdict(list)
    for request in requests:
        grouped[request.rule].append(request)
    return dict(grouped)


def pinned_gpu_type(request: JobRequest) -> tuple[str, str] | None:
    """The GPU type a job asks for and the resource that asks (gpu_model, gres, slurm_extra)."""
    slurm = request.slurm
    if slurm.get("gpu_model"):
        return str(slurm["gpu_model"]), "gpu_model"
    typed = re.search(r"(?:^|,)gpu:([A-Za-z][\w.-]*):\d+", str(slurm.get("gres") or ""))
    if typed:
        return typed.group(1), "gres"
    for flag in TYPED_GPU_FLAGS:
        typed = flag.search(str(slurm.get("slurm_extra") or ""))
        if typed:
            return typed.group(1), "slurm_extra"
    return None


def satisfies(features: Sequence[str], constraint: str) -> bool | None:
    """Whether a node's features meet a ``--constraint`` of ``a``, ``a|b`` or ``a&b``; None for
    forms not read here (brackets, counts)."""
    if re.search(r"[\[\]()*]", constraint):
        return None
    if "|" in constraint:
        return any(part in features for part in constraint.split("|"))
    return all(part in features for part in constraint.split("&"))


def gpu_family(gpu_type: str) -> str | None:
    """The GPU_TYPES entry a site's gres type names (``a100``, ``nvidia_a100-sxm4-80gb``)."""
    for family in sorted(GPU_TYPES, reverse=True):
        if family.lower() in gpu_type.lower():
            return family
    return None


# --------------------------------------------------------------------------- checks
def check_partitions(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """Each rule's partition exists and is up; its jobs' wall time fits its MaxTime."""
    if facts.partitions is None:
        return []
    findings = []
    for rule, requests in by_rule(cluster_requests(settings.plan.requests)).items():
        name = requests[0].partition
        partition = facts.partitions.get(name)
        if partition is None:
            known = ", ".join(sorted(facts.partitions))
            problem = f"partition {name!r} does not exist (this cluster has {known})"
            findings.append(
                Finding("error", rule, problem, settings.resource(rule, "slurm_partition"))
            )
            continue
        limit = partition.max_minutes
        if limit is None:
            continue
        over = [(r, a) for r in requests for a, m in enumerate(r.minutes, 1) if m > limit]
        if over:
            worst, attempt = max(over, key=lambda pair: pair[0].minutes[pair[1] - 1])
            jobs = len({id(r) for r, _ in over})
            problem = (
                f"{jobs} job(s) ask for up to {worst.minutes[attempt - 1]:,.0f} minutes (attempt "
                f"{attempt}), above partition {name}'s MaxTime of {limit:,.0f} minutes "
                f"({partition.max_time_text}): such a job pends forever"
            )
            change = f"{settings.runtime(worst)}, to at most {limit:,.0f} at every attempt"
            findings.append(Finding("error", rule, problem, change))
    return findings


def check_admission(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """Each rule's partition takes its jobs at all: its State, RootOnly, ReqResv, AllowGroups
    and AllocNodes (sbatch's answers: tests/cluster/slurm_outputs/README.md)."""
    if facts.partitions is None:
        return []
    findings = []
    for rule, requests in by_rule(cluster_requests(settings.plan.requests)).items():
        partition = facts.partitions.get(requests[0].partition)
        if partition is not None:
            findings += _refusals(settings, rule, partition, requests[0], facts)
    return findings


def _refusals(settings, rule, partition, request, facts) -> list[Finding]:
    name, other = partition.name, settings.resource(rule, "slurm_partition")
    found = []
    if partition.state in ("DRAIN", "INACTIVE"):
        problem = f"partition {name} is {partition.state}: sbatch refuses every job there"
        found.append(Finding("error", rule, problem, other))
    elif partition.state and partition.state != "UP":
        problem = f"partition {name} is {partition.state}: its jobs wait until it is UP"
        found.append(Finding("warning", rule, problem, other))
    if partition.root_only and facts.user != "root":
        problem = (
            f"partition {name} takes root's jobs only (RootOnly=YES); they run as {facts.user}"
        )
        found.append(Finding("error", rule, problem, other))
    extra = str(request.slurm.get("slurm_extra") or "")
    if partition.requires_reservation and "--reservation" not in extra:
        problem = f"partition {name} takes jobs of a reservation only (ReqResv=YES); it names none"
        change = f"--reservation=NAME in {settings.resource(rule, 'slurm_extra')}, or {other}"
        found.append(Finding("error", rule, problem, change))
    groups, allowed = facts.groups, partition.allow_groups
    member = allowed is None or groups is None or bool(set(allowed) & set(groups))
    if not member and facts.user != "root":
        problem = (
            f"partition {name} admits the groups {', '.join(allowed)} only; {facts.user} is in "
            f"{', '.join(groups) or 'none'} (id -Gn)"
        )
        found.append(Finding("error", rule, problem, other))
    hosts = partition.alloc_nodes
    if hosts is not None and facts.host and not {facts.host, facts.host.split(".")[0]} & {*hosts}:
        problem = (
            f"partition {name} takes jobs submitted from {', '.join(hosts)} only (AllocNodes); "
            f"this is {facts.host}"
        )
        found.append(Finding("error", rule, problem, f"run Snakemake on {hosts[0]}, or {other}"))
    return found


def check_nodes(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """Each rule's nodes, GPUs (of its type), CPUs and memory per node exist on its partition."""
    if facts.partitions is None:
        return []
    findings = []
    for rule, requests in by_rule(cluster_requests(settings.plan.requests)).items():
        partition = facts.partitions.get(requests[0].partition)
        if partition is None:
            continue  # reported by check_partitions
        nodes = facts.nodes_of(partition.name)
        request = max(requests, key=lambda r: (r.gpus, r.cpus, max(r.mem_mb or (0,))))
        low, high = partition.min_nodes, partition.max_nodes
        if request.nodes < low or (high is not None and request.nodes > high):
            problem = (
                f"asks for {request.nodes} node(s); partition {partition.name} takes jobs of "
                f"{low} to {high if high is not None else 'any number of'} nodes"
            )
            findings.append(Finding("error", rule, problem, settings.resource(rule, "nodes")))
        if facts.nodes is None:  # sinfo unread: the partition's totals at least
            findings += _within_totals(settings, rule, request, partition)
            continue
        nodes, found = _constrained(settings, rule, request, nodes)
        findings += found
        nodes, found = _with_gpus(settings, rule, request, partition.name, nodes)
        findings += found
        if nodes:
            findings += _cpus_and_memory(settings, rule, request, partition, nodes)
    return findings


def _constrained(settings, rule, request, nodes) -> tuple[list[Node], list[Finding]]:
    constraint = str(request.slurm.get("constraint") or "")
    if not constraint:
        return nodes, []
    kept = [node for node in nodes if satisfies(node.features, constraint) is not False]
    if kept:
        return kept, []
    features = sorted({f for node in nodes for f in node.features}) or ["none"]
    problem = (
        f"asks for nodes with feature {constraint!r}; the partition's nodes have "
        f"{', '.join(features)}"
    )
    return [], [Finding("error", rule, problem, settings.resource(rule, "constraint"))]


def _with_gpus(settings, rule, request, partition, nodes) -> tuple[list[Node], list[Finding]]:
    """The nodes that give the job its GPUs per node; findings where too few do."""
    per_node = request.gpus // request.nodes
    if per_node == 0 or not nodes:
        return nodes, []
    pinned = pinned_gpu_type(request)
    types = sorted({t or "(untyped)" for node in nodes for t, n in node.gpus.items() if n})
    on_offer = ", ".join(types) or "no GPUs"
    if pinned is not None:
        gpu_type, source = pinned
        if not any(node.gpus.get(gpu_type) for node in nodes):
            problem = (
                f"pins GPU type {gpu_type!r}, which partition {partition} lacks (it has {on_offer})"
            )
            return [], [Finding("error", rule, problem, settings.gpu_type(rule, source))]
    findings = []
    if pinned is None and len(types) > 1:
        problem = (
            f"pins no GPU type on partition {partition}, which has {on_offer}: a retry may resume "
            "on another type, and in another precision"
        )
        findings.append(Finding("warning", rule, problem, settings.gpu_type(rule, "gpu_model")))

    def usable(node: Node) -> int:
        return node.gpus.get(pinned[0], 0) if pinned else sum(node.gpus.values())

    fitting = [node for node in nodes if usable(node) >= per_node]
    if len(fitting) < request.nodes:
        most = max((usable(node) for node in nodes), default=0)
        kind = f" {pinned[0]}" if pinned else ""
        problem = (
            f"asks for {per_node}{kind} GPU(s) on each of {request.nodes} node(s); partition "
            f"{partition} has {len(fitting)} such node(s) (at most {most} a node)"
        )
        gpu_key = next((k for k in ("gpus_per_node", "gres", "gpu") if k in request.slurm), "gpu")
        findings.append(Finding("error", rule, problem, settings.resource(rule, gpu_key)))
    return fitting, findings


def _within_totals(settings, rule, request, partition) -> list[Finding]:
    """Nodes, CPUs and GPUs within what the partition has in all (its TRES)."""
    findings = []
    for key, asked, resource in (
        ("node", request.nodes, "nodes"),
        ("cpu", request.cpus, None),
        ("gres/gpu", request.gpus, "gpu"),
    ):
        total = partition.tres.get(key, "")
        if total.isdigit() and asked > int(total):
            problem = f"asks for {asked} {key}; partition {partition.name} has {total} in all"
            change = (
                settings.threads(rule) if resource is None else settings.resource(rule, resource)
            )
            findings.append(Finding("error", rule, problem, change))
    return findings


def _cpus_and_memory(settings, rule, request, partition, nodes) -> list[Finding]:
    findings = []
    cpus = max(request.cpus // request.nodes, 1)
    most_cpus = max(node.cpus for node in nodes)
    if partition.max_cpus_per_node is not None:
        most_cpus = min(most_cpus, partition.max_cpus_per_node)
    if cpus > most_cpus:
        problem = (
            f"asks for {cpus} CPUs a node; partition {partition.name} gives a job at most "
            f"{most_cpus} a node (its nodes' CPUs, MaxCPUsPerNode)"
        )
        findings.append(Finding("error", rule, problem, settings.threads(rule)))
    memory, what, resource = job_memory(request, partition)
    if memory is None:
        return findings
    most = max(node.memory_mb for node in nodes)
    if partition.max_mem_per_node_mb is not None:
        most = min(most, partition.max_mem_per_node_mb)
    change = settings.resource(rule, resource)
    if memory > most:
        problem = (
            f"asks for {memory:,.0f} MB a node ({what}); partition {partition.name} gives at "
            f"most {most:,.0f}"
        )
        findings.append(Finding("error", rule, problem, change))
    per_cpu = partition.max_mem_per_cpu_mb
    if per_cpu and memory / cpus > per_cpu:
        raised = math.ceil(memory / per_cpu)
        problem = (
            f"asks for {memory:,.0f} MB a node ({what}) with {cpus} CPUs, above partition "
            f"{partition.name}'s MaxMemPerCPU of {per_cpu:,.0f} MB: SLURM raises its CPUs to "
            f"{raised}"
        )
        if raised > most_cpus:
            problem += f", more than a node gives it ({most_cpus}): the job never starts"
            findings.append(Finding("error", rule, problem, change))
        else:
            problem += ", and charges them"
            findings.append(
                Finding("warning", rule, problem, f"{change}, or {settings.threads(rule)}")
            )
    return findings


def job_memory(request: JobRequest, partition) -> tuple[float | None, str, str]:
    """The memory a job gets a node (MB), in words, and the resource that sets it: mem_mb (its
    largest attempt), mem_mb_per_cpu x its CPUs, else the partition's default (DefMemPerCPU x
    CPUs, DefMemPerNode, DefMemPerGPU x GPUs); None where nothing says."""
    cpus = max(request.cpus // request.nodes, 1)
    if request.mem_mb:
        memory = max(request.mem_mb)
        return memory, f"attempt {request.mem_mb.index(memory) + 1}", "mem_mb"
    per_cpu = request.slurm.get("mem_mb_per_cpu")
    if per_cpu:
        return float(per_cpu) * cpus, f"mem_mb_per_cpu x {cpus} CPUs", "mem_mb_per_cpu"
    default = partition.default_memory
    gpus = request.gpus // request.nodes
    for kind, count in (("CPU", cpus), ("Node", 1), ("GPU", gpus)):
        if kind in default and count:
            return default[kind] * count, f"the partition's DefMemPer{kind}, asking none", "mem_mb"
    return None, "", "mem_mb"


def account_and_qos(request: JobRequest) -> tuple[str, str]:
    """The account and QOS a job names ("" where the profile names none)."""
    slurm = request.slurm
    return str(slurm.get("slurm_account") or ""), str(slurm.get("qos") or "")


def check_accounts(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """The account and QOS each rule names are the user's and its partition admits them."""
    findings = []
    mine = None if facts.associations is None else {a.account for a in facts.associations}
    for rule, requests in by_rule(cluster_requests(settings.plan.requests)).items():
        account, qos = account_and_qos(requests[0])
        partition = (facts.partitions or {}).get(requests[0].partition)
        if account and mine is not None and account not in mine:
            yours = ", ".join(sorted(mine)) or "none"
            problem = f"account {account!r} is not one of {facts.user}'s ({yours})"
            change = settings.resource(rule, "slurm_account")
            findings.append(Finding("error", rule, problem, change))
        if partition is not None:
            findings += _admitted(settings, rule, partition, account or facts.default_account)
        if qos:
            findings += _qos_known(settings, rule, (account, qos), facts, partition)
        association = facts.association(account, requests[0].partition)
        effective = qos or (association.default_qos if association is not None else "")
        if partition is not None and effective:
            findings += _qos_admitted(settings, rule, partition, (effective, bool(qos)))
    return findings


def _qos_admitted(settings, rule, partition, qos) -> list[Finding]:
    """The partition's AllowQos / DenyQos admit the QOS a job runs under: its own, or (not
    ``named``) its association's default."""
    name, named = qos
    whose = f"QOS {name}" if named else f"QOS {name} (the account's default: the job names none)"
    allowed = partition.allow_qos
    if allowed is not None and name not in allowed:
        problem = f"partition {partition.name} admits the QOS {', '.join(allowed)} only; {whose}"
    elif name in partition.deny_qos:
        problem = f"partition {partition.name} refuses {whose} (DenyQos)"
    else:
        return []
    return [Finding("error", rule, problem, settings.resource(rule, "qos"))]


def _admitted(settings, rule, partition, account) -> list[Finding]:
    change = settings.resource(rule, "slurm_account")
    allowed = partition.allow_accounts
    if account and allowed is not None and account not in allowed:
        problem = (
            f"partition {partition.name} admits the accounts {', '.join(allowed)} only, and the "
            f"job runs under {account}"
        )
        return [Finding("error", rule, problem, change)]
    if account and account in partition.deny_accounts:
        problem = f"partition {partition.name} refuses account {account}"
        return [Finding("error", rule, problem, change)]
    return []


def _qos_known(settings, rule, names, facts, partition) -> list[Finding]:
    account, qos = names
    change = settings.resource(rule, "qos")
    if facts.qos is not None and qos not in facts.qos:
        problem = f"QOS {qos!r} does not exist (there are {', '.join(sorted(facts.qos))})"
        return [Finding("error", rule, problem, change)]
    association = facts.association(account, partition.name if partition else "")
    if association is not None and qos not in association.qos:
        usable = ", ".join(association.qos)
        problem = f"QOS {qos!r} is not among account {association.account}'s ({usable})"
        return [Finding("error", rule, problem, change)]
    return []


def _qos_of(facts: ClusterFacts, request: JobRequest) -> list[str]:
    """The QOS a job runs under: its own, else its association's default; and the partition's."""
    account, qos = account_and_qos(request)
    association = facts.association(account, request.partition)
    names = [qos] if qos else [association.default_qos] if association else []
    own = (facts.partitions or {}).get(request.partition)
    return [name for name in [*names, own.qos if own else ""] if name]


def check_qos_limits(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """Wall time within the MaxWall of the job's association and QOS."""
    findings = []
    for rule, requests in by_rule(cluster_requests(settings.plan.requests)).items():
        account, _ = account_and_qos(requests[0])
        association = facts.association(account, requests[0].partition)
        limits = []
        if association is not None:
            limits.append(
                (association.max_wall_minutes, f"account {association.account}'s MaxWall")
            )
        for name in _qos_of(facts, requests[0]):
            found = (facts.qos or {}).get(name)
            if found is not None:
                limits.append((found.max_wall_minutes, f"QOS {name}'s MaxWall"))
        worst = max(requests, key=lambda r: max(r.minutes))
        for limit, source in limits:
            if limit is not None and max(worst.minutes) > limit:
                problem = (
                    f"asks for up to {max(worst.minutes):,.0f} minutes, above {source} of "
                    f"{limit:,.0f}: such a job is refused or pends forever"
                )
                change = f"{settings.runtime(worst)}, to at most {limit:,.0f}"
                findings.append(Finding("error", rule, problem, change))
    return findings


def submit_limits(settings: Settings, facts: ClusterFacts) -> list[tuple[int, str]]:
    """Every cap on how many of the user's jobs may be queued at once, and whose it is."""
    limits: dict[str, int] = {}
    for request in cluster_requests(settings.plan.requests):
        association = facts.association(account_and_qos(request)[0], request.partition)
        if association is not None:
            for value, what in (
                (association.max_submit, "MaxSubmitJobs"),
                (association.grp_submit, "GrpSubmitJobs"),
            ):
                if value is not None:
                    limits[f"account {association.account}'s {what} (sacctmgr)"] = value
        for name in _qos_of(facts, request):
            found = (facts.qos or {}).get(name)
            if found is not None and found.max_submit_per_user is not None:
                limits[f"QOS {name}'s MaxSubmitJobsPerUser (sacctmgr)"] = found.max_submit_per_user
    if facts.max_job_count is not None:
        limits["the cluster's MaxJobCount (scontrol show config)"] = facts.max_job_count
    return [(value, source) for source, value in limits.items()]


def check_submit_limit(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """The profile's ``jobs`` within every cap on queued jobs: beyond it, sbatch fails."""
    count = len(cluster_requests(settings.plan.requests))
    at_once = min(settings.plan.jobs or count, count)
    queued = facts.queued or 0
    findings = []
    for limit, source in submit_limits(settings, facts):
        if at_once + queued > limit:
            already = f" besides the {queued} you have queued now" if queued else ""
            problem = (
                f"jobs: {settings.plan.jobs} lets Snakemake queue {at_once:,} of the plan's "
                f"{count:,} cluster jobs at once{already}, above {source} of {limit:,}: the jobs "
                "beyond it fail to submit"
            )
            change = f"jobs: in {settings.profile}, to at most {max(limit - queued, 1):,}"
            findings.append(Finding("error", "(all)", problem, change))
    return findings


def gpu_types_of(request: JobRequest, facts: ClusterFacts) -> dict[str, str]:
    """The GPU types (:data:`GPU_TYPES` families) a job may get, each with the words that may say
    which variant (its pinned gres type, constraint and gres; else the partition's gres types)."""
    slurm = request.slurm
    said = " ".join(str(slurm.get(key) or "") for key in ("constraint", "gres"))
    pinned = pinned_gpu_type(request)
    if pinned is not None:
        family = gpu_family(pinned[0])
        return {family: f"{pinned[0]} {said}"} if family else {}
    found: dict[str, str] = {}
    for gpu_type in sorted({t for n in facts.nodes_of(request.partition) for t in n.gpus}):
        family = gpu_family(gpu_type)
        if family:
            found[family] = f"{found.get(family, '')} {gpu_type}"
    # several variants offered: the smallest unless the job's own words say which
    return {family: said if said.strip() else described for family, described in found.items()}


def check_pretraining(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """A model's attempts x wall time cover its expected training on the GPUs it will get, with
    one failed attempt to spare (an error where even every attempt falls short of the fast end),
    and it trains in a precision those GPUs have."""
    findings = []
    precision = str((settings.plan.config.get("pretrain") or {}).get("precision", "auto"))
    for rule, requests in by_rule(cluster_requests(settings.plan.requests)).items():
        trained = [r for r in requests if r.expected is not None]
        if not trained:
            continue
        request = min(trained, key=lambda r: sum(r.minutes))
        asked, spare = sum(request.minutes) / 60, (sum(request.minutes) - max(request.minutes)) / 60
        for family in sorted(gpu_types_of(request, facts)):
            if family == "V100" and precision == "bf16":
                problem = "trains in bf16 (config pretrain.precision), which V100s lack"
                findings.append(
                    Finding("error", rule, problem, "config pretrain.precision: auto or fp16")
                )
            hours = [r.expected.hours[family] for r in trained if family in r.expected.hours]
            if not hours:
                continue
            fast, slow = max(hours, key=lambda pair: pair[1])
            if not attempts_fall_short((fast, slow), request.minutes):
                continue
            needed = math.ceil(slow * 60 / max(request.minutes)) + 1
            problem = (
                f"a model is expected to train {fast:,.0f}-{slow:,.0f} h on {request.gpus} "
                f"{family}s (FLOP model, xling.cluster.expected); its {len(request.minutes)} "
                f"attempt(s) give {asked:,.0f} h, {spare:,.0f} h if one fails"
            )
            runtime = settings.runtime(request)
            runtime = "pretrain.runtime_minutes" if runtime == PRETRAIN_KEYS else runtime
            change = (
                f"config pretrain.attempts, to at least {needed}, or {runtime} (within the "
                "partition's MaxTime)"
            )
            findings.append(Finding("error" if fast > asked else "warning", rule, problem, change))
    return findings


def check_stop_margins(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """Each pretraining rule's stop margin comes before its early signal (the profile's
    ``--signal=...@N``): otherwise the signal, the fallback, ends the attempts."""
    return [
        Finding("error", ", ".join(rules), problem, change)
        for (problem, change), rules in stop_margin_refusals(settings.plan).items()
    ]


def memory_job(settings: Settings, rule: str, request: JobRequest) -> tuple[MemoryJob, int] | None:
    """What one process of a pretraining job trains at once (:mod:`xling.cluster.memory`), and
    the block it cuts that from; None where its GPUs cannot split the global batch
    (:func:`check_global_batch` says so)."""
    pretrain = request.pretraining["pretrain"]
    micro_batch = pretraining_settings(settings.plan.config, rule).get("micro_batch")
    try:
        processes = launch_from_resources(request.slurm).world_size
        split = plan_batches(
            int(pretrain.get("world_size") or 1), int(pretrain["batch_size"]), processes
        )
    except ValueError:
        return None
    known = set(EncoderConfig.__dataclass_fields__)
    architecture = {k: v for k, v in request.pretraining["model"].items() if k in known}
    languages = list(request.pretraining["languages"])
    config = EncoderConfig(vocab_size=ASSUMED_VOCAB, languages=languages, **architecture)
    job = MemoryJob(
        config,
        split.streams_at_once(micro_batch),
        int(pretrain["seq_len"]),
        mask_prob=float(pretrain.get("mask_prob", 0.15)),
        half_precision=pretrain.get("precision", "auto") != "fp32",
        distributed=processes > 1,
    )
    return job, split.micro_batch


def check_memory(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """A pretraining process fits the memory of the GPUs it may get (:mod:`xling.cluster.memory`;
    a type of several variants at the smaller, unless the job's gres or constraint names one): a
    warning that names the ``pretrain.micro_batch`` that would fit."""
    findings = []
    for rule, requests in by_rule(cluster_requests(settings.plan.requests)).items():
        request = next((r for r in requests if r.pretraining), None)
        shaped = memory_job(settings, rule, request) if request is not None else None
        if shaped is None:
            continue
        job, block = shaped
        needed = estimate(job).needed_gib()
        for family, described in sorted(gpu_types_of(request, facts).items()):
            gib = gpu_memory_gib(family, described)
            if gib is None or needed <= gib:
                continue
            fits = largest_fitting(job, block, gib)
            problem = (
                f"a process is estimated to need {needed:.1f} GiB at its peak (micro-batches of "
                f"{job.streams} streams; xling.cluster.memory), more than a {gib:g} GB {family} has"
            )
            change = (
                f"config pretrain.micro_batch: {fits} (blocks of {block} streams trained in parts "
                "of at most that; the same update without dropout)"
                if fits
                else "a GPU type with more memory (GPU_TYPE in the profile), or a smaller model"
            )
            findings.append(Finding("warning", rule, problem, change))
    return findings


def pretraining_settings(config: Mapping[str, Any], rule: str) -> Mapping[str, Any]:
    """config ``pretrain`` as the rule trains it: Muller et al.'s multilingual MLM with
    muller.model.pretrain on top."""
    settings = dict(config.get("pretrain") or {})
    if rule == "pretrain_multilingual":
        settings |= (config.get("muller") or {}).get("model", {}).get("pretrain") or {}
    return settings


def check_global_batch(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    """Each pretraining job's processes (GPUs) divide its global batch (``pretrain.world_size`` x
    ``batch_size``), which the job keeps by accumulation: one that does not would stop at its
    start, after its wait in the queue (:mod:`xling.pretrain.batching`)."""
    findings = []
    for rule, requests in by_rule(cluster_requests(settings.plan.requests)).items():
        trained = [r for r in requests if r.expected is not None]
        if not trained:
            continue
        pretrain = pretraining_settings(settings.plan.config, rule)
        if "batch_size" not in pretrain:
            continue
        world_size = int(pretrain.get("world_size") or 1)
        try:
            processes = launch_from_resources(trained[0].slurm).world_size
            plan_batches(world_size, int(pretrain["batch_size"]), processes)
        except ValueError as error:
            change = (
                f"{settings.resource(rule, 'gpu')} (the GPUs), or config pretrain.world_size / "
                "pretrain.batch_size"
            )
            findings.append(Finding("error", rule, str(error), change))
    return findings


CHECKS = (
    check_global_batch,
    check_stop_margins,
    check_partitions,
    check_admission,
    check_nodes,
    check_accounts,
    check_qos_limits,
    check_submit_limit,
    check_pretraining,
    check_memory,
)


def preflight(settings: Settings, facts: ClusterFacts) -> list[Finding]:
    return [finding for check in CHECKS for finding in check(settings, facts)]


# --------------------------------------------------------------------------- report
def format_findings(findings: Sequence[Finding], facts: ClusterFacts) -> list[str]:
    lines = []
    errors = [f for f in findings if f.severity == "error"]
    warnings = [f for f in findings if f.severity == "warning"]
    for title, group in (("ERRORS", errors), ("Warnings", warnings)):
        if group:
            lines += ["", f"{title} ({len(group)}):"]
            for number, finding in enumerate(group, 1):
                lines.append(f"  {number}. {finding.rule}: {finding.problem}.")
                lines.append(f"     Change: {finding.change}.")
    if facts.unread:
        lines += ["", "Not checked (could not be read here):"]
        lines += [f"  - {reason}" for reason in facts.unread]
    if not errors:
        lines += ["", "No check failed." if not facts.unread else "No check that ran failed."]
    return lines


def format_gpu_hours(plan: StudyPlan) -> list[str]:
    requests = cluster_requests(plan.requests)
    asked = sum(r.gpus * r.minutes[0] / 60 for r in requests)
    worst = sum(r.gpus * sum(r.minutes) / 60 for r in requests)
    precision = (plan.config.get("pretrain") or {}).get("precision", "auto")
    resolved = ", ".join(f"{gpu} {p}" for gpu, p in GPU_TYPES.items())
    lines = [
        "",
        f"GPU-hours asked: {asked:,.1f} at the first attempt, {worst:,.1f} if every job used "
        f"every retry. Expected per GPU type (pretrain.precision {precision}: {resolved}):",
    ]
    return lines + format_expected(requests)[2:]


def format_disk_section(plan: StudyPlan, workdir: Path) -> tuple[list[str], list[Finding]]:
    study = plan.config.get("study", "")
    results = workdir / "results" / str(study)
    lines, left, peak = format_disk(plan.requests, plan.config, plan.jobs)
    where = results
    while not where.exists():
        where = where.parent
    free = shutil.disk_usage(where).free / 1e9
    header = [
        "",
        f"Disk under {results} for the jobs still to run (estimates, GB; how each is derived: "
        f"xling.cluster.disk), {free:,.0f} GB free there:",
    ]
    findings = []
    change = "results/ on a file system with room (a symlink to scratch), or --directory"
    if left > free:
        problem = f"the jobs leave about {left:,.0f} GB under {results}; {free:,.0f} GB are free"
        findings.append(Finding("error", "(all)", problem, change))
    elif peak > free:
        problem = (
            f"the jobs hold up to about {peak:,.0f} GB at once under {results}; {free:,.0f} GB "
            "are free"
        )
        findings.append(Finding("warning", "(all)", problem, change))
    return header + lines, findings


def settings_for(plan: StudyPlan, profile: str) -> Settings:
    path = profile_file(profile)
    text = path.read_text(encoding="utf-8") if path is not None else ""
    shown = (
        str(path.relative_to(Path.cwd())) if path and path.is_relative_to(Path.cwd()) else str(path)
    )
    return Settings(plan, shown, re.search(r"^\s*-\s*GPU_TYPE\s*=", text, re.MULTILINE) is not None)


def main(argv: Sequence[str] | None = None, runner: Runner = run_command) -> int:
    parser = plan_parser("python -m xling.cluster.preflight", __doc__)
    args = parser.parse_args(argv)
    workdir = Path(args.directory or Path.cwd()).resolve()
    plan = read_plan(args.profile, args.configfile, args.targets, workdir)
    settings = settings_for(plan, args.profile)
    facts = read_cluster(runner)
    findings = preflight(settings, facts)
    disk_lines, disk_findings = format_disk_section(plan, workdir)
    findings += disk_findings
    count = len(cluster_requests(plan.requests))
    lines = [
        f"Preflight of study {plan.config.get('study')!r} with {settings.profile}: "
        f"{len(plan.requests):,} jobs to run, {count:,} of them on the cluster "
        f"(jobs: {plan.jobs} at once), checked against the cluster of {facts.user}."
    ]
    lines += disk_lines + format_gpu_hours(plan) + format_findings(findings, facts)
    print("\n".join(lines))
    return 1 if any(f.severity == "error" for f in findings) else 0


if __name__ == "__main__":
    sys.exit(main())
