"""A pretraining job stops on its own before its SLURM time limit, with a checkpoint, and needs
no signal for it (unless the pilot leaves an attempt to the signal); a stop checkpoints before
any process leaves (one process, CPU); the processes of a distributed job agree on a stop one
step after their vote on it; the pilot's training budget ends a training early."""

import json
import math
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


class TwoProcessVotes:
    """StopVotes of process 0, with the other process's readings given: the maximum of both."""

    def __init__(self, others: list[list[float]]):
        self.others, self.pending, self.cast_after = others, None, []

    def cast(self, values, note=None):
        other = self.others[len(self.cast_after)]
        self.cast_after.append(values)
        self.pending = ([max(a, b) for a, b in zip(values, other, strict=True)], note)

    def count(self):
        counted, self.pending = self.pending, None
        return counted


def test_processes_stop_one_step_after_the_vote_that_carries_a_signal():
    """Every step each process casts its reading; the vote is counted after the next step, and a
    stop there casts no new vote (none is left in flight as the processes leave)."""
    quiet, signalled_at_90 = [0.0, 0.0, -math.inf, 0.0], [1.0, 0.0, -90.0, 0.0]
    votes = TwoProcessVotes([quiet, quiet, signalled_at_90, quiet])
    stop = loop.StopRequest()  # process 0's own: never signalled
    decisions = [loop._stop_agreed(stop, votes, last=False) for _ in range(4)]
    # steps 1, 2: nothing; step 3's vote carries the other's signal, counted after step 4
    assert decisions == [None, None, None, ("by another process's signal", 90.0)]
    assert len(votes.cast_after) == 3 and votes.pending is None


def test_the_signal_a_stop_names_is_the_one_its_vote_was_cast_with():
    quiet = [0.0, 0.0, -math.inf, 0.0]
    votes = TwoProcessVotes([quiet, quiet])
    stop = loop.StopRequest()
    assert loop._stop_agreed(stop, votes, last=False) is None  # cast: no signal
    stop.signal, stop.signal_time = signal.SIGTERM, 50.0  # comes after that reading
    assert loop._stop_agreed(stop, votes, last=False) is None  # counted: none; cast: SIGTERM
    assert loop._stop_agreed(stop, votes, last=True) == (f"by signal {int(signal.SIGTERM)}", 50.0)
    votes = TwoProcessVotes([quiet])
    assert loop._stop_agreed(stop, votes, last=True) is None and votes.cast_after == []


def test_processes_end_together_one_step_after_process_0_spent_the_budget():
    quiet = [0.0, 0.0, -math.inf, 0.0]
    votes = TwoProcessVotes([quiet, quiet])
    stop = loop.StopRequest()
    assert loop._stop_agreed(stop, votes, last=False, spent=True) is None  # cast: spent
    ended, _ = loop._stop_agreed(stop, votes, last=False)
    assert ended == loop._BUDGET_SPENT and votes.cast_after[-1][3] == 1.0


# The pilot's bounds (config/pilot.yaml): max_train_minutes ends the training early as at
# total_steps; signal_stop_attempts leaves those attempts' stop to SLURM's signal.
def test_a_spent_training_budget_finishes_the_model_before_total_steps(
    data_dir, outside_slurm, tmp_path
):
    # Any step takes longer than a millionth of a minute: the first one spends the budget.
    summary = pretrain_in_folder(
        tmp_path,
        data_dir,
        ["en", "fr"],
        settings(max_train_minutes=1e-6),
        log_file=tmp_path / "log",
    )
    assert summary["steps"] == 1 < settings().total_steps
    assert (tmp_path / "model" / "model.safetensors").exists()
    assert [a["ended"] for a in summary["attempts"]] == ["finished"]
    assert summary["best_step"] == 1  # evaluated at its last step, as at total_steps
    assert "pretrain.max_train_minutes (1e-06) of training spent" in (tmp_path / "log").read_text()
    assert json.loads((tmp_path / "summary.json").read_text())["steps"] == 1


def test_an_attempt_left_to_the_signal_does_not_stop_itself(data_dir, outside_slurm, tmp_path):
    # A job whose end is 1 s away with a margin of 3 s: its time to stop itself is past.
    outside_slurm.setenv("SLURM_JOB_END_TIME", str(int(time.time()) + 1))
    few = settings(total_steps=6, eval_interval=6)
    with pytest.raises(ValueError, match="stop_margin_minutes"):
        pretrain_in_folder(tmp_path / "own", data_dir, ["en", "fr"], few)
    left = settings(total_steps=6, eval_interval=6, signal_stop_attempts=(1,))
    log = tmp_path / "left" / "log"
    summary = pretrain_in_folder(tmp_path / "left", data_dir, ["en", "fr"], left, log_file=log)
    assert summary["steps"] == 6
    assert "pretrain.signal_stop_attempts leaves the stop to SLURM's signal" in log.read_text()
