"""How a pretraining job starts its processes, decided from the job's cluster resources.

* no GPUs, or one: a single process (the caller trains in its own process);
* ``gpu: N`` on one node: ``torchrun --standalone`` with N processes;
* ``mpi: srun`` with ``nodes`` and ``gpus_per_node``: SLURM's snakemake jobstep does not wrap such
  a job in ``srun -n1``, so this module starts one ``torchrun`` per node itself, through ``srun``,
  and the nodes meet at a c10d rendezvous on the first node (the one running the batch script).

Resource names are those of the SLURM profile (``slurm/config.yaml``); ``gpus_per_node`` is this
workflow's own name, since the plugin passes ``--gpus-per-node`` only inside ``slurm_extra``. Any
number of processes trains the config's global batch (:mod:`xling.pretrain.batching` splits it).

A job stops on its own before its time limit (:mod:`xling.jobs.deadline`); SLURM's early signal is
the fallback, which this script outlives while the trainers checkpoint (:func:`run_torchrun`).
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

PORT_BASE, PORT_SPAN = 20000, 20000  # rendezvous ports, spread by job id to avoid clashes
# How long torchrun lets its processes checkpoint and exit after SIGTERM before it kills them
# (torch's default, 30 s, is less than writing a paper-scale checkpoint may take); below the 600 s
# of the profile's early signal (--signal=TERM@600), so that SLURM's own kill comes after it.
SHUTDOWN_TIMEOUT_SECONDS = 540
_GPUS_PER_NODE_FLAG = re.compile(r"--gpus-per-node[= ](?:[A-Za-z0-9_.]+:)?(\d+)\b")


@dataclass(frozen=True)
class Launch:
    """``nodes`` x ``processes_per_node`` training processes; ``launcher`` starts one per node."""

    nodes: int = 1
    processes_per_node: int = 1
    launcher: str | None = None  # e.g. "srun": the job starts its own step on every node

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
    return Launch(nodes=nodes, processes_per_node=max(per_node, 1), launcher=launcher)


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
