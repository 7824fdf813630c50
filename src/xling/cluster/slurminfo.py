"""What the live SLURM cluster offers a job, read from its own commands.

* ``scontrol show partition --oneliner``: each partition's State, MaxTime, MinNodes and MaxNodes,
  MaxCPUsPerNode, MaxMemPerNode or MaxMemPerCPU, DefMemPerCPU / DefMemPerNode / DefMemPerGPU
  (JobDefaults), AllowAccounts or DenyAccounts, AllowQos or DenyQos, AllowGroups, AllocNodes,
  RootOnly, ReqResv, ExclusiveUser, its QOS and its TRES (what it has in all): everything SLURM
  checks a job against at submission (``xling.cluster.preflight`` says which refuse);
* ``id -Gn USER``: the user's groups, for a partition's AllowGroups;
* ``sinfo --Node``: each node's partitions, CPUs, memory, GPUs by type (gres) and features;
* ``scontrol show config``: MaxJobCount, the most jobs the controller holds at once (without an
  accounting database, the only cap on submissions);
* ``sacctmgr show associations``, ``show user`` and ``show qos`` (where the cluster keeps
  accounts): the user's accounts and default account, their QOS, MaxSubmitJobs, MaxJobs and
  MaxWall, and each QOS's per-user limits;
* ``squeue``: how many jobs the user has queued already (they count against the limits).

Each reader returns what it found, or None with the reason in :attr:`ClusterFacts.unread`: a
login node without ``sacctmgr``, or a cluster without accounting, still gets every other check.
The parsers take the commands' text, so that tests feed them recorded outputs.
"""

from __future__ import annotations

import getpass
import re
import shutil
import socket
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

UNLIMITED = ("UNLIMITED", "INFINITE", "NONE", "N/A", "")
# A command's (return code, stdout, stderr); replaced by recorded outputs in the tests.
Runner = Callable[[Sequence[str]], tuple[int, str, str]]


def run_command(argv: Sequence[str]) -> tuple[int, str, str]:
    if shutil.which(argv[0]) is None:
        return 127, "", f"no {argv[0]} on this machine"
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return 124, "", f"{argv[0]} did not answer within 60 s"
    return done.returncode, done.stdout, done.stderr


# --------------------------------------------------------------------------- values
def minutes_of(text: str) -> float | None:
    """A SLURM time limit in minutes; None for no limit. SLURM's forms: ``minutes``,
    ``minutes:seconds``, ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes`` and
    ``days-hours:minutes:seconds``."""
    text = text.strip()
    if text.upper() in UNLIMITED:
        return None
    days, _, clock = text.rpartition("-")
    parts = [float(part) for part in clock.split(":")]
    if days:
        hours, minutes, seconds = [*parts, 0.0, 0.0][:3]
        return float(days) * 1440 + hours * 60 + minutes + seconds / 60
    if len(parts) == 3:
        return parts[0] * 60 + parts[1] + parts[2] / 60
    if len(parts) == 2:
        return parts[0] + parts[1] / 60
    return parts[0]


def count_of(text: str) -> int | None:
    """A SLURM count; None for no limit (empty, UNLIMITED)."""
    text = text.strip()
    return None if text.upper() in UNLIMITED else int(text)


def names_of(text: str) -> tuple[str, ...] | None:
    """A comma-separated list; None for ``ALL`` (no restriction)."""
    text = text.strip()
    if text.upper() in ("ALL", "(NULL)"):
        return None
    return tuple(name for name in text.split(",") if name and name.upper() != "(NULL)")


def split_outside_parentheses(text: str, brackets: str = "()") -> list[str]:
    """``gpu:a100:4(S:0-1),gpu:v100:2(S:0)`` -> its two items: commas inside ``brackets`` (a pair
    of characters: ``()``, or ``[]`` for host ranges) belong to the item."""
    opening, closing = brackets
    items, depth, current = [], 0, ""
    for char in text:
        depth += (char == opening) - (char == closing)
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    return [item for item in [*items, current] if item]


def gpus_of_gres(text: str) -> dict[str, int]:
    """GPUs by type in a node's gres: ``gpu:a100:8(S:0-1)`` -> {"a100": 8}; an untyped
    ``gpu:2`` -> {"": 2}; no GPUs (``(null)``) -> {}."""
    gpus: dict[str, int] = {}
    for item in split_outside_parentheses(text.strip()):
        parts = item.split("(", 1)[0].split(":")
        if parts[0] != "gpu" or len(parts) < 2:
            continue
        gpu_type = parts[1] if len(parts) > 2 else ""
        count = re.match(r"\d+", parts[-1])
        if count:
            gpus[gpu_type] = gpus.get(gpu_type, 0) + int(count.group())
    return gpus


def expand_hostlist(text: str) -> list[str]:
    """SLURM's host list: ``login[01-02,05],head`` -> login01, login02, login05, head."""
    names: list[str] = []
    for item in split_outside_parentheses(text.strip(), "[]"):
        found = re.search(r"\[([^\]]*)\]", item)
        if found is None:
            names.append(item)
            continue
        head, tail = item[: found.start()], item[found.end() :]
        for span in found.group(1).split(","):
            low, _, high = span.partition("-")
            for number in range(int(low), int(high or low) + 1):
                names += expand_hostlist(f"{head}{number:0{len(low)}d}{tail}")
    return names


def megabytes_of(text: str) -> float | None:
    """A memory size in MB (``500000``, ``2000G``, ``3200000M``); None for no limit."""
    text = text.strip()
    if text.upper() in UNLIMITED:
        return None
    found = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTP]?)", text.upper())
    if found is None:
        return None
    scale = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024**2, "P": 1024**3}
    return float(found.group(1)) * scale[found.group(2)]


def key_values(line: str) -> dict[str, str]:
    """``Key=Value Key2=Value2`` (scontrol's one-line records); a value may hold ``=``."""
    fields = {}
    for token in line.split():
        key, sep, value = token.partition("=")
        if sep:
            fields[key] = value
    return fields


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Partition:
    name: str
    max_minutes: float | None  # MaxTime; None = no limit
    max_nodes: int | None
    max_mem_per_node_mb: float | None
    state: str
    allow_accounts: tuple[str, ...] | None  # None = every account
    deny_accounts: tuple[str, ...]
    allow_qos: tuple[str, ...] | None
    qos: str  # the partition's own QOS ("" for none)
    max_time_text: str = ""  # as SLURM prints it, for messages
    min_nodes: int = 0
    max_cpus_per_node: int | None = None
    max_mem_per_cpu_mb: float | None = None
    default_memory: dict[str, float] = field(default_factory=dict)  # DefMemPer{CPU,Node,GPU}
    deny_qos: tuple[str, ...] = ()
    allow_groups: tuple[str, ...] | None = None  # None = every group
    alloc_nodes: tuple[str, ...] | None = None  # hosts jobs may be submitted from; None = any
    root_only: bool = False
    requires_reservation: bool = False  # ReqResv
    exclusive_user: bool = False  # its nodes run one user's jobs at a time: no refusal
    tres: dict[str, str] = field(default_factory=dict)  # its totals: cpu, mem, node, gres/gpu


@dataclass(frozen=True)
class Node:
    name: str
    partitions: tuple[str, ...]
    cpus: int
    memory_mb: int
    gpus: dict[str, int]  # by type ("" = untyped)
    features: tuple[str, ...]
    state: str


@dataclass(frozen=True)
class Association:
    account: str
    partition: str  # "" = every partition
    qos: tuple[str, ...]
    default_qos: str
    max_submit: int | None
    max_jobs: int | None
    max_wall_minutes: float | None
    grp_submit: int | None


@dataclass(frozen=True)
class Qos:
    name: str
    max_wall_minutes: float | None
    max_submit_per_user: int | None
    max_jobs_per_user: int | None
    grp_submit: int | None


def parse_partitions(text: str) -> dict[str, Partition]:
    """``scontrol show partition --oneliner``, one partition a line."""
    partitions = {}
    for line in text.splitlines():
        fields = key_values(line)
        if "PartitionName" not in fields:
            continue
        qos = fields.get("QoS", "N/A")
        partitions[fields["PartitionName"]] = Partition(
            name=fields["PartitionName"],
            max_minutes=minutes_of(fields.get("MaxTime", "UNLIMITED")),
            max_nodes=count_of(fields.get("MaxNodes", "UNLIMITED")),
            max_mem_per_node_mb=megabytes_of(fields.get("MaxMemPerNode", "UNLIMITED")),
            state=fields.get("State", ""),
            allow_accounts=names_of(fields.get("AllowAccounts", "ALL")),
            deny_accounts=names_of(fields.get("DenyAccounts", "")) or (),
            allow_qos=names_of(fields.get("AllowQos", "ALL")),
            qos="" if qos.upper() in UNLIMITED else qos,
            max_time_text=fields.get("MaxTime", ""),
            **_limits(fields),
        )
    return partitions


def _limits(fields: dict[str, str]) -> dict:
    """The fields of :class:`Partition` after its first ten, from one ``scontrol`` record."""
    defaults = {**fields, **key_values(fields.get("JobDefaults", "").replace(",", " "))}
    default_memory = {
        kind: megabytes_of(defaults[f"DefMemPer{kind}"])
        for kind in ("CPU", "Node", "GPU")
        if megabytes_of(defaults.get(f"DefMemPer{kind}", "")) is not None
    }
    alloc_nodes = fields.get("AllocNodes", "ALL")
    tres = [item.partition("=") for item in fields.get("TRES", "").split(",") if item]
    return {
        "min_nodes": count_of(fields.get("MinNodes", "0")) or 0,
        "max_cpus_per_node": count_of(fields.get("MaxCPUsPerNode", "UNLIMITED")),
        "max_mem_per_cpu_mb": megabytes_of(fields.get("MaxMemPerCPU", "UNLIMITED")),
        "default_memory": default_memory,
        "deny_qos": names_of(fields.get("DenyQos", "")) or (),
        "allow_groups": names_of(fields.get("AllowGroups", "ALL")),
        "alloc_nodes": (
            None if alloc_nodes.upper() == "ALL" else tuple(expand_hostlist(alloc_nodes))
        ),
        "root_only": fields.get("RootOnly", "NO").upper() == "YES",
        "requires_reservation": fields.get("ReqResv", "NO").upper() == "YES",
        "exclusive_user": fields.get("ExclusiveUser", "NO").upper() == "YES",
        "tres": {key: value for key, _, value in tres},
    }


NODE_FORMAT = "%N|%P|%c|%m|%G|%f|%t"  # sinfo --Node: one line per node and partition


def parse_nodes(text: str) -> list[Node]:
    """``sinfo --Node --noheader --format='%N|%P|%c|%m|%G|%f|%t'``: a node of several partitions
    comes once per partition; merged here."""
    merged: dict[str, Node] = {}
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) != 7:
            continue
        name, partition, cpus, memory, gres, features, state = fields
        partition = partition.rstrip("*")  # sinfo marks the default partition
        earlier = merged.get(name)
        partitions = (*earlier.partitions, partition) if earlier else (partition,)
        merged[name] = Node(
            name=name,
            partitions=partitions,
            cpus=int(re.match(r"\d+", cpus).group()),
            memory_mb=int(re.match(r"\d+", memory).group()),
            gpus=gpus_of_gres(gres),
            features=names_of(features) or (),
            state=state,
        )
    return list(merged.values())


def parse_max_job_count(text: str) -> int | None:
    """MaxJobCount of ``scontrol show config``."""
    found = re.search(r"^MaxJobCount\s*=\s*(\d+)", text, re.MULTILINE)
    return int(found.group(1)) if found else None


ASSOCIATION_FORMAT = "Account,Partition,QOS,DefaultQOS,MaxSubmit,MaxJobs,MaxWall,GrpSubmit"
QOS_FORMAT = "Name,MaxWall,MaxSubmitPU,MaxJobsPU,GrpSubmit"


def parse_associations(text: str) -> list[Association]:
    """``sacctmgr --noheader --parsable2 show associations where user=... format=`` with
    :data:`ASSOCIATION_FORMAT`."""
    found = []
    for line in text.splitlines():
        fields = line.split("|")
        if len(fields) != 8 or not fields[0]:
            continue
        account, partition, qos, default_qos, submit, jobs, wall, grp_submit = fields
        found.append(
            Association(
                account=account,
                partition=partition,
                qos=names_of(qos) or (),
                default_qos=default_qos,
                max_submit=count_of(submit),
                max_jobs=count_of(jobs),
                max_wall_minutes=minutes_of(wall),
                grp_submit=count_of(grp_submit),
            )
        )
    return found


def parse_qos(text: str) -> dict[str, Qos]:
    """``sacctmgr --noheader --parsable2 show qos format=`` with :data:`QOS_FORMAT`."""
    found = {}
    for line in text.splitlines():
        fields = line.split("|")
        if len(fields) != 5 or not fields[0]:
            continue
        name, wall, submit, jobs, grp_submit = fields
        found[name] = Qos(
            name, minutes_of(wall), count_of(submit), count_of(jobs), count_of(grp_submit)
        )
    return found


# --------------------------------------------------------------------------- the cluster
@dataclass
class ClusterFacts:
    """What could be read; None where a command failed, with the reason in ``unread``."""

    partitions: dict[str, Partition] | None = None
    nodes: list[Node] | None = None
    max_job_count: int | None = None
    associations: list[Association] | None = None
    qos: dict[str, Qos] | None = None
    queued: int | None = None  # the user's jobs in the queue now
    default_account: str = ""  # what a job that names no account runs under
    user: str = ""
    groups: tuple[str, ...] | None = None  # the user's groups (id -Gn)
    host: str = ""  # this machine, which submits the jobs (a partition's AllocNodes)
    unread: list[str] = field(default_factory=list)

    def nodes_of(self, partition: str) -> list[Node]:
        return [node for node in self.nodes or [] if partition in node.partitions]

    def association(self, account: str, partition: str) -> Association | None:
        """The association a job of ``account`` (none: the default account) on ``partition``
        runs under: the one of that partition, else the account's own."""
        account = account or self.default_account
        mine = [a for a in self.associations or [] if a.account == account]
        for association in mine:
            if association.partition == partition:
                return association
        return next((a for a in mine if not a.partition), None)


def _read(runner: Runner, argv: list[str], what: str, facts: ClusterFacts) -> str | None:
    code, out, err = runner(argv)
    if code == 0:
        return out
    last = (err.strip().splitlines() or [f"exit status {code}"])[-1]
    words = [w for w in argv if not w.startswith("-") and "=" not in w and w != "where"]
    facts.unread.append(f"{what}: `{' '.join(words)}` failed ({last})")
    return None


def read_cluster(
    runner: Runner = run_command, user: str | None = None, host: str | None = None
) -> ClusterFacts:
    """Everything this module reads, from the cluster this machine (``host``) submits to."""
    facts = ClusterFacts(user=user or getpass.getuser(), host=host or socket.gethostname())
    text = _read(runner, ["scontrol", "show", "partition", "--oneliner"], "partitions", facts)
    if text is not None:
        facts.partitions = parse_partitions(text)
    text = _read(
        runner, ["sinfo", "--Node", "--noheader", f"--format={NODE_FORMAT}"], "nodes", facts
    )
    if text is not None:
        facts.nodes = parse_nodes(text)
    text = _read(runner, ["scontrol", "show", "config"], "MaxJobCount", facts)
    if text is not None:
        facts.max_job_count = parse_max_job_count(text)
    query = ["sacctmgr", "--noheader", "--parsable2", "show", "associations"]
    query += ["where", f"user={facts.user}", f"format={ASSOCIATION_FORMAT}"]
    text = _read(runner, query, "accounts and their limits", facts)
    if text is not None:
        facts.associations = parse_associations(text)
    query = ["sacctmgr", "--noheader", "--parsable2", "show", "user", facts.user]
    text = _read(runner, [*query, "format=DefaultAccount"], "default account", facts)
    if text is not None:
        facts.default_account = text.strip().split("\n")[0].strip()
    query = ["sacctmgr", "--noheader", "--parsable2", "show", "qos", f"format={QOS_FORMAT}"]
    text = _read(runner, query, "QOS limits", facts)
    if text is not None:
        facts.qos = parse_qos(text)
    text = _read(
        runner, ["squeue", "--noheader", "--user", facts.user, "--format=%i"], "queue", facts
    )
    if text is not None:
        facts.queued = len(text.split())
    text = _read(runner, ["id", "-Gn", facts.user], "groups", facts)
    if text is not None:
        facts.groups = tuple(text.split())
    return facts
