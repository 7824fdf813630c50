"""The analytic FLOP count of a training step equals what torch's FLOP counter measures."""

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from xling.model import EncoderConfig, MLMEncoder
from xling.pretrain.flops import mfu, peak_flops, training_flops_per_step
from xling.pretrain.objective import MaskedLMObjective

torch.set_num_threads(1)


@pytest.mark.parametrize(("sep_layers", "predicted"), [(0, 7), (2, 19)])
def test_training_flops_match_the_flop_counter(sep_layers, predicted):
    config = EncoderConfig(
        vocab_size=97,
        languages=["en", "fr"],
        dim=24,
        layers=3,
        heads=3,
        ffn_dim=40,
        dropout=0.0,
        attention_dropout=0.0,
        max_positions=16,
        sep_layers=sep_layers,
    )
    batch, seq_len = 3, 11
    objective = MaskedLMObjective(MLMEncoder(config))
    ids = torch.randint(5, 97, (batch, seq_len))
    selected = torch.randperm(batch * seq_len)[:predicted]
    # The CPU flash kernel is invisible to the counter; the math kernel is made of counted matmuls.
    with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        objective(ids, "fr", selected, ids.reshape(-1)[selected]).backward()
    expected = training_flops_per_step(config, batch, seq_len, predicted / batch)
    assert counter.get_total_flops() == pytest.approx(expected, rel=1e-9)


def test_peak_lookup_and_utilization():
    assert peak_flops("NVIDIA H100 80GB HBM3", "bf16") == 989e12
    assert peak_flops("NVIDIA H100 PCIe", "bf16") == 756e12
    assert peak_flops("NVIDIA A100-SXM4-40GB", "fp16") == 312e12
    assert peak_flops("Tesla V100-SXM2-32GB", "bf16") is None  # no bf16 tensor cores
    assert peak_flops("Some Future GPU", "bf16") is None
    assert mfu(flops_per_step=5e14, steps_per_second=1.0, peak=1e15) == 0.5
