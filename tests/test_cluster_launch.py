"""How a pretraining job starts its processes, from its cluster resources (xling.cluster.launch)."""

import json
import os

import pytest

from tests.cluster.profile import load_profile
from xling.cluster import Launch, launch_from_resources, run_torchrun, torchrun_command
from xling.cluster.launch import (
    PORT_BASE,
    PORT_SPAN,
    SHUTDOWN_TIMEOUT_SECONDS,
    check_stop_margin,
    rendezvous_port,
    signal_lead_seconds,
)
from xling.pretrain import PretrainSettings
from xling.pretrain.batching import plan_batches
from xling.pretrain.synthetic import write_synthetic_vocab_dir

TWO_NODES = {
    "nodes": 2,
    "tasks": 2,
    "mpi": "srun",
    "gpus_per_node": 4,
    "mem_mb": 128000,
    "slurm_extra": "--gpus-per-node=4 --ntasks-per-node=1",
}


@pytest.mark.parametrize("resources", [{}, {"gpu": 1}, {"gpu": 0, "nodes": 1}, {"runtime": 60}])
def test_one_gpu_or_none_trains_in_the_jobs_own_process(resources):
    launch = launch_from_resources(resources)
    assert launch.in_process and launch.world_size == 1


def test_gpus_on_one_node_start_one_process_each():
    launch = launch_from_resources({"gpu": 8, "nodes": 1})
    assert (launch.nodes, launch.processes_per_node, launch.launcher) == (1, 8, None)
    assert not launch.in_process


@pytest.mark.parametrize(
    ("gres", "processes"), [("gpu:8", 8), ("gpu:a100:8", 8), ("shard:2,gpu:h100_80g:4", 4)]
)
def test_gpus_asked_for_as_gres_start_one_process_each(gres, processes):
    assert launch_from_resources({"gres": gres, "nodes": 1}).processes_per_node == processes


def test_two_nodes_start_through_srun():
    launch = launch_from_resources(TWO_NODES)
    assert (launch.nodes, launch.processes_per_node, launch.launcher) == (2, 4, "srun")
    assert launch.world_size == 8


def test_the_paper_profile_pretrains_on_eight_gpus_as_the_paper():
    resources = load_profile()["set-resources"]["pretrain_model"]
    assert launch_from_resources(resources).world_size == 8  # Wu et al. 3.1: 8 GPUs


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"nodes": 2, "gpu": 8}, "needs the resources mpi"),
        ({**TWO_NODES, "gpus_per_node": 2}, "gpus_per_node=2 but slurm_extra"),
        ({"gpu": -1}, "whole number >= 0"),
        ({"gpu": "eight"}, "whole number >= 0"),
    ],
)
def test_inconsistent_resources_are_refused_with_the_fix(resources, message):
    with pytest.raises(ValueError, match=message) as error:
        launch_from_resources(resources)
    assert "slurm/config.yaml" in str(error.value)


def test_standalone_command_runs_the_module_under_torchrun():
    command = torchrun_command(Launch(1, 4), ["--data-dir", "d"], python="py")
    assert command[:3] == ["py", "-m", "torch.distributed.run"]
    assert "--standalone" in command and "srun" not in command
    assert command[command.index("--nproc-per-node") + 1] == "4"
    assert command[-4:] == ["-m", "xling.pretrain", "--data-dir", "d"]


def test_srun_command_starts_one_torchrun_per_node_that_meet_on_the_first():
    launch = launch_from_resources(TWO_NODES)
    command = torchrun_command(
        launch, ["--x"], python="py", rendezvous_host="node7", job_id="1234", cpus_per_node=16
    )
    step = command[: command.index("py")]
    assert step[0] == "srun"
    assert {"--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--cpus-per-task=16"} <= set(step)
    # the step asks for its GPUs and memory itself: the jobstep plugin strips SLURM_*
    assert {"--gpus-per-node=4", "--mem=128000M"} <= set(step)
    assert command[command.index("--nnodes") + 1] == "2"
    assert command[command.index("--nproc-per-node") + 1] == "4"
    assert command[command.index("--rdzv-endpoint") + 1] == f"node7:{rendezvous_port('1234')}"
    assert command[command.index("--rdzv-id") + 1] == "1234"


def test_rendezvous_port_is_fixed_per_job_and_in_range():
    ports = {rendezvous_port(str(job)) for job in range(1000, 1100)}
    assert len(ports) == 100 and all(PORT_BASE <= p < PORT_BASE + PORT_SPAN for p in ports)
    assert rendezvous_port("77") == rendezvous_port("77") and rendezvous_port(None) == PORT_BASE
    # below Linux's ephemeral ports (32768-60999), which outgoing connections take
    assert PORT_BASE >= 1024 and PORT_BASE + PORT_SPAN <= 32768


def test_a_step_of_memory_per_cpu_asks_for_it():
    launch = launch_from_resources({**TWO_NODES, "mem_mb": None, "mem_mb_per_cpu": 4000})
    step = torchrun_command(launch, [], python="py")
    assert "--mem-per-cpu=4000M" in step and not any(a.startswith("--mem=") for a in step)


@pytest.mark.parametrize(
    ("extra", "lead"),
    [
        ("'--signal=TERM@600'", 600), ("--signal=B:TERM@600 --gpus-per-node=4", 600),
        ("--signal=USR1", 60), ("--signal RB:15@90", 90), ("--gpus-per-node=4", None), (None, None),
    ],
)  # fmt: skip
def test_the_early_signals_lead_is_read_from_slurm_extra(extra, lead):
    assert signal_lead_seconds(extra) == lead


def test_the_planning_check_refuses_a_stop_margin_not_above_the_signals_lead():
    """TERM@600 may come up to 60 s early, 660 s before the limit: a margin of 11 minutes or
    less would let it come before the trainer's own stop."""
    for margin in (10, 11):
        problem, change = check_stop_margin(margin, "--signal=TERM@600")
        assert f"stop_margin_minutes = {margin} is not above" in problem
        assert change.startswith("config pretrain.stop_margin_minutes, to more than 11 (e.g. 15)")
    assert check_stop_margin(11.5, "--signal=TERM@600") is None
    assert check_stop_margin(15, "--signal=B:TERM@600") is None
    assert check_stop_margin(1, "--gpus-per-node=4") is None  # no signal: nothing to beat
    assert check_stop_margin(2, "--signal=TERM@120") is not None


def test_the_profiles_signal_the_default_margin_and_the_shutdown_agree():
    """The profile's TERM lead, the trainer's default stop margin, and torchrun's grace after
    TERM: the margin comes first, and torchrun's kill before SLURM's at the limit."""
    for rule in ("pretrain_model", "pretrain_monolingual", "pretrain_multilingual"):
        lead = signal_lead_seconds(load_profile()["set-resources"][rule]["slurm_extra"])
        assert lead is not None, rule
        margin = PretrainSettings().stop_margin_minutes
        assert check_stop_margin(margin, f"--signal=TERM@{lead}") is None, (rule, lead)
        assert lead - 60 >= SHUTDOWN_TIMEOUT_SECONDS


@pytest.mark.slow
def test_two_processes_train_together_and_a_failure_is_raised(tmp_path):
    write_synthetic_vocab_dir(
        tmp_path / "vocab", sentences={"train": 200, "valid": 40}, anchors=10, vocabulary_scale=0.2
    )
    settings = PretrainSettings(
        architecture={"dim": 16, "layers": 1, "heads": 2, "ffn_dim": 32, "max_positions": 16},
        seq_len=16, batch_size=4, warmup_steps=2, total_steps=6, eval_interval=3,
        dev_tokens=256, log_interval=3, threads=1,
    )  # fmt: skip
    out = tmp_path / "out"
    module_args = [
        "--data-dir", str(tmp_path / "vocab"), "--languages", "en", "fr",
        "--out-model", str(out / "model"), "--work-dir", str(out / ".work"),
        "--curve", str(out / "curve.csv"), "--summary", str(out / "summary.json"),
        "--settings-json", json.dumps(settings.to_dict()), "--device", "cpu",
    ]  # fmt: skip
    with open(tmp_path / "output.txt", "w") as output:
        run_torchrun(Launch(1, 2), module_args, output=output)
    text = (tmp_path / "output.txt").read_text()
    assert text.startswith("2 processes: ") and "--standalone" in text.splitlines()[0]
    assert json.loads((out / "summary.json").read_text())["world_size"] == 2
    with pytest.raises(RuntimeError, match="exited with status"), open(os.devnull, "w") as sink:
        run_torchrun(Launch(1, 2), ["--data-dir", str(tmp_path / "missing")], output=sink)


@pytest.mark.parametrize(
    ("resources", "processes", "accumulation"),
    [
        ({}, 1, 8),
        ({"gpu": 2}, 2, 4),
        ({"gpu": 4}, 4, 2),
        ({"gres": "gpu:a100:4"}, 4, 2),
        ({"gpu": 8}, 8, 1),
        (
            {"nodes": 2, "mpi": "srun", "gpus_per_node": 4, "slurm_extra": "--gpus-per-node=4"},
            8,
            1,
        ),
    ],
)
def test_every_gpu_layout_trains_the_papers_global_batch(resources, processes, accumulation):
    """1, 2, 4 or 8 GPUs a node, or 2 nodes of 4: always 8 x 96 = 768 streams a step."""
    launch = launch_from_resources(resources)
    plan = plan_batches(world_size=8, batch_size=96, processes=launch.world_size)
    assert (plan.processes, plan.accumulation, plan.micro_batch) == (processes, accumulation, 96)
    assert plan.global_batch == 768


def test_a_gpu_count_that_cannot_split_the_global_batch_stops_the_job_naming_the_keys():
    launch = launch_from_resources({"gpu": 5})
    with pytest.raises(ValueError, match=r"pretrain\.world_size x pretrain\.batch_size") as error:
        plan_batches(world_size=8, batch_size=96, processes=launch.world_size)
    assert "over 5 process(es)" in str(error.value) and "SLURM profile" in str(error.value)


# The job script's part of a stop: torchrun replaced by a child that signals its parent (as SLURM
# signals every process of the step) and checks what it inherited.
_CHILD = """
import os, signal, time
inherited = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
print("child:", inherited, os.environ["TORCH_ELASTIC_SHUTDOWN_TIMEOUT"], flush=True)
os.kill(os.getppid(), signal.SIGTERM)
time.sleep(0.5)
print("child done", flush=True)
"""
_PARENT = """
import sys
from xling.cluster import launch
launch.torchrun_command = lambda *args, **kwargs: [sys.executable, "-c", CHILD]
launch.run_torchrun(launch.Launch(1, 2), [])
print("parent survived", flush=True)
"""


def test_the_job_script_waits_through_a_stop_signal_for_the_trainers_to_checkpoint():
    import subprocess
    import sys

    script = f"CHILD = {_CHILD!r}\n{_PARENT}"
    env = {k: v for k, v in os.environ.items() if k != "TORCH_ELASTIC_SHUTDOWN_TIMEOUT"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    lines = done.stdout.splitlines()
    # torchrun gets the default action back (it installs its own handler) and 540 s to shut down
    assert "child: True 540" in lines
    assert "signal 15: waiting for the trainers to checkpoint" in lines
    assert lines[-2:] == ["child done", "parent survived"]
