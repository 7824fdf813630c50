"""Model FLOPs of a training step and model FLOPs utilization (MFU).

Counted as the field does (PaLM, appendix B): matrix multiplications only, forward = 2 x
multiply-adds, backward = 2 x forward, so a training step is 3 x the forward matmul FLOPs. Attention
scores and the weighted sum count (2 x L^2 x dim each per sequence); layer norms, GELU, softmax and
biases do not. The output softmax is counted at the predicted positions only, because that is all
the model computes; a model that scores every position does more work for the same training signal.
"""

from __future__ import annotations

from xling.model.config import EncoderConfig

# Dense (no sparsity) peak tensor throughput per GPU, FLOP/s, by precision. Datasheet values.
PEAK_FLOPS = {
    "H200": {"bf16": 989e12, "fp16": 989e12, "fp32": 67e12},
    "H100 PCIe": {"bf16": 756e12, "fp16": 756e12, "fp32": 51e12},
    "H100": {"bf16": 989e12, "fp16": 989e12, "fp32": 67e12},  # SXM
    "A100": {"bf16": 312e12, "fp16": 312e12, "fp32": 19.5e12},
    "L40S": {"bf16": 362e12, "fp16": 362e12, "fp32": 91.6e12},
    "V100": {"bf16": 0.0, "fp16": 125e12, "fp32": 15.7e12},
}


def forward_flops_per_sequence(config: EncoderConfig, seq_len: int, predicted: float) -> float:
    """Forward matmul FLOPs of one sequence of ``seq_len`` tokens, ``predicted`` of them scored."""
    d, f = config.dim, config.ffn_dim
    projections = 2 * seq_len * (3 * d * d + d * d + 2 * d * f)  # qkv, out, ffn in + out
    attention = 2 * 2 * seq_len * seq_len * d  # Q K^T and weights x V
    return config.layers * (projections + attention) + 2 * predicted * d * config.vocab_size


def training_flops_per_step(
    config: EncoderConfig, batch_size: int, seq_len: int, predicted_per_sequence: float
) -> float:
    """Model FLOPs of one forward + backward over ``batch_size`` sequences."""
    return 3 * batch_size * forward_flops_per_sequence(config, seq_len, predicted_per_sequence)


def peak_flops(device_name: str, precision: str) -> float | None:
    """Datasheet peak of a GPU named like ``torch.cuda.get_device_name()``; None if unknown."""
    for key in PEAK_FLOPS:  # ordered so that "H100 PCIe" is tried before "H100"
        if key in device_name:
            return PEAK_FLOPS[key].get(precision) or None
    return None


def mfu(flops_per_step: float, steps_per_second: float, peak: float) -> float:
    """Fraction of the hardware peak the model's own FLOPs reach."""
    return flops_per_step * steps_per_second / peak
