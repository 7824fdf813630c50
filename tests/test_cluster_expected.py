"""The expected GPU-hours of pretraining price each GPU type in the precision it trains in."""

import pytest

from xling.cluster.expected import GPU_TYPES, pretraining_expected
from xling.pretrain.flops import PEAK_FLOPS

MODEL = {"layers": 8, "dim": 768, "heads": 12, "ffn_dim": 3072}
PRETRAIN = {"seq_len": 256, "batch_size": 96, "total_steps": 416800}


def test_v100_is_priced_in_fp16_and_later_gpus_in_bf16():
    assert GPU_TYPES == {"V100": "fp16", "A100": "bf16", "H100": "bf16", "H200": "bf16"}
    for gpu, precision in GPU_TYPES.items():
        assert PEAK_FLOPS[gpu][precision] > 0, f"{gpu} has no {precision} peak to price it at"
    assert not PEAK_FLOPS["V100"]["bf16"]  # no bf16 tensor cores: never priced at a bf16 peak


def test_hours_scale_with_the_peak_of_each_types_precision():
    hours = pretraining_expected(MODEL, PRETRAIN, ["en", "fr"]).hours
    assert set(hours) == set(GPU_TYPES)
    ratio = PEAK_FLOPS["A100"]["bf16"] / PEAK_FLOPS["V100"]["fp16"]
    assert hours["V100"][0] == pytest.approx(ratio * hours["A100"][0])
    assert hours["H200"] == pytest.approx(hours["H100"])  # the same compute, by the FLOP model
