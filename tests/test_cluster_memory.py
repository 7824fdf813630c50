"""The peak-memory estimate of a pretraining process (xling.cluster.memory) against torch's own
count of what a real forward pass saves for backward, and the GPUs it is compared with."""

import pytest
import torch

from xling.cluster.memory import (
    GIB,
    MemoryJob,
    estimate,
    gpu_memory_gib,
    largest_fitting,
    parameter_counts,
)
from xling.model import MLMEncoder
from xling.model.config import EncoderConfig
from xling.pretrain.objective import MaskedLMObjective

SMALL = dict(vocab_size=500, dim=64, layers=3, heads=4, ffn_dim=256, max_positions=64)


def saved_bytes(config: EncoderConfig, streams: int, seq_len: int, predicted: int, autocast):
    """Bytes of the distinct storages a forward pass of the masked-LM objective saves for its
    backward, parameters left out (counted by torch.autograd.graph.saved_tensors_hooks)."""
    torch.manual_seed(0)
    model = MLMEncoder(config).train()
    objective = MaskedLMObjective(model)
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in parameters:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    input_ids = torch.randint(5, config.vocab_size, (streams, seq_len))
    selected = torch.randperm(streams * seq_len)[:predicted].clone()
    targets = torch.randint(5, config.vocab_size, (predicted,))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor), autocast:
        loss = objective(input_ids, config.languages[0], selected, targets)
    loss.backward()  # what was saved is what backward uses
    return sum(saved.values())


@pytest.mark.parametrize("half", [False, True])
@pytest.mark.parametrize(
    ("streams", "seq_len", "languages"), [(8, 32, ["en"]), (6, 40, ["en", "fr"])]
)
def test_the_estimate_counts_what_a_forward_pass_saves_for_backward(
    half, streams, seq_len, languages
):
    """fp32, and bf16 autocast (the half-precision copies of every matmul's inputs and weights):
    the estimate's saved terms are torch's own count, to a few bytes (a loss scalar's)."""
    config = EncoderConfig(languages=languages, dropout=0.0, attention_dropout=0.0, **SMALL)
    mask_prob = 0.15
    predicted = round(mask_prob * streams * seq_len)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=half)
    counted = saved_bytes(config, streams, seq_len, predicted, autocast)
    job = MemoryJob(config, streams, seq_len, mask_prob=predicted / (streams * seq_len),
                    half_precision=half)  # fmt: skip
    assert estimate(job).saved_for_backward == pytest.approx(counted, rel=1e-3)


def test_the_parameter_count_is_the_models():
    variants = ({}, {"sep_embeddings": True}, {"sep_layers": 2}, {"language_embeddings": False})
    for options in variants:
        config = EncoderConfig(languages=["en", "fr"], **SMALL, **options)
        total, _ = parameter_counts(config)
        assert total == MLMEncoder(config).num_parameters(), options


def paper_job(streams: int, distributed: bool = True) -> MemoryJob:
    """Wu et al.'s model on a 90k vocabulary, seq 256, fp16/bf16 autocast."""
    config = EncoderConfig(vocab_size=90_000, languages=["en", "fr"])
    return MemoryJob(config, streams, 256, distributed=distributed)


def test_the_papers_process_is_tight_on_a_16_gb_v100():
    """Micro-batch 96: about 12.6 GB of tensors, 14 GiB with the overheads: a 16 GB V100 holds
    it with little to spare, and half the micro-batch frees about 5 GiB."""
    whole = estimate(paper_job(96))
    assert 12 < whole.total / 1e9 < 14
    assert 13 < whole.needed_gib() <= 16
    half = estimate(paper_job(48))
    assert half.needed_gib() < whole.needed_gib() - 4
    # the micro-batch shrinks activations and logits, not the weights and Adam
    assert half.adam == whole.adam and half.activations == pytest.approx(whole.activations / 2)
    assert estimate(paper_job(96, distributed=False)).total == whole.total - whole.ddp_buckets


def test_the_largest_fitting_part_of_a_block():
    job = paper_job(96)
    assert largest_fitting(job, 96, 80) == 96
    fits_in_12 = largest_fitting(job, 96, 12)
    assert fits_in_12 in (48, 32, 24) and estimate(paper_job(fits_in_12)).needed_gib() <= 12
    assert largest_fitting(job, 96, 2) is None  # weights and Adam alone exceed it
    assert estimate(job).needed_gib() * GIB > estimate(job).total


@pytest.mark.parametrize(
    ("family", "described", "gib"),
    [
        ("V100", "", 16), ("V100", "v100_32gb", 32), ("V100", "gpu:v100:4", 16),
        ("A100", "nvidia_a100-sxm4-80gb", 80), ("A100", "a100_40g", 40), ("A100", "a100", 40),
        ("H200", "", 141), ("T4", "", None),
    ],
)  # fmt: skip
def test_a_gpu_type_with_variants_is_checked_at_the_smaller_unless_named(family, described, gib):
    assert gpu_memory_gib(family, described) == gib
