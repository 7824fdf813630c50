"""A job that asked for GPUs and does not see them stops before any work, naming the mismatch."""

import pytest

from xling.cluster.gpus import (
    ALLOW_VARIABLE,
    GpuVisibilityError,
    gpus_per_node,
    require_visible_gpus,
)


def sees(count, cuda="12.4"):
    return lambda: (count, "2.13.0", cuda)


def no_driver():
    return "no NVIDIA driver on this node"


@pytest.mark.parametrize(
    ("resources", "per_node"),
    [
        ({}, 0),
        ({"gpu": 8, "nodes": 1}, 8),
        ({"nodes": 2, "gpus_per_node": 4, "mpi": "srun"}, 4),
        ({"gres": "gpu:a100:2"}, 2),
        ({"mem_mb": 4000, "runtime": 60}, 0),
    ],
)
def test_gpus_asked_per_node(resources, per_node):
    assert gpus_per_node(resources) == per_node


def test_a_job_that_sees_too_few_gpus_names_torch_cuda_and_driver():
    with pytest.raises(GpuVisibilityError) as raised:
        require_visible_gpus({"gpu": 8}, torch_view=sees(0), driver=no_driver, environ={})
    message = str(raised.value)
    assert "asked for 8 GPU(s)" in message and "torch sees 0" in message
    assert "built for CUDA 12.4" in message and "no NVIDIA driver" in message
    assert "envs/torch.yaml" in message and ALLOW_VARIABLE in message


def test_a_cpu_build_is_named_as_such():
    with pytest.raises(GpuVisibilityError, match="CPU-only build"):
        require_visible_gpus(
            {"gpu": 1}, torch_view=sees(0, cuda=None), driver=no_driver, environ={}
        )


def test_enough_gpus_a_cpu_job_or_the_escape_hatch_pass():
    def never():
        raise AssertionError("a CPU job must not look at torch")

    require_visible_gpus({"gpu": 2}, torch_view=sees(2), driver=no_driver, environ={})
    require_visible_gpus({"runtime": 60}, torch_view=never, driver=no_driver, environ={})
    require_visible_gpus(
        {"gpu": 1}, torch_view=sees(0), driver=no_driver, environ={ALLOW_VARIABLE: "1"}
    )


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a GPU")
def test_this_machine_without_gpus_fails_a_gpu_job():
    """The real torch of the test machines (CPU build, no GPU) and the real driver lookup."""
    with pytest.raises(GpuVisibilityError, match="torch sees 0"):
        require_visible_gpus({"gpu": 1}, environ={})
