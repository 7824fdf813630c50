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


def test_hours_on_4_gpus_are_twice_those_on_8_for_the_same_global_batch():
    """8 x 96 = 768 streams a step: 4 processes train 192 each (two micro-batches of 96), so
    the wall time doubles and the GPU-hours stay the same."""
    pretrain = {**PRETRAIN, "world_size": 8}
    eight = pretraining_expected(MODEL, pretrain, ["en", "fr"], processes=8)
    four = pretraining_expected(MODEL, pretrain, ["en", "fr"], processes=4)
    sixteen = pretraining_expected(MODEL, pretrain, ["en", "fr"], processes=16)
    for gpu in GPU_TYPES:
        assert four.hours[gpu] == pytest.approx(tuple(2 * h for h in eight.hours[gpu]))
        assert sixteen.hours[gpu] == pytest.approx(tuple(h / 2 for h in eight.hours[gpu]))
        assert four.gpu_hours(gpu) == pytest.approx(eight.gpu_hours(gpu))
    # unset, the config's own layout: world_size processes
    assert pretraining_expected(MODEL, pretrain, ["en", "fr"]).hours == eight.hours


def test_a_job_shorter_of_spare_attempts_than_its_slow_end_falls_short():
    from xling.cluster.expected import attempts_fall_short

    assert not attempts_fall_short((27.0, 47.0), [1440] * 4)  # 72 h with one attempt lost
    assert not attempts_fall_short((27.0, 47.0), [1440] * 3)  # 48 h with one lost
    assert attempts_fall_short((27.0, 47.0), [1440] * 2)  # 24 h with one lost
    assert attempts_fall_short((54.0, 94.0), [1440] * 4)  # the 4-GPU layout's hours


def test_the_pilots_training_budget_bounds_the_expected_hours():
    model = {"layers": 8, "dim": 768, "heads": 12, "ffn_dim": 3072}
    pretrain = {"seq_len": 256, "batch_size": 96, "world_size": 8, "total_steps": 416_800}
    study = pretraining_expected(model, pretrain, ["en", "fr"])
    pilot = pretraining_expected(model, {**pretrain, "max_train_minutes": 9.5}, ["en", "fr"])
    assert study.hours["V100"][1] > 1  # days at the paper's steps
    assert all(slow == pytest.approx(9.5 / 60) for _, slow in pilot.hours.values())
