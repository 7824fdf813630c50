"""Fine-tuning trains in bf16 only where the GPU computes it natively (xling.model.precision); an
earlier checkpoint's GPU name reads as its compute capability."""

import contextlib

import pytest
import torch

from xling.finetune.training import autocast
from xling.model.precision import capability_of_name


@pytest.mark.parametrize(
    "capability, mixed", [((7, 0), False), ((7, 5), False), ((8, 0), True), ((9, 0), True)]
)
def test_fine_tuning_uses_bf16_only_on_gpus_that_have_it(monkeypatch, capability, mixed):
    # torch says bf16 is "supported" on a V100 too, where it is emulated: it must not be asked
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    context = autocast(torch.device("cuda"))
    assert isinstance(context, torch.autocast) is mixed
    if not mixed:
        assert isinstance(context, contextlib.nullcontext)


def test_fine_tuning_on_the_cpu_runs_in_full_precision():
    assert isinstance(autocast(torch.device("cpu")), contextlib.nullcontext)


@pytest.mark.parametrize(
    "name, capability",
    [
        ("NVIDIA A100-SXM4-40GB", (8, 0)),
        ("NVIDIA A100 80GB PCIe", (8, 0)),
        ("NVIDIA A10", (8, 6)),  # not read as an A100, nor the A100 as an A10
        ("Tesla V100-SXM2-16GB", (7, 0)),
        ("Tesla V100S-PCIE-32GB", (7, 0)),
        ("NVIDIA L4", (8, 9)),
        ("NVIDIA L40S", (8, 9)),
        ("NVIDIA H100 80GB HBM3", (9, 0)),
        ("NVIDIA GH200 480GB", (9, 0)),
        ("NVIDIA Future X1", None),
    ],
)
def test_a_gpu_name_of_an_earlier_checkpoint_reads_as_its_compute_capability(name, capability):
    assert capability_of_name(name) == capability
