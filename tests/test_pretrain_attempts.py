"""What summary.json tells a cluster user about the run: each attempt (its steps, wall time, resume
time from its process start, how it ended, the time from the stop request to the checkpoint
written), the speed of the last attempt's steady state, and the hardware (one process, CPU): a
job stopped by a signal, resumed and killed after a checkpoint, then resumed to its end."""

import json
import os
import signal
import time

import pytest
import torch

import xling.pretrain.checkpoint as ckpt
from xling.pretrain import PretrainSettings
from xling.pretrain.batching import plan_batches
from xling.pretrain.engine import pretrain
from xling.pretrain.job import PretrainJob
from xling.pretrain.synthetic import write_synthetic_vocab_dir

torch.set_num_threads(1)

TOTAL_STEPS, LOG_INTERVAL, CHECKPOINT_STEPS = 60, 10, 20
SIGNAL_AFTER, CRASH_AFTER = 25, 45
CHECKPOINT_DELAY = 0.3  # seconds each checkpoint write is made to take
BEFORE = 5.0  # seconds the second attempt's process is said to have started before its call


class Crash(Exception):
    """The second attempt dying between checkpoints (SIGKILL, a node's failure)."""


def settings() -> PretrainSettings:
    return PretrainSettings(
        architecture={"dim": 16, "layers": 1, "heads": 2, "ffn_dim": 32, "max_positions": 16},
        seq_len=16, batch_size=4, lr=3e-3, warmup_steps=5, total_steps=TOTAL_STEPS,
        eval_interval=30, dev_tokens=512, log_interval=LOG_INTERVAL,
        checkpoint_steps=CHECKPOINT_STEPS, checkpoint_minutes=1e6, threads=1,
    )  # fmt: skip


def signal_after(step: int):
    def callback(current: int) -> None:
        if current == step:
            os.kill(os.getpid(), signal.SIGTERM)  # as SLURM's scancel or its early signal

    return callback


def crash_after(step: int):
    def callback(current: int) -> None:
        if current == step:
            raise Crash

    return callback


@pytest.fixture(scope="module")
def summary(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("attempts")
    write_synthetic_vocab_dir(
        root / "vocab", sentences={"train": 300, "valid": 60}, anchors=10, vocabulary_scale=0.2
    )
    for name in ("SLURM_JOB_ID", "SLURM_JOB_END_TIME"):
        os.environ.pop(name, None)
    job = PretrainJob.in_folder(root / "out", root / "vocab", ["en", "fr"], settings())
    save = ckpt.save_checkpoint

    def slow_save(*args, **kwargs):
        time.sleep(CHECKPOINT_DELAY)
        return save(*args, **kwargs)

    patch = pytest.MonkeyPatch()
    patch.setattr(ckpt, "save_checkpoint", slow_save)
    try:
        with pytest.raises(SystemExit, match="stopped by signal 15 after checkpointing step 26"):
            pretrain(job, step_callback=signal_after(SIGNAL_AFTER))
        with pytest.raises(Crash):
            pretrain(job, step_callback=crash_after(CRASH_AFTER), started=time.time() - BEFORE)
        written = pretrain(job)
    finally:
        patch.undo()
    assert json.loads((root / "out" / "summary.json").read_text()) == written
    return written


def test_each_attempt_says_where_it_started_and_ended_and_how(summary):
    attempts = summary["attempts"]
    assert [(a["first_step"], a["last_step"], a["ended"]) for a in attempts] == [
        (0, SIGNAL_AFTER + 1, "stopped by signal 15"),  # the step it was in, then checkpointed
        (SIGNAL_AFTER + 1, 40, "killed"),  # gone after step 45: its last checkpoint was 40's
        (40, TOTAL_STEPS, "finished"),
    ]


def test_each_attempt_has_its_wall_and_resume_time_and_a_stop_its_stop_time(summary):
    stopped, killed, finished = summary["attempts"]
    for attempt in (stopped, killed, finished):
        assert 0 < attempt["resume_seconds"] < attempt["wall_seconds"]
    # from the process's start, which comes before the call: its imports, the data, a checkpoint
    assert killed["resume_seconds"] > BEFORE
    # from the signal to the checkpoint written: the whole write counts, not its start
    assert CHECKPOINT_DELAY <= stopped["stop_seconds"] < stopped["wall_seconds"]
    assert killed["stop_seconds"] is None and finished["stop_seconds"] is None


def test_the_speed_is_the_last_attempts_steady_state(summary):
    """An attempt's first progress interval is its warm-up, left out: the first attempt's is step
    1 alone (then 2..10 and 11..20 count), the last one's, resumed at 40, is 41..50."""
    first, _, last = summary["attempts"]
    assert first["steady_steps"] == 2 * LOG_INTERVAL - 1
    assert last["steady_steps"] == TOTAL_STEPS - 40 - LOG_INTERVAL
    s = settings()
    tokens = last["steady_steps"] * s.global_batch * s.seq_len
    assert summary["tokens_per_s"] == pytest.approx(tokens / last["steady_seconds"], rel=1e-3)
    assert summary["mfu"] is None  # on a CPU: no peak to measure against


def test_the_hardware_is_recorded_per_process(summary):
    hardware = summary["hardware"]
    assert hardware["gpus"] is None and hardware["compute_capabilities"] is None
    assert hardware["peak_memory_gib"] == [None]  # one process, on the CPU
    assert hardware["memory_gib"] is None
    assert hardware["layout"] == plan_batches(1, 4, 1).describe()
