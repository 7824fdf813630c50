"""One trainer per work directory: a second one fails at once, a dead holder's lock is gone."""

import errno
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from xling.finetune import FinetuneJob, FinetuneSettings, TaskData, run_finetune
from xling.jobs import worklock
from xling.jobs.worklock import LOCK_NAME, WorkDirBusyError, WorkDirLock
from xling.pretrain import PretrainJob, PretrainSettings, pretrain


def test_a_second_lock_fails_at_once_naming_the_holder(tmp_path):
    work = tmp_path / "out" / ".work"
    with WorkDirLock(work, "pretraining"):
        assert (work / LOCK_NAME).exists()
        with pytest.raises(WorkDirBusyError) as error:
            WorkDirLock(work, "pretraining").acquire()
    message = str(error.value)
    assert message.startswith(f"{work} is in use by pretraining (PID {os.getpid()} on host ")
    assert socket.gethostname() in message and f"kill {os.getpid()}" in message
    assert not work.exists(), "release removes the lock file and the then empty directory"
    with WorkDirLock(work, "pretraining"):
        (work / "checkpoint-step4.pt").write_bytes(b"state")
    assert [p.name for p in work.iterdir()] == ["checkpoint-step4.pt"], "a kept state stays"


def test_the_lock_of_a_killed_holder_is_gone(tmp_path):
    work = tmp_path / ".work"
    holder = textwrap.dedent(
        f"""
        import sys, time
        from xling.jobs.worklock import WorkDirLock
        lock = WorkDirLock({str(work)!r}, "fine-tuning")
        lock.acquire()
        print("LOCKED", flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "LOCKED"
        with pytest.raises(WorkDirBusyError, match=f"fine-tuning \\(PID {child.pid} on host"):
            WorkDirLock(work, "fine-tuning").acquire()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert (work / LOCK_NAME).exists(), "the dead holder's file is still there, unlocked"
    with WorkDirLock(work, "fine-tuning"):  # the kernel dropped the lock with the process
        pass


def test_a_lock_on_a_file_deleted_meanwhile_is_taken_again(tmp_path, monkeypatch):
    """The holder releases (deleting the file) between our open and our flock."""
    holder = WorkDirLock(tmp_path, "pretraining")
    holder.acquire()
    real_flock = worklock.fcntl.flock

    def release_then_flock(fd, operation):
        if holder._fd is not None:
            holder.release()
        real_flock(fd, operation)

    monkeypatch.setattr(worklock.fcntl, "flock", release_then_flock)
    with WorkDirLock(tmp_path, "pretraining") as lock:
        assert os.fstat(lock._fd).st_ino == os.stat(tmp_path / LOCK_NAME).st_ino
        monkeypatch.undo()
        with pytest.raises(WorkDirBusyError):
            WorkDirLock(tmp_path, "pretraining").acquire()


def test_without_flock_support_the_trainer_runs_unlocked_with_a_warning(
    tmp_path, monkeypatch, caplog
):
    def unsupported(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(worklock.fcntl, "flock", unsupported)
    with caplog.at_level(logging.WARNING), WorkDirLock(tmp_path / "w", "pretraining"):
        (tmp_path / "w" / "state.pt").write_bytes(b"")
    assert "does not support flock (No locks available)" in caplog.text
    assert [p.name for p in (tmp_path / "w").iterdir()] == ["state.pt"]


def test_pretraining_on_a_busy_work_dir_stops_before_reading_anything(tmp_path):
    work = tmp_path / ".work"
    outputs = [tmp_path / "model", work, tmp_path / "curve.csv", tmp_path / "summary.json"]
    with WorkDirLock(work, "pretraining"):
        (work / "checkpoint-step8.pt").write_bytes(b"someone else's state")
        # The data directory does not exist: the lock is checked first.
        with pytest.raises(WorkDirBusyError, match=f"{work} is in use by pretraining"):
            pretrain(
                PretrainJob(tmp_path / "no-data", ["en"], *outputs, PretrainSettings(total_steps=1))
            )
        assert (work / "checkpoint-step8.pt").read_bytes() == b"someone else's state"
    assert not (tmp_path / "model").exists()


def test_fine_tuning_on_a_busy_work_dir_stops_before_reading_anything(tmp_path):
    work = tmp_path / "work"
    with WorkDirLock(work, "fine-tuning"), pytest.raises(WorkDirBusyError, match=str(work)):
        run_finetune(
            FinetuneJob(
                "ner",
                tmp_path / "no-model",
                TaskData(tmp_path / "no-train.txt", {"en": tmp_path / "no-dev.txt"}),
                {"batch_size": 8, "lr": 1e-3},
                tmp_path / "out",
                work,
                FinetuneSettings(epochs=1, seed=1, max_length=48),
            )
        )
