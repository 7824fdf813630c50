"""What a pretraining job is expected to use, per GPU type, from the FLOP model.

The plan's other numbers are the wall time *asked for*; a pretraining job asks for
``pretrain.runtime_minutes`` per attempt whatever it needs. Its expected use is its model FLOPs
(:mod:`xling.pretrain.flops`: matmuls only, 3 x forward) over the GPU's datasheet peak at a model
FLOPs utilization (MFU) between :data:`MFU_RANGE`: 0.20 is what an unoptimised 8-layer encoder
reaches with mixed precision, 0.35 a well-fed one. Every pretraining job on a GPU logs its own
MFU with its progress lines ("MFU 31.2%"): compare after the first hour.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xling.model.config import EncoderConfig
from xling.pretrain.flops import PEAK_FLOPS, training_flops_per_step

# GPU type -> the precision it trains in, priced at its dense tensor peak in that precision: V100
# (compute capability 7.0) has no bf16 tensor cores, so `precision: auto` trains it in fp16 with
# loss scaling; A100 and later in bf16. H200 has H100's compute (the same 989 TFLOP/s dense bf16
# peak, so the same hours by this model); its faster memory may raise the MFU a little.
GPU_TYPES = {"V100": "fp16", "A100": "bf16", "H100": "bf16", "H200": "bf16"}
MFU_RANGE = (0.20, 0.35)
# The vocabulary is built after planning; Wu's joint BPE has 80k merges. The output softmax is a
# few percent of the FLOPs, so 40k or 160k changes the estimate by -7% / +13%.
ASSUMED_VOCAB = 80_000
DEFAULT_MASK_PROB = 0.15


@dataclass(frozen=True)
class Expected:
    """Wall hours of one job on its ``processes`` GPUs, per GPU type: (at the high MFU, at the low
    MFU). Its GPU-hours are wall x GPUs (:meth:`gpu_hours`)."""

    hours: dict[str, tuple[float, float]]
    processes: int = 1

    def gpu_hours(self, gpu: str) -> tuple[float, float]:
        fast, slow = self.hours[gpu]
        return fast * self.processes, slow * self.processes


def pretraining_expected(
    model: Mapping[str, object],
    pretrain: Mapping[str, object],
    languages: Sequence[str],
    processes: int | None = None,
    mfu_range: tuple[float, float] = MFU_RANGE,
) -> Expected:
    """Expected wall time of a pretraining job on ``processes`` GPUs (default: the config's
    ``pretrain.world_size``).

    Data parallel: each step trains the global batch ``world_size x batch_size``, and each process
    its share of it, in ``global batch / processes / batch_size`` micro-batches one after the
    other (:mod:`xling.pretrain.batching`). So the wall time scales with that share: 4 GPUs take
    twice as long as 8 for the same global batch, and the GPU-hours stay the same. Cutting the
    micro-batches further (``pretrain.micro_batch``) changes the FLOPs of a step by nothing; it
    may lower the MFU a little, which the range covers.
    """
    known = set(EncoderConfig.__dataclass_fields__)
    architecture = {k: v for k, v in model.items() if k in known}
    config = EncoderConfig(vocab_size=ASSUMED_VOCAB, languages=list(languages), **architecture)
    seq_len = int(pretrain["seq_len"])
    predicted = float(pretrain.get("mask_prob", DEFAULT_MASK_PROB)) * seq_len
    world_size = int(pretrain.get("world_size") or 1)
    global_batch = world_size * int(pretrain["batch_size"])
    processes = max(int(processes or world_size), 1)
    # FLOPs are linear in the streams: the share of one process, fractional where it does not
    # divide (the job would refuse to start; xling.cluster.preflight says so).
    flops = training_flops_per_step(config, 1, seq_len, predicted) * global_batch / processes
    total = flops * int(pretrain["total_steps"])
    low, high = sorted(mfu_range)
    # The pilot's bound (pretrain.max_train_minutes): training ends there, whatever the steps.
    budget = float(pretrain.get("max_train_minutes") or math.inf) / 60
    hours = {}
    for gpu, precision in GPU_TYPES.items():
        peak = PEAK_FLOPS[gpu][precision]
        fast, slow = total / (peak * high) / 3600, total / (peak * low) / 3600
        hours[gpu] = (min(fast, budget), min(slow, budget))
    return Expected(hours, processes)


def attempts_fall_short(hours: tuple[float, float], minutes: Sequence[float]) -> bool:
    """Whether a job's attempts (their wall-time minutes) leave no failed attempt to spare at the
    slow end of its expected ``hours`` (fast, slow): the attempts but the longest must cover it,
    since a failure mid-attempt loses the time since the last checkpoint and any wait."""
    spare = (sum(minutes) - max(minutes, default=0)) / 60
    return hours[1] > spare


def format_range(low: float, high: float) -> str:
    return f"{low:,.0f}-{high:,.0f}" if high >= 10 else f"{low:,.1f}-{high:,.1f}"
