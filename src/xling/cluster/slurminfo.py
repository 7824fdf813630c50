"""What the live SLURM cluster offers a job, read from its own commands.

* ``scontrol show partition --oneliner``: each partition's MaxTime, MaxNodes, MaxMemPerNode,
  State, AllowAccounts, DenyAccounts, AllowQos and partition QOS;
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


def split_outside_parentheses(text: str) -> list[str]:
    """``gpu:a100:4(S:0-1),gpu:v100:2(S:0)`` -> its two items."""
    items, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
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
        memory = fields.get("MaxMemPerNode", "UNLIMITED")
        qos = fields.get("QoS", "N/A")
        partitions[fields["PartitionName"]] = Partition(
            name=fields["PartitionName"],
            max_minutes=minutes_of(fields.get("MaxTime", "UNLIMITED")),
            max_nodes=count_of(fields.get("MaxNodes", "UNLIMITED")),
            max_mem_per_node_mb=None if memory.upper() in UNLIMITED else float(memory),
            state=fields.get("State", ""),
            allow_accounts=names_of(fields.get("AllowAccounts", "ALL")),
            deny_accounts=names_of(fields.get("DenyAccounts", "")) or (),
            allow_qos=names_of(fields.get("AllowQos", "ALL")),
            qos="" if qos.upper() in UNLIMITED else qos,
            max_time_text=fields.get("MaxTime", ""),
        )
    return partitions


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


def read_cluster(runner: Runner = run_command, user: str | None = None) -> ClusterFacts:
    """Everything this module reads, from the cluster this machine submits to."""
    facts = ClusterFacts(user=user or getpass.getuser())
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
    return facts
