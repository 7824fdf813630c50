"""torch's fused Adam without the second that its first use costs a process.

``torch.optim.Optimizer`` wraps ``add_param_group`` (so the constructor), ``zero_grad``,
``state_dict``, ``load_state_dict`` and ``Adam.step`` in guards for ``torch.compile`` whose first
call imports ``torch._dynamo``: 1.1-1.3 s on the demo's machine, as long as importing torch
itself (``bench/optimizer_startup.py``: 0.84 s less from ``import torch`` to a first update),
paid by every job that trains: about 90 of the demo's, 2.7 core-minutes of its whole run. The guards
only matter while dynamo traces the optimizer, which this project never does (``torch.compile``
wraps single Transformer layers on GPUs, ``pretrain.compile_layers``). :class:`EagerAdam` is
``torch.optim.Adam`` with those five methods unwrapped: the same code, the same state dicts, the
same updates bit for bit (``tests/test_optim.py``). It is written here because torch offers no
switch for it.
"""

from __future__ import annotations

import torch
from torch.optim import Adam, Optimizer


def _unwrapped(method):
    """The function a torch decorator wrapped (``functools.wraps`` keeps it as ``__wrapped__``);
    the method itself where a torch version stops wrapping it."""
    return getattr(method, "__wrapped__", method)


class EagerAdam(Adam):
    """``torch.optim.Adam`` (``decoupled_weight_decay=True`` for AdamW) for eager code only: never
    step it inside a ``torch.compile``d function."""

    add_param_group = _unwrapped(Optimizer.add_param_group)
    zero_grad = _unwrapped(Optimizer.zero_grad)
    state_dict = _unwrapped(Optimizer.state_dict)
    load_state_dict = _unwrapped(Optimizer.load_state_dict)
    _adam_step = _unwrapped(Adam.step)

    def step(self, closure=None):
        """One Adam update; gradients off during it, as torch's own wrapper turns them off."""
        with torch.no_grad():
            return self._adam_step(closure)
