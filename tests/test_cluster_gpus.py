"""A job that asked for GPUs and cannot use them stops before any work, naming the mismatch and
the config key that picks another build of torch; the device and the driver are mocked."""

import pytest

from xling.cluster.gpus import (
    ALLOW_VARIABLE,
    GpuVisibilityError,
    NodeDriver,
    TorchCuda,
    gpus_per_node,
    kernel_for,
    require_visible_gpus,
)
from xling.cluster.torch_builds import (
    BUILDS,
    DEFAULT_BUILD,
    TORCH_BUILD_KEY,
    builds_for,
    format_version,
    parse_version,
    torch_env_file,
)

# torch.cuda.get_arch_list() of PyTorch 2.13's CUDA 13.0 and 12.6 wheels (its RELEASE.md matrix)
CU130 = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
CU126 = ("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90")
V100 = ("Tesla V100-SXM2-32GB", (7, 0))
H100 = ("NVIDIA H100 80GB HBM3", (9, 0))


def sees(count, cuda="12.4"):
    return lambda: TorchCuda("2.13.0", cuda, count)


def sees_gpus(gpu, count=1, arch_list=CU130, cuda="13.0"):
    name, capability = gpu
    view = TorchCuda("2.13.0", cuda, count, arch_list, (name,) * count, (capability,) * count)
    return lambda: view


def driver(version=None, gpus=0):
    words = f"NVIDIA driver {version}" if version else "no NVIDIA driver on this node"
    return lambda: NodeDriver(parse_version(version) if version else None, gpus, words)


no_driver = driver()


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
    assert TORCH_BUILD_KEY in message and "envs/torch-cu126.yaml" in message
    assert ALLOW_VARIABLE in message


def test_a_cpu_build_is_named_as_such():
    with pytest.raises(GpuVisibilityError, match="CPU-only build"):
        require_visible_gpus(
            {"gpu": 1}, torch_view=sees(0, cuda=None), driver=no_driver, environ={}
        )


def test_enough_gpus_a_cpu_job_or_the_escape_hatch_pass():
    def never():
        raise AssertionError("a CPU job must not look at torch")

    checked = require_visible_gpus(
        {"gpu": 2}, torch_view=sees_gpus(H100, count=2), driver=no_driver, environ={}
    )
    assert checked.startswith("GPUs checked: 2 x NVIDIA H100 80GB HBM3 (sm_90: sm_90 kernels)")
    assert require_visible_gpus({"runtime": 60}, torch_view=never, environ={}) is None
    assert (
        require_visible_gpus(
            {"gpu": 1}, torch_view=sees(0), driver=no_driver, environ={ALLOW_VARIABLE: "1"}
        )
        is None
    )


def test_a_driver_older_than_cuda_13_names_the_key_and_the_cuda_12_build():
    """torch.cuda.is_available() is False on a node with GPUs and driver 550: CUDA 13 needs 580."""
    with pytest.raises(GpuVisibilityError) as raised:
        require_visible_gpus(
            {"gpu": 8}, torch_view=sees(0, cuda="13.0"), driver=driver("550.54.15", 8), environ={}
        )
    message = str(raised.value)
    assert "built for CUDA 13.0, which needs an NVIDIA driver >= 580" in message
    assert "NVIDIA driver 550.54.15" in message
    assert f"Fix: set `{TORCH_BUILD_KEY}: cu126` (envs/torch-cu126.yaml" in message
    assert "`cluster.torch_build: cu130`" not in message  # the build that failed


def test_a_driver_older_than_every_build_says_no_build_runs_there():
    with pytest.raises(GpuVisibilityError, match="No torch build of this workflow runs here"):
        require_visible_gpus(
            {"gpu": 1}, torch_view=sees(0, cuda="12.6"), driver=driver("470.82.01", 1), environ={}
        )


def test_a_build_without_kernels_for_the_device_stops_at_once_naming_the_setting():
    """The CUDA 13 wheel on a V100: no sm_70 kernels, and no PTX old enough to compile."""
    with pytest.raises(GpuVisibilityError) as raised:
        require_visible_gpus(
            {"gpu": 8},
            torch_view=sees_gpus(V100, count=8),
            driver=driver("580.65.06", 8),
            environ={},
        )
    message = str(raised.value)
    assert "has no kernels for this node's Tesla V100-SXM2-32GB" in message
    assert "compute capability 7.0: sm_70" in message and " ".join(CU130) in message
    assert f"`{TORCH_BUILD_KEY}: cu126` (envs/torch-cu126.yaml" in message


def test_sm_70_on_a_build_with_sm_70_passes():
    checked = require_visible_gpus(
        {"gpu": 1},
        torch_view=sees_gpus(V100, arch_list=CU126, cuda="12.6"),
        driver=driver("535.104.05", 1),
        environ={},
    )
    assert "Tesla V100-SXM2-32GB (sm_70: sm_70 kernels)" in checked


def test_sm_90_on_a_build_with_only_older_ptx_passes():
    """PTX of compute_80 is compiled by the driver for an sm_90 GPU (forward compatibility)."""
    checked = require_visible_gpus(
        {"gpu": 1},
        torch_view=sees_gpus(H100, arch_list=("sm_70", "sm_80", "compute_80")),
        driver=no_driver,
        environ={},
    )
    assert "compute_80 PTX, compiled by the driver at first use" in checked


@pytest.mark.parametrize(
    ("arch_list", "capability", "found"),
    [
        (CU130, (8, 9), "sm_86"),  # L40S: a cubin of the same major version and a lower minor
        (CU130, (10, 0), "sm_100"),
        (CU130, (7, 0), None),
        (CU126, (12, 0), None),  # Blackwell workstation GPUs on the CUDA 12.6 build
        (("sm_80", "compute_80"), (9, 0), "compute_80"),
        (("sm_90a",), (9, 0), "sm_90a"),
        (("sm_90a", "compute_90a"), (10, 0), None),  # arch-specific: that GPU only
        (("sm_86",), (8, 0), None),  # a newer minor's cubin does not run on an older GPU
        (("compute_90",), (8, 0), None),  # nor newer PTX
        ((), (9, 0), None),
    ],
)
def test_kernel_for_follows_cuda_binary_and_ptx_compatibility(arch_list, capability, found):
    assert kernel_for(arch_list, capability) == found


def test_the_build_table_matches_the_wheels_arch_lists():
    for arch_list, build in ((CU130, BUILDS["cu130"]), (CU126, BUILDS["cu126"])):
        for capability in [(7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0)]:
            assert build.runs_on(capability) == (kernel_for(arch_list, capability) is not None)
    assert [b.name for b in builds_for((7, 0), parse_version("580.65.06"))] == ["cu126"]
    assert [b.name for b in builds_for((9, 0), parse_version("550.54.15"))] == ["cu126"]
    assert [b.name for b in builds_for((10, 0), parse_version("550.54.15"))] == []
    assert format_version(BUILDS["cu126"].min_driver) == "525.60.13"


def test_the_config_key_picks_the_env_and_defaults_to_pypis_build():
    assert torch_env_file({}) == torch_env_file({"cluster": {}}) == BUILDS[DEFAULT_BUILD].env_file
    assert torch_env_file({"cluster": {"torch_build": "cu126"}}) == "envs/torch-cu126.yaml"
    assert DEFAULT_BUILD == "cu130" and BUILDS["cu130"].env_file == "envs/torch.yaml"


def test_the_driver_is_read_from_the_kernel_modules_version_file(tmp_path, monkeypatch):
    import xling.cluster.gpus as gpus

    version_file = tmp_path / "version"
    version_file.write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
    )
    monkeypatch.setattr(gpus, "_DRIVER_FILE", version_file)
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    assert gpus.node_driver().version == (550, 54, 15)


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a GPU")
def test_this_machine_without_gpus_fails_a_gpu_job():
    """The real torch of the test machines (CPU build, no GPU) and the real driver lookup."""
    with pytest.raises(GpuVisibilityError, match="torch sees 0"):
        require_visible_gpus({"gpu": 1}, environ={})
