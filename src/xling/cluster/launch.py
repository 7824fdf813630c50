"""How a pretraining job starts its processes, decided from the job's cluster resources.

* no GPUs, or one: a single process (the caller trains in its own process);
* ``gpu: N`` on one node: ``torchrun --standalone`` with N processes;
* ``mpi: srun`` with ``nodes`` and ``gpus_per_node``: SLURM's snakemake jobstep does not wrap such
  a job in ``srun -n1``, so this module starts one ``torchrun`` per node itself, through ``srun``,
  and the nodes meet at a c10d rendezvous on the first node (the one running the batch script).

Resource names are those of the SLURM profile (``slurm/config.yaml``); ``gpus_per_node`` is this
workflow's own name, since the plugin passes ``--gpus-per-node`` only inside ``slurm_extra``. Any
number of processes trains the config's global batch (:mod:`xling.pretrain.batching` splits it).

A job stops on its own ``pretrain.stop_margin_minutes`` before its time limit
(:mod:`xling.jobs.deadline`); SLURM's early signal (the profile's ``--signal=TERM@600``) is the
fallback, which this script outlives while the trainers checkpoint (:func:`run_torchrun`). The
margin must exceed the signal's lead plus the 60 s SLURM may send it early, or the signal comes
first (:func:`check_stop_margin`, which the plan, the preflight and the job script apply).
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from xling.cluster.gpus import gres_gpus_per_node
from xling.jobs.signals import stop_signals_handled

# Rendezvous ports, spread by job id to avoid clashes: 20000-31999, below Linux's ephemeral range
# (32768-60999, net.ipv4.ip_local_port_range), from which any outgoing connection may take one.
PORT_BASE, PORT_SPAN = 20000, 12000
# How long torchrun lets its processes checkpoint and exit after SIGTERM before it kills them
# (torch's default, 30 s, is less than writing a paper-scale checkpoint may take): the profile's
# early signal (--signal=TERM@600) less the 60 s SLURM may send it early, so that torchrun's kill
# comes before SLURM's at the time limit.
SHUTDOWN_TIMEOUT_SECONDS = 540
SIGNAL_EARLY_SECONDS = 60  # SLURM may send --signal up to this much before its @time
_GPUS_PER_NODE_FLAG = re.compile(r"--gpus-per-node[= ](?:[A-Za-z0-9_.]+:)?(\d+)\b")
_SIGNAL_FLAG = re.compile(r"--signal[= ](?:[RB]{1,2}:)?(\w+)(?:@(\d+))?")


@dataclass(frozen=True)
class Launch:
    """``nodes`` x ``processes_per_node`` training processes; ``launcher`` starts one per node."""

    nodes: int = 1
    processes_per_node: int = 1
    launcher: str | None = None  # e.g. "srun": the job starts its own step on every node
    # The job's memory (resources mem_mb, else mem_mb_per_cpu), which the srun step asks for
    # itself: it cannot count on inheriting the job's (the jobstep plugin drops SLURM_*).
    memory_mb_per_node: int | None = None
    memory_mb_per_cpu: int | None = None

    @property
    def world_size(self) -> int:
        return self.nodes * self.processes_per_node

    @property
    def in_process(self) -> bool:
        return self.world_size == 1 and self.launcher is None


def _positive_int(resources: Mapping[str, object], name: str, default: int) -> int:
    value = resources.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = -1
    if number < 0 or isinstance(value, bool):
        raise ValueError(
            f"pretraining resource {name}={value!r} must be a whole number >= 0; fix it under "
            "set-resources: pretrain_model in the SLURM profile (slurm/config.yaml)"
        )
    return number


def launch_from_resources(resources: Mapping[str, object]) -> Launch:
    """The process layout a job's resources ask for (see the module docstring)."""
    nodes = max(_positive_int(resources, "nodes", 1), 1)
    launcher = str(resources.get("mpi") or "").strip() or None
    per_node = _positive_int(resources, "gpus_per_node", 0)
    if nodes > 1 and (launcher is None or not per_node):
        raise ValueError(
            f"pretraining on nodes={nodes} needs the resources mpi (e.g. srun, so that the job "
            "starts one torchrun per node itself) and gpus_per_node; see the two-node example "
            "under set-resources: pretrain_model in slurm/config.yaml"
        )
    extra = _GPUS_PER_NODE_FLAG.search(str(resources.get("slurm_extra") or ""))
    if per_node and extra and int(extra.group(1)) != per_node:
        raise ValueError(
            f"pretraining resources disagree: gpus_per_node={per_node} but slurm_extra asks "
            f"SLURM for --gpus-per-node={extra.group(1)}; make them equal in slurm/config.yaml"
        )
    if not per_node:
        per_node = _positive_int(resources, "gpu", 0) or _positive_int(resources, "gpus", 0)
    if not per_node:  # sites that ask for typed GPUs: gres "gpu:a100:8"
        per_node = gres_gpus_per_node(resources)
    return Launch(
        nodes=nodes,
        processes_per_node=max(per_node, 1),
        launcher=launcher,
        memory_mb_per_node=_positive_int(resources, "mem_mb", 0) or None,
        memory_mb_per_cpu=_positive_int(resources, "mem_mb_per_cpu", 0) or None,
    )


def signal_lead_seconds(slurm_extra: object) -> int | None:
    """How long before its time limit a job's ``--signal=[R|B:]SIG[@TIME]`` (in the SLURM
    profile's ``slurm_extra``) comes: TIME, SLURM's default 60 s without one; None for none."""
    found = _SIGNAL_FLAG.search(str(slurm_extra or ""))
    if found is None:
        return None
    return int(found.group(2)) if found.group(2) else 60


def check_stop_margin(margin_minutes: float, slurm_extra: object) -> tuple[str, str] | None:
    """Why a stop margin (config ``pretrain.stop_margin_minutes``) loses work with the job's
    early signal, and what to change; None where it is above the signal's lead plus the 60 s
    SLURM may send it early. Otherwise the signal, not the trainer's own stop, ends the attempt,
    and the steps since the last checkpoint are lost wherever the checkpoint cannot finish."""
    lead = signal_lead_seconds(slurm_extra)
    if lead is None or margin_minutes * 60 > lead + SIGNAL_EARLY_SECONDS:
        return None
    needed = (lead + SIGNAL_EARLY_SECONDS) / 60
    problem = (
        f"config pretrain.stop_margin_minutes = {margin_minutes:g} is not above the early signal "
        f"of its slurm_extra (--signal ...@{lead}: {lead} s before the time limit, and SLURM may "
        f"send it {SIGNAL_EARLY_SECONDS} s earlier): the signal would come before the trainer "
        "stops itself"
    )
    change = (
        f"config pretrain.stop_margin_minutes, to more than {needed:g} (e.g. {int(needed) + 4}), "
        "or a shorter --signal lead in slurm_extra of the pretraining rules in the SLURM profile "
        "(slurm/config.yaml)"
    )
    return problem, change


def rendezvous_port(job_id: str | None) -> int:
    """A port for the c10d rendezvous, fixed per SLURM job so that all nodes agree on it."""
    digits = re.sub(r"\D", "", job_id or "")
    return PORT_BASE + int(digits or 0) % PORT_SPAN


def torchrun_command(
    launch: Launch,
    module_args: Sequence[str],
    *,
    module: str = "xling.pretrain",
    python: str = sys.executable,
    rendezvous_host: str = "localhost",
    job_id: str | None = None,
    cpus_per_node: int | None = None,
) -> list[str]:
    """The command that starts ``python -m module module_args`` on every process of ``launch``."""
    torchrun = [python, "-m", "torch.distributed.run"]
    per_node = ["--nproc-per-node", str(launch.processes_per_node)]
    target = ["-m", module, *module_args]
    if launch.launcher is None:
        return [*torchrun, "--standalone", "--nnodes", "1", *per_node, *target]
    step = [*shlex.split(launch.launcher), f"--nodes={launch.nodes}", f"--ntasks={launch.nodes}"]
    step += ["--ntasks-per-node=1", "--kill-on-bad-exit=1"]
    # The step asks for its GPUs and memory itself: inheriting the job's needs the SLURM_*
    # variables that Snakemake's jobstep plugin strips.
    step.append(f"--gpus-per-node={launch.processes_per_node}")
    if launch.memory_mb_per_node:
        step.append(f"--mem={launch.memory_mb_per_node}M")
    elif launch.memory_mb_per_cpu:
        step.append(f"--mem-per-cpu={launch.memory_mb_per_cpu}M")
    if cpus_per_node:
        step.append(f"--cpus-per-task={cpus_per_node}")
    rendezvous = [
        "--nnodes",
        str(launch.nodes),
        "--rdzv-backend",
        "c10d",
        "--rdzv-endpoint",
        f"{rendezvous_host}:{rendezvous_port(job_id)}",
        "--rdzv-id",
        job_id or "xling-pretrain",
    ]
    return [*step, *torchrun, *rendezvous, *per_node, *target]


def run_torchrun(
    launch: Launch,
    module_args: Sequence[str],
    *,
    cpus_per_node: int | None = None,
    output: IO | None = None,
) -> None:
    """Start ``python -m xling.pretrain module_args`` on all processes of ``launch`` and wait.

    Output (of every process) goes to ``output`` (default: this process's stdout). The processes
    import xling from the same source tree as this one, since no conda env installs it.
    """
    output = output or sys.stdout
    command = torchrun_command(
        launch,
        module_args,
        rendezvous_host=socket.gethostname(),  # this job's first node: it runs the batch script
        job_id=os.environ.get("SLURM_JOB_ID"),
        cpus_per_node=cpus_per_node,
    )
    src = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    env.setdefault("TORCH_ELASTIC_SHUTDOWN_TIMEOUT", str(SHUTDOWN_TIMEOUT_SECONDS))
    shown = " ".join(command[: len(command) - len(module_args)])
    print(f"{launch.world_size} processes: {shown} ...", file=output, flush=True)

    # SLURM's early signal reaches every process of the job step: the trainers (which checkpoint
    # and exit), torchrun (which passes it on and waits for them), and this script, whose default
    # action is to die at once; Snakemake would then fail the job and SLURM end the step, killing
    # the trainers before their checkpoint. So the signal is noted here, not obeyed. A Python
    # handler, not SIG_IGN: an ignored signal would stay ignored in torchrun and its trainers.
    def note(signum, frame) -> None:
        print(f"signal {signum}: waiting for the trainers to checkpoint", file=output, flush=True)

    with stop_signals_handled(note):
        done = subprocess.run(command, stdout=output, stderr=subprocess.STDOUT, env=env)
    if done.returncode != 0:
        raise RuntimeError(
            f"distributed pretraining exited with status {done.returncode} (output above); "
            "rerun the job to resume from its last checkpoint"
        )
