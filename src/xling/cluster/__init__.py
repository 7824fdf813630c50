"""Running the study on a SLURM cluster: how a pretraining job starts its processes, and what the
study asks of the cluster before it is submitted (``python -m xling.cluster.plan``).

The SLURM profile itself is ``slurm/config.yaml``; docs/cluster.md is the guide.
"""

from xling.cluster.launch import Launch, launch_from_resources, run_torchrun, torchrun_command

__all__ = ["Launch", "launch_from_resources", "run_torchrun", "torchrun_command"]
