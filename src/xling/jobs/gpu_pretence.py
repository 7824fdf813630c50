"""The one switch that lets a GPU job without a visible GPU train on the CPU.

Set ``XLING_ALLOW_MISSING_GPUS=1`` where GPUs are only pretended, such as the test suite's SLURM
cluster with fake gres devices: the jobs' GPU check (xling.cluster.gpus) and the torchrun
processes (xling.pretrain.distributed) both read it. Torch-free, in the jobs layer that both
stand on.
"""

ALLOW_VARIABLE = "XLING_ALLOW_MISSING_GPUS"
