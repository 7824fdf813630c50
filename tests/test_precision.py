"""Fine-tuning trains in bf16 only where the GPU computes it natively (xling.model.precision)."""

import contextlib

import pytest
import torch

from xling.finetune.training import autocast


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
