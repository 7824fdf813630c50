"""How a step's global batch is split over the job's processes and micro-batches.

The config fixes the global batch: ``pretrain.world_size`` x ``pretrain.batch_size`` streams a step
(Wu et al. 3.1: 8 GPUs x 96 = 768; one process's ``batch_size`` where ``world_size`` is unset, as
in the demo). The job's processes (GPUs) may be fewer or more: each takes an equal share of the
step's streams and, where the share is larger than ``batch_size``, trains it in several
micro-batches whose gradients add up before the one optimizer step (gradient accumulation). The
learning rate, schedule and step count are the global batch's whatever the split.

A step's streams are numbered ``0 .. global_batch - 1`` and cut into blocks of
:attr:`BatchPlan.micro_batch` streams (``batch_size`` wherever the processes divide
``world_size``); process ``rank`` trains the blocks ``rank x accumulation`` to ``(rank + 1) x
accumulation - 1``, in that order. A block's masks and dropout are drawn from the block's number
(:mod:`xling.pretrain.loop`), so two splits with the same blocks train the same blocks, only on
other processes: 1 process accumulating 2 blocks computes what 2 processes of 1 do, up to the
order of float sums.

With more processes than ``world_size`` (16 GPUs for the paper's 8 x 96), the blocks stay of
``batch_size`` streams and :attr:`BatchPlan.sharing` processes train each block between them: each
masks the whole block, from its number, and trains its own equal part (process ``rank``: block
``rank // sharing``, part ``rank % sharing``), so 16 processes of 48 compute what 8 of 96 do.

For memory, ``pretrain.micro_batch`` cuts each block further, into the fewest equal parts of at
most that many streams (:func:`block_parts`), trained one after the other with their gradients
added. A block is masked whole before it is cut, so the masks, and without dropout the update,
do not depend on ``micro_batch``; dropout inside a cut block is drawn per part and so differs.

Torch-free: the job script checks the split before it starts any process.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BatchPlan:
    """``processes`` x ``accumulation`` micro-batches of ``micro_batch`` streams: one step.

    The micro-batches are the step's blocks, from whose numbers masks and dropout are drawn;
    config ``pretrain.micro_batch`` may cut each into parts for memory (:func:`block_parts`).
    ``sharing`` processes train one block between them, each its own part of ``micro_batch``
    streams (1: every process trains whole blocks).
    """

    global_batch: int
    processes: int
    micro_batch: int
    accumulation: int
    sharing: int = 1

    def blocks(self, rank: int) -> range:
        """The numbers of the blocks process ``rank`` trains (or a part of) in a step, in order."""
        if self.sharing > 1:
            return range(rank // self.sharing, rank // self.sharing + 1)
        return range(rank * self.accumulation, (rank + 1) * self.accumulation)

    def share(self, rank: int) -> tuple[int, int]:
        """Which part of its block process ``rank`` trains, of how many."""
        return rank % self.sharing, self.sharing

    @property
    def per_process(self) -> int:
        """Streams one process trains in a step."""
        return self.micro_batch * self.accumulation

    def describe(self, micro_batch: int | None = None) -> str:
        """In words; with ``micro_batch`` (config ``pretrain.micro_batch``), a block's parts."""
        text = (
            f"{self.global_batch} streams a step = {self.processes} process(es) x "
            f"{self.accumulation} micro-batch(es) of {self.micro_batch}"
        )
        if self.sharing > 1:
            text += f" (each block of {self.micro_batch * self.sharing} shared by {self.sharing})"
        parts = block_parts(self.micro_batch, micro_batch)
        if parts > 1:
            text += f", each trained in {parts} parts of {self.micro_batch // parts}"
        return text

    def streams_at_once(self, micro_batch: int | None = None) -> int:
        """The most streams a process trains at once: a block, or a part of one."""
        return self.micro_batch // block_parts(self.micro_batch, micro_batch)


def plan_batches(world_size: int, batch_size: int, processes: int) -> BatchPlan:
    """Split the global batch ``world_size x batch_size`` over ``processes``.

    Each process's share is trained in as few micro-batches as keep each at most ``batch_size``
    streams (the per-GPU batch the config was sized for): ``processes`` that divide ``world_size``
    train micro-batches of ``batch_size`` exactly, ``world_size / processes`` of them. Raises
    ValueError, naming the keys, when ``processes`` does not divide the global batch. More
    processes than ``world_size``, where each block divides evenly among them, share blocks of
    ``batch_size``: each process trains a part, and the masks are those of the fewer processes.
    """
    global_batch = world_size * batch_size
    if processes < 1 or global_batch % processes:
        raise ValueError(
            f"the global batch pretrain.world_size x pretrain.batch_size = {world_size} x "
            f"{batch_size} = {global_batch} streams cannot be split evenly over {processes} "
            f"process(es) (GPUs): ask for a number of GPUs that divides {global_batch} (any "
            f"divisor of world_size {world_size} keeps micro-batches of {batch_size}) under "
            "set-resources of the pretraining rules in the SLURM profile, or change "
            "pretrain.world_size"
        )
    share = global_batch // processes
    sharing = processes // world_size
    if share < batch_size and processes % world_size == 0 and batch_size % sharing == 0:
        return BatchPlan(global_batch, processes, share, 1, sharing)
    accumulation = -(-share // batch_size)  # the fewest micro-batches of at most batch_size ...
    while share % accumulation:  # ... that cut the share evenly
        accumulation += 1
    return BatchPlan(global_batch, processes, share // accumulation, accumulation)


def block_parts(block: int, micro_batch: int | None) -> int:
    """How many equal parts a block of ``block`` streams is trained in so that none has more than
    ``micro_batch`` streams: the fewest that cut it evenly (1 where ``micro_batch`` is None or at
    least ``block``). A block of 96 at ``micro_batch`` 48 is 2 parts, at 40 it is 3 of 32."""
    if micro_batch is None or micro_batch >= block:
        return 1
    if micro_batch < 1:
        raise ValueError(f"pretrain.micro_batch must be >= 1, got {micro_batch}")
    parts = -(-block // micro_batch)
    while block % parts:
        parts += 1
    return parts
