"""Shared fixtures. Tests run on 2 shared cores: keep torch to one thread."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return
    torch.set_num_threads(1)


@pytest.fixture
def repo() -> Path:
    return REPO
