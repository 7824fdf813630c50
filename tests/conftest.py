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


@pytest.fixture(autouse=True, scope="session")
def reduced_demo_in_background(request, tmp_path_factory):
    """The reduced demo of tests/test_e2e.py, started as the session starts if a collected test
    needs it (``demo_run``): it runs beside the unit tests, which use one core of the two, instead
    of taking four minutes of its own when test_e2e.py's turn comes."""
    if not any("demo_run" in item.fixturenames for item in request.session.items):
        yield None
        return
    from tests.test_e2e import start_demo_run

    run = start_demo_run(tmp_path_factory.mktemp("e2e"))
    try:
        yield run
    finally:
        run.stop()


@pytest.fixture
def repo() -> Path:
    return REPO
