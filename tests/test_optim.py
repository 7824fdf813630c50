"""EagerAdam: torch's fused Adam, bit for bit, without importing torch._dynamo."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from xling.model.optim import EagerAdam
from xling.pretrain.optim import InverseSqrtWithWarmup


def model_and_batch(seed: int):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
    return model, torch.randn(32, 8), torch.randint(0, 3, (32,))


def train(optimizer_class, steps: int, *, decoupled: bool, state: dict | None = None):
    """``steps`` updates of a small model with two parameter groups and a schedule (model,
    optimizer and schedule loaded from ``state`` first, if given); the saved state after them
    and the parameters."""
    model, x, y = model_and_batch(0)
    groups = [
        {"params": model[0].parameters(), "lr": 1e-2},
        {"params": model[2].parameters(), "lr": 3e-3, "weight_decay": 0.0},
    ]
    kwargs = {"weight_decay": 0.1, "betas": (0.9, 0.98), "fused": True}
    if decoupled:
        kwargs["decoupled_weight_decay"] = True
    optimizer = optimizer_class(groups, **kwargs)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, InverseSqrtWithWarmup(1e-2, 4))
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
    for _ in range(steps):
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
    saved = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    saved["schedule"] = schedule.state_dict()
    return saved, [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("decoupled", [False, True], ids=["Adam", "AdamW"])
def test_the_same_updates_and_state_as_torch_adam(decoupled):
    torch_class = torch.optim.AdamW if decoupled else torch.optim.Adam
    theirs, their_params = train(torch_class, 12, decoupled=False)
    ours, our_params = train(EagerAdam, 12, decoupled=decoupled)
    assert all(torch.equal(a, b) for a, b in zip(our_params, their_params, strict=True))
    assert ours["optimizer"]["param_groups"] == theirs["optimizer"]["param_groups"]
    for index, state in theirs["optimizer"]["state"].items():
        for key, value in state.items():
            assert torch.equal(ours["optimizer"]["state"][index][key], value), key
    # changed by the steps, so the equality above says something
    assert not torch.equal(our_params[0], model_and_batch(0)[0][0].weight)


def test_a_state_saved_by_torch_adam_resumes_in_eager_adam_and_back():
    _, straight_params = train(torch.optim.Adam, 10, decoupled=False)
    half, _ = train(torch.optim.Adam, 5, decoupled=False)
    _, resumed_params = train(EagerAdam, 5, decoupled=False, state=half)
    assert all(torch.equal(a, b) for a, b in zip(resumed_params, straight_params, strict=True))
    half, _ = train(EagerAdam, 5, decoupled=False)
    _, resumed_params = train(torch.optim.Adam, 5, decoupled=False, state=half)
    assert all(torch.equal(a, b) for a, b in zip(resumed_params, straight_params, strict=True))


def test_building_stepping_and_saving_it_does_not_import_dynamo():
    """The point of the class: a process that trains never pays torch._dynamo's import."""
    script = textwrap.dedent(
        """
        import sys
        import torch
        from xling.finetune.training import make_scheduler
        from xling.model.optim import EagerAdam
        from xling.pretrain.optim import build_optimizer

        model = torch.nn.Linear(4, 2)
        for optimizer, schedule in [
            build_optimizer(model, lr=1e-3, betas=(0.9, 0.98), eps=1e-8, weight_decay=0.01,
                            warmup_steps=2, warmup_init_lr=1e-7),
            (lambda o: (o, make_scheduler(o, "warmup_linear", 10, 0.1)))(
                EagerAdam(model.parameters(), lr=1e-3, fused=True)),
        ]:
            scaler = torch.amp.GradScaler("cpu", enabled=False)  # as the pretraining loop
            scaler.scale(model(torch.ones(3, 4)).sum()).backward()
            scaler.unscale_(optimizer)
            scaler.step(optimizer)
            scaler.update()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            optimizer.load_state_dict(optimizer.state_dict())
        print("torch._dynamo" in sys.modules)
        torch.optim.Adam(model.parameters(), fused=True)
        print("torch._dynamo" in sys.modules)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    # the second line shows torch's own Adam still imports it, so the first one measures
    assert result.stdout.split() == ["False", "True"], result.stderr


def test_loss_scaling_skips_the_same_steps_as_with_torch_adam():
    """The pretraining loop's fp16 path: GradScaler hands the fused step its scale and the
    overflow flag, so a step with infinite gradients is skipped and the scale halved."""

    def run(optimizer_class):
        model, x, _ = model_and_batch(1)
        optimizer = optimizer_class(model.parameters(), lr=1e-2, fused=True)
        scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
        for step in range(6):
            loss = model(x).pow(2).mean() * (float("inf") if step == 2 else 1.0)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        return [p.detach().clone() for p in model.parameters()], scaler.get_scale()

    theirs, their_scale = run(torch.optim.Adam)
    ours, our_scale = run(EagerAdam)
    assert our_scale == their_scale == 2.0**9  # the overflowing step was seen, and only once
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs, strict=True))
