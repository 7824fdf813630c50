"""What a pretraining job is expected to use, per GPU type, from the FLOP model.

The plan's other numbers are the wall time *asked for*; a pretraining job asks for
``pretrain.runtime_minutes`` per attempt whatever it needs. Its expected use is its model FLOPs
(:mod:`xling.pretrain.flops`: matmuls only, 3 x forward) over the GPU's datasheet peak at a model
FLOPs utilization (MFU) between :data:`MFU_RANGE`: 0.20 is what an unoptimised 8-layer encoder
reaches with mixed precision, 0.35 a well-fed one. Every pretraining job on a GPU logs its own
MFU with its progress lines ("MFU 31.2%"): compare after the first hour.
"""

from __future__ import annotations

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
    """Wall hours of one job on its GPUs, per GPU type: (at the high MFU, at the low MFU)."""

    hours: dict[str, tuple[float, float]]


def pretraining_expected(
    model: Mapping[str, object],
    pretrain: Mapping[str, object],
    languages: Sequence[str],
    mfu_range: tuple[float, float] = MFU_RANGE,
) -> Expected:
    """Expected wall time of a pretraining job whose processes each take ``batch_size`` streams a
    step (data parallel: the wall time does not depend on the number of GPUs)."""
    known = set(EncoderConfig.__dataclass_fields__)
    architecture = {k: v for k, v in model.items() if k in known}
    config = EncoderConfig(vocab_size=ASSUMED_VOCAB, languages=list(languages), **architecture)
    seq_len = int(pretrain["seq_len"])
    predicted = float(pretrain.get("mask_prob", DEFAULT_MASK_PROB)) * seq_len
    flops = training_flops_per_step(config, int(pretrain["batch_size"]), seq_len, predicted)
    total = flops * int(pretrain["total_steps"])
    low, high = sorted(mfu_range)
    hours = {}
    for gpu, precision in GPU_TYPES.items():
        peak = PEAK_FLOPS[gpu][precision]
        hours[gpu] = (total / (peak * high) / 3600, total / (peak * low) / 3600)
    return Expected(hours)


def format_range(low: float, high: float) -> str:
    return f"{low:,.0f}-{high:,.0f}" if high >= 10 else f"{low:,.1f}-{high:,.1f}"
