"""The one life cycle of a training job in its work directory (xling.jobs.lifecycle): lock, the
history over attempts, restore a finished job, keep its outputs and clean up; and, under
torchrun, only process 0 touches the work directory while every process learns its outcome."""

import logging

import pytest

from xling.jobs import finished, joblog
from xling.jobs.lifecycle import JobLifecycle
from xling.jobs.worklock import LOCK_NAME, WorkDirBusyError, WorkDirLock

KEY = {"job": {"lr": 0.001}, "code": "abc"}


def test_a_job_records_its_history_keeps_its_outputs_and_a_rerun_restores_them(tmp_path, capsys):
    work, output = tmp_path / ".work", tmp_path / "metrics.json"
    logger = logging.getLogger("xling.test_lifecycle")
    before = logging.getLogger("xling").level
    logging.getLogger("xling").setLevel(logging.INFO)
    try:
        with JobLifecycle(work, "fine-tuning") as life:
            assert (work / LOCK_NAME).exists()
            assert not life.restore({"metrics": output}, KEY)  # nothing kept yet
            logger.info("epoch 1")
            (work / "state.pt").write_bytes(b"state")
            (work / "epoch001.pt").write_bytes(b"weights")
            output.write_text("{}")
            life.clean_up(first=[work / "state.pt"])
    finally:
        logging.getLogger("xling").setLevel(before)
    assert sorted(p.name for p in work.iterdir()) == [finished.FOLDER]  # lock and state gone
    assert "epoch 1" in (work / finished.FOLDER / joblog.HISTORY).read_text()
    output.unlink()  # what Snakemake does before it reruns a job
    capsys.readouterr()
    with JobLifecycle(work, "fine-tuning") as life:
        assert life.restore({"metrics": output}, KEY)
    assert output.read_text() == "{}" and "epoch 1" in capsys.readouterr().out


def test_a_job_that_restores_nothing_keeps_nothing_and_leaves_no_work_directory(tmp_path):
    work = tmp_path / "L0" / "state"
    with JobLifecycle(work, "layer-transfer training", record=None) as life:
        (work / "state.pt").write_bytes(b"state")
        (work / ".epoch001.pt.abcd1234.part").write_bytes(b"half")
        life.clean_up(first=[work / "state.pt"])
    assert not work.exists()


def test_a_second_trainer_stops_at_once_and_the_holder_keeps_its_state(tmp_path):
    work = tmp_path / ".work"
    with WorkDirLock(work, "pretraining"):
        (work / "checkpoint-step8.pt").write_bytes(b"state")
        with (
            pytest.raises(WorkDirBusyError, match="in use by pretraining"),
            JobLifecycle(work, "pretraining"),
        ):
            pass
        assert (work / "checkpoint-step8.pt").exists()


def test_only_the_owner_touches_the_work_directory_and_every_process_learns_its_outcome(
    tmp_path,
):
    """A process other than process 0 takes no lock, restores, keeps and deletes nothing, and
    stops or restores as process 0 did (here ``agree`` plays the broadcast)."""
    work, output = tmp_path / ".work", tmp_path / "summary.json"
    refused = JobLifecycle(work, "pretraining", owner=False, agree=lambda value: "busy (PID 1)")
    with pytest.raises(WorkDirBusyError, match=r"process 0 could not lock the work directory"):
        refused.__enter__()

    def process_0(value):  # it locked (no refusal: None) and restored (True)
        return None if value is None else True

    with JobLifecycle(work, "pretraining", owner=False, agree=process_0) as life:
        assert life.lock is None and life.history is None
        assert life.restore({"summary": output}, None)  # process 0 restored
        life.clean_up()
    assert not work.exists()
