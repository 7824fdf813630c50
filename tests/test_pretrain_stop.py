"""A pretraining job stops on its own before its SLURM time limit, with a checkpoint, and needs
no signal for it; a stop checkpoints before any process leaves (one process, CPU)."""

import os
import signal
import time

import pytest
import torch
from safetensors.torch import load_file

import xling.pretrain.loop as loop
from xling.pretrain import PretrainSettings, pretrain_in_folder
from xling.pretrain.checkpoint import checkpoint_files
from xling.pretrain.synthetic import write_synthetic_vocab_dir
from xling.pretrain.trainer import Trainer

torch.set_num_threads(1)

MARGIN_MINUTES = 0.05  # 3 s


def settings(**changes) -> PretrainSettings:
    values = dict(
        architecture={"dim": 16, "layers": 1, "heads": 2, "ffn_dim": 32, "max_positions": 16},
        seq_len=16, batch_size=4, lr=3e-3, warmup_steps=5, total_steps=300, eval_interval=100,
        dev_tokens=512, log_interval=10, threads=1, stop_margin_minutes=MARGIN_MINUTES,
    )  # fmt: skip
    return PretrainSettings(**{**values, **changes})


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("vocab")
    write_synthetic_vocab_dir(
        directory, sentences={"train": 300, "valid": 60}, anchors=10, vocabulary_scale=0.2
    )
    return directory


@pytest.fixture
def outside_slurm(monkeypatch):
    for name in ("SLURM_JOB_ID", "SLURM_JOB_END_TIME"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_job_near_its_time_limit_stops_itself_with_a_checkpoint_and_resumes(
    data_dir, tmp_path, outside_slurm
):
    reference = pretrain_in_folder(tmp_path / "whole", data_dir, ["en", "fr"], settings())
    # The job ends 4 s after its stop margin from now: it trains about 4 s (slowed down here),
    # then stops, without any signal.
    end = time.time() + 60 * MARGIN_MINUTES + 4
    outside_slurm.setenv("SLURM_JOB_END_TIME", str(int(end)))
    log = tmp_path / "log"
    job = (tmp_path / "stopped", data_dir, ["en", "fr"], settings())
    with pytest.raises(SystemExit, match=r"stopped 0\.05 min before the job's time limit "
                       r"after checkpointing step (\d+)") as stopped:  # fmt: skip
        pretrain_in_folder(*job, log_file=log, step_callback=lambda step: time.sleep(0.02))
    step = int(str(stopped.value).rsplit("step ", 1)[1].split(";")[0])
    assert 0 < step < 300
    assert "the job's time limit ends" in log.read_text()
    (checkpoint,) = checkpoint_files(tmp_path / "stopped" / ".work")[:1]
    assert checkpoint.name == f"checkpoint-step{step}.pt"
    outside_slurm.delenv("SLURM_JOB_END_TIME")  # the retry: a job with its whole time ahead
    resumed = pretrain_in_folder(*job, log_file=log)
    assert f"at step {step}" in log.read_text() and resumed["steps"] == 300
    ours = load_file(tmp_path / "stopped" / "model" / "model.safetensors")
    theirs = load_file(tmp_path / "whole" / "model" / "model.safetensors")
    assert all(torch.equal(ours[name], theirs[name]) for name in theirs)
    assert resumed["best_step"] == reference["best_step"]


def test_a_job_with_less_time_than_its_margin_is_refused_before_training(
    data_dir, tmp_path, outside_slurm
):
    outside_slurm.setenv("SLURM_JOB_END_TIME", str(int(time.time() + 60)))
    with pytest.raises(ValueError, match=r"it would stop before its first step\. Raise "
                       r"pretrain\.runtime_minutes"):  # fmt: skip
        pretrain_in_folder(tmp_path, data_dir, ["en", "fr"], settings(stop_margin_minutes=10))
    assert not checkpoint_files(tmp_path / ".work")


def test_a_stop_writes_the_checkpoint_before_any_process_leaves(data_dir, tmp_path, monkeypatch):
    """Process 0 writes; the others wait at a barrier after the checkpoint, since torchrun (and
    srun --kill-on-bad-exit) kills the rest of the job when one process exits."""
    events = []
    save = Trainer.save_checkpoint
    monkeypatch.setattr(
        Trainer, "save_checkpoint", lambda self: (save(self), events.append(f"step {self.step}"))
    )
    monkeypatch.setattr(loop, "barrier", lambda runtime: events.append("barrier"))

    def signal_after_step_5(step):
        if step == 5:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(SystemExit, match="stopped by signal 15 after checkpointing step 6"):
        pretrain_in_folder(tmp_path, data_dir, ["en", "fr"], settings(),
                           step_callback=signal_after_step_5)  # fmt: skip
    assert events[-2:] == ["step 6", "barrier"]  # the step after the signal
