"""Running the study on a SLURM cluster: how a pretraining job starts its processes, which torch
build a GPU job needs, what the study asks of the cluster (``python -m xling.cluster.plan``) and
whether the cluster can give it, checked before anything is submitted
(``python -m xling.cluster.preflight``).

The SLURM profile itself is ``slurm/config.yaml``; docs/cluster.md is the guide.
"""

from xling.cluster.launch import Launch, launch_from_resources, run_torchrun, torchrun_command

__all__ = ["Launch", "launch_from_resources", "run_torchrun", "torchrun_command"]
