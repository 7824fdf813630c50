"""When a SLURM job ends (xling.jobs.deadline), and a trainer's request to stop before
(xling.jobs.signals.StopRequest)."""

import os
import signal
import subprocess
import sys
import time
from datetime import datetime

import pytest

from xling.jobs.deadline import JobEnd, parse_end_time, process_start_time, slurm_job_end, stop_time
from xling.jobs.signals import StopRequest

END = datetime(2026, 11, 28, 12, 30, 0)


def fake_slurm(answers: dict[str, str]):
    """A ``subprocess.run`` that answers ``squeue`` and ``scontrol`` as given (absent: the
    command is missing) and records what was asked."""
    asked = []

    def run(command, **options):
        asked.append(command[0])
        if command[0] not in answers:
            raise FileNotFoundError(command[0])
        return subprocess.CompletedProcess(command, 0, stdout=answers[command[0]], stderr="")

    return run, asked


def test_the_end_comes_from_the_environment_where_slurm_sets_it():
    run, asked = fake_slurm({})
    end = slurm_job_end({"SLURM_JOB_END_TIME": "1795000000", "SLURM_JOB_ID": "7"}, run)
    assert end == JobEnd(1795000000.0, "SLURM_JOB_END_TIME") and asked == []


def test_else_from_squeue_else_from_scontrol():
    environ = {"SLURM_JOB_ID": "42"}
    run, asked = fake_slurm({"squeue": "2026-11-28T12:30:00\n"})
    assert slurm_job_end(environ, run) == JobEnd(END.timestamp(), "squeue")
    scontrol = "JobId=42 JobName=x\n   StartTime=2026-11-28T10:30:00 EndTime=2026-11-28T12:30:00"
    run, asked = fake_slurm({"squeue": "N/A\n", "scontrol": scontrol})
    assert slurm_job_end(environ, run) == JobEnd(END.timestamp(), "scontrol")
    assert asked == ["squeue", "scontrol"]
    run, asked = fake_slurm({"scontrol": scontrol})  # no squeue on the node
    assert slurm_job_end(environ, run).source == "scontrol"


def test_no_end_outside_slurm_or_for_an_unlimited_job():
    run, asked = fake_slurm({"squeue": "NONE", "scontrol": "EndTime=Unknown"})
    assert slurm_job_end({}, run) is None and asked == []
    assert slurm_job_end({"SLURM_JOB_ID": "1"}, run) is None
    assert parse_end_time("0") is None and parse_end_time("") is None


def test_the_stop_comes_a_margin_before_the_end_and_a_job_without_that_time_is_refused():
    end = JobEnd(time.time() + 30 * 60, "squeue")
    assert stop_time(end, 10, margin_key="m", more_time="r") == pytest.approx(end.time - 600)
    assert stop_time(None, 10, margin_key="m", more_time="r") is None
    short = JobEnd(time.time() + 5 * 60, "squeue")
    refusal = r"[45]\.\d minutes left .* no more than pretrain\.stop_margin_minutes = 10"
    with pytest.raises(ValueError, match=refusal + r".* Raise pretrain\.runtime_minutes"):
        stop_time(
            short, 10, margin_key="pretrain.stop_margin_minutes",
            more_time="pretrain.runtime_minutes",
        )  # fmt: skip


def test_a_stop_request_notes_signals_and_the_clock():
    now = [100.0]
    with StopRequest(stop_at=150.0, clock=lambda: now[0]) as stop:
        assert stop.signal is None and not stop.out_of_time
        os.kill(os.getpid(), signal.SIGUSR1)
        assert stop.signal == signal.SIGUSR1 and stop.signal_time == 100.0
        now[0] = 150.0
        assert stop.out_of_time
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.signal == signal.SIGTERM and stop.signal_time == 100.0  # the first's time
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL
    assert not StopRequest().out_of_time


def test_a_process_knows_when_it_started():
    """What the resume time of an attempt counts from: the process's start, before its imports."""
    before = time.time()
    code = "from xling.jobs.deadline import process_start_time; print(process_start_time())"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    after = time.time()
    started = float(child.stdout)
    assert before - 0.02 <= started <= after  # /proc counts in clock ticks (10 ms)
    assert process_start_time() <= before


def test_without_proc_the_start_is_unknown(tmp_path):
    assert process_start_time(stat=str(tmp_path / "stat"), uptime=str(tmp_path / "up")) is None
