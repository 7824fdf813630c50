"""The runtime of a pretraining process (xling.pretrain.distributed): its device has an index; a
torchrun process of a GPU job that sees no GPU of its own stops at once, naming its node; the
process group waits a bounded time and NCCL errors end the processes. CUDA is simulated
(tests/simulated_cuda.py) and the process group is not joined (init_process_group recorded)."""

import socket
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

import xling.pretrain.distributed as distributed
from tests.simulated_cuda import SimulatedGpus, simulate
from xling.cluster.gpus import ALLOW_VARIABLE
from xling.pretrain.distributed import (
    PROCESS_GROUP_TIMEOUT,
    MissingGpuError,
    gpu_variables,
    init_runtime,
)

GPU_VARIABLES = [*distributed.GPU_LISTS, *distributed.GPU_COUNTS]


@pytest.fixture
def torchrun(monkeypatch):
    """torchrun's variables of process ``rank`` (default 0, local rank 0) of 2, no GPU variable
    set, and the process groups joined: ``joined`` (backend and options of each)."""
    joined = []

    def process(rank=0, local_rank=0, world_size=2):
        for name, value in (("RANK", rank), ("LOCAL_RANK", local_rank), ("WORLD_SIZE", world_size)):
            monkeypatch.setenv(name, str(value))
        return joined

    for name in [*GPU_VARIABLES, ALLOW_VARIABLE, distributed.NCCL_ERROR_HANDLING[0]]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(dist, "is_initialized", lambda: False)
    record = lambda backend, **options: joined.append((backend, options))  # noqa: E731
    monkeypatch.setattr(dist, "init_process_group", record)
    return process


def test_a_cuda_device_without_an_index_is_the_process_s_own_gpu(torchrun):
    torchrun(rank=3, local_rank=1)
    with simulate(SimulatedGpus(count=2)) as gpus:
        runtime = init_runtime("cuda")  # the real set_device raises on it
    assert runtime.device == torch.device("cuda", 1)
    assert gpus.set_devices == [torch.device("cuda", 1)]


def test_each_process_of_a_gpu_job_trains_on_its_local_gpu_over_nccl(torchrun):
    torchrun(rank=1, local_rank=1)
    with simulate(SimulatedGpus(count=2)) as gpus:  # it joins over gloo what asks for NCCL
        runtime = init_runtime()
    assert (runtime.rank, runtime.device) == (1, torch.device("cuda", 1))
    assert gpus.process_groups == [("nccl", {"timeout": PROCESS_GROUP_TIMEOUT})]
    assert distributed.os.environ[distributed.NCCL_ERROR_HANDLING[0]] == "1"


def test_a_site_s_own_nccl_error_handling_is_kept(torchrun, monkeypatch):
    torchrun()
    monkeypatch.setenv(distributed.NCCL_ERROR_HANDLING[0], "3")
    with simulate(SimulatedGpus(count=2)):
        init_runtime()
    assert distributed.os.environ[distributed.NCCL_ERROR_HANDLING[0]] == "3"


def test_the_wait_in_a_collective_is_minutes_not_torch_s_ten():
    assert timedelta(minutes=2) <= PROCESS_GROUP_TIMEOUT < timedelta(minutes=10)


def test_a_process_of_a_gpu_job_that_sees_no_gpu_stops_naming_its_node(torchrun, monkeypatch):
    joined = torchrun(rank=5, local_rank=1, world_size=8)
    monkeypatch.setenv("SLURM_JOB_GPUS", "0,1,2,3")
    monkeypatch.setenv("SLURM_GPUS_ON_NODE", "4")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(MissingGpuError) as raised:
        init_runtime()
    message = str(raised.value)
    assert f"process 5 (local rank 1) on node {socket.gethostname()} sees no GPU" in message
    assert "CUDA_VISIBLE_DEVICES=unset" in message
    assert "SLURM_JOB_GPUS=0,1,2,3" in message and "SLURM_GPUS_ON_NODE=4" in message
    assert "hang" in message and "gpus_per_node" in message and f"{ALLOW_VARIABLE}=1" in message
    assert joined == []  # stopped before it joined the others


def test_a_process_whose_local_rank_has_no_visible_gpu_stops(torchrun, monkeypatch):
    torchrun(rank=1, local_rank=1)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    with simulate(SimulatedGpus(count=1)), pytest.raises(MissingGpuError) as raised:
        init_runtime()
    assert "sees 1 GPU(s), none for local rank 1" in str(raised.value)
    assert "CUDA_VISIBLE_DEVICES=0" in str(raised.value)


def test_without_gpus_given_or_with_the_test_cluster_s_variable_it_trains_on_the_cpu(
    torchrun, monkeypatch
):
    joined = torchrun()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert init_runtime().device == torch.device("cpu")  # torchrun on a machine without GPUs
    monkeypatch.setenv("SLURM_STEP_GPUS", "0")
    monkeypatch.setenv(ALLOW_VARIABLE, "1")  # the test cluster's fake GPUs
    assert init_runtime().device == torch.device("cpu")
    assert joined == [("gloo", {"timeout": PROCESS_GROUP_TIMEOUT})] * 2


def test_one_process_never_joins_a_group_and_may_use_the_cpu(torchrun, monkeypatch):
    joined = torchrun(world_size=1)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert init_runtime().device == torch.device("cpu")  # the job script's own check covers it
    assert joined == []


@pytest.mark.parametrize(
    ("environ", "found"),
    [
        ({}, {}),
        ({"CUDA_VISIBLE_DEVICES": ""}, {}),
        ({"CUDA_VISIBLE_DEVICES": "-1", "SLURM_GPUS_ON_NODE": "0"}, {}),
        ({"CUDA_VISIBLE_DEVICES": "NoDevFiles"}, {}),
        ({"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "0"}),
        ({"SLURM_GPUS": "a100:2"}, {"SLURM_GPUS": "a100:2"}),
        ({"SLURM_GPUS_PER_NODE": "gpu:0"}, {}),
        ({"SLURM_STEP_GPUS": "2,3", "OTHER": "1"}, {"SLURM_STEP_GPUS": "2,3"}),
    ],
)
def test_the_variables_that_give_a_process_gpus(environ, found):
    assert gpu_variables(environ) == found
