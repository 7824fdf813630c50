"""A training job's log over its attempts (xling.jobs.joblog): Snakemake empties the rule's log
before each attempt, so the job keeps its own lines and writes the earlier ones first."""

import io
import logging

from xling.jobs import finished, joblog


def test_replay_writes_the_lines_between_a_header_and_an_end_or_nothing(tmp_path):
    path = joblog.history_path(tmp_path)
    stream = io.StringIO()
    assert not joblog.replay(path, "nothing yet", stream) and stream.getvalue() == ""
    path.write_text("\n  \n")
    assert not joblog.replay(path, "blank", stream) and stream.getvalue() == ""
    path.unlink()
    joblog.append(path, "step 1")
    joblog.append(path, "step 2\n")  # one line each, however given
    assert joblog.replay(path, "the first attempt", stream)
    assert stream.getvalue() == (
        f"--- the first attempt ({path}) ---\nstep 1\nstep 2\n--- end of history.log ---\n"
    )


def test_recording_keeps_the_package_s_records_and_replays_the_earlier_attempts(tmp_path):
    logger = logging.getLogger("xling.finetune.run")
    before = logging.getLogger("xling").level
    logging.getLogger("xling").setLevel(logging.INFO)
    try:
        with joblog.recording(tmp_path):
            logger.info("epoch %d", 1)
            logging.getLogger("elsewhere").warning("not the job's")
        logger.info("after the job")
        lines = joblog.history_path(tmp_path).read_text().splitlines()
        assert len(lines) == 1 and lines[0].endswith(" epoch 1")  # with its time
        with joblog.recording(tmp_path):
            logger.info("epoch %d", 2)
        history = joblog.history_path(tmp_path).read_text().splitlines()
        assert [line.split(" ", 2)[2] for line in history] == ["epoch 1", "epoch 2"]
    finally:
        logging.getLogger("xling").setLevel(before)


def test_a_second_attempt_writes_the_first_one_s_lines_to_stdout_first(tmp_path, capsys):
    joblog.append(joblog.history_path(tmp_path), "attempt 1: step 100")
    with joblog.recording(tmp_path):
        pass
    out = capsys.readouterr().out
    assert out.startswith("--- earlier attempts of this job logged") and "step 100" in out


def test_the_history_goes_with_the_finished_outputs_and_comes_back_with_them(tmp_path, capsys):
    work = tmp_path / ".work"
    work.mkdir()
    output = tmp_path / "summary.json"
    output.write_text("{}")
    joblog.append(joblog.history_path(work), "step 10: loss 3.2")
    finished.keep(work, {"summary": output}, {"job": 1})
    # a copy: a rerun after a kill before the clean-up appends to the original, not to the kept
    joblog.append(joblog.history_path(work), "a rerun's line")
    assert "a rerun's line" not in (work / "finished" / joblog.HISTORY).read_text()
    joblog.history_path(work).unlink()  # the work directory's clean-up
    output.unlink()
    joblog.append(joblog.history_path(work), "the restoring attempt's own line")
    assert finished.restore(work, {"summary": output}, {"job": 1}, log=print)
    out = capsys.readouterr().out
    assert "restored" in out and "step 10: loss 3.2" in out
    assert not joblog.history_path(work).exists()  # it trained nothing: no history of its own
