"""xling.report.runlog on Snakemake logs written here in Snakemake's own format: the jobs read
back, which
waited on which, the longest chain, and the projection onto other core counts, by hand."""

from datetime import datetime, timedelta

import pytest

from xling.report.runlog import critical_path, dependencies, projected_minutes, read_jobs

T0 = datetime(2026, 11, 28, 10, 0, 0)


def stamp(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("[%a %b %e %H:%M:%S %Y]")


def write_log(path, jobs, unfinished=()):
    """``jobs``: (jobid, rule, start s, end s, threads, inputs, outputs), as Snakemake prints a
    local run: a block when a job starts, a line when it finishes."""
    events = []
    for jobid, rule, start, end, threads, inputs, outputs in [*jobs, *unfinished]:
        block = [stamp(start), f"localrule {rule}:"]
        if inputs:
            block.append(f"    input: {', '.join(inputs)}")
        block += [f"    output: {', '.join(outputs)}", f"    jobid: {jobid}"]
        block.append(f"    reason: Missing output files: {outputs[0]}")
        if threads > 1:
            block.append(f"    threads: {threads}")
        block.append("    resources: tmpdir=/tmp")
        events.append((start, 1, block))
        if end is not None:
            done = [stamp(end), f"Finished jobid: {jobid} (Rule: {rule})", "1 of 9 steps done"]
            events.append((end, 0, done))
    lines = ["Building DAG of jobs...", "Select jobs to execute..."]
    for _, _, block in sorted(events, key=lambda e: (e[0], e[1])):
        lines += block
    path.write_text("\n".join(lines) + "\n")
    return path


# A (60 s) -> B (120 s) -> D (30 s), and C (200 s) beside them; B also reads a file no job wrote.
CHAIN = [
    ("1", "a", 0, 60, 1, ["config.yaml"], ["r/a.txt"]),
    ("2", "c", 0, 200, 1, [], ["r/c.txt"]),
    ("3", "b", 60, 180, 2, ["r/a.txt", "data/raw.txt"], ["r/b1.txt", "r/b2"]),
    ("4", "d", 200, 230, 1, ["r/b2", "r/c.txt"], ["r/d.txt"]),
]


def test_jobs_are_read_with_their_times_threads_and_files(tmp_path):
    never = [("9", "e", 100, None, 1, [], ["r/e.txt"])]  # started, never finished: not a job
    jobs = read_jobs(write_log(tmp_path / "run.log", CHAIN, unfinished=never))
    assert [job.jobid for job in jobs] == ["1", "3", "2", "4"]  # in the order they finished
    b = jobs[1]
    assert (b.rule, b.seconds, b.threads) == ("b", 120, 2)
    assert b.inputs == ("r/a.txt", "data/raw.txt") and b.outputs == ("r/b1.txt", "r/b2")
    assert jobs[2].threads == 1 and jobs[2].inputs == ()


def test_a_job_waits_on_the_jobs_whose_outputs_it_reads(tmp_path):
    jobs = read_jobs(write_log(tmp_path / "run.log", CHAIN))
    assert dependencies(jobs) == {"1": set(), "2": set(), "3": {"1"}, "4": {"3", "2"}}
    assert [job.rule for job in critical_path(jobs)] == ["c", "d"]  # 230 s against a-b-d 210
    assert critical_path([]) == []


def test_projection_by_hand(tmp_path):
    jobs = read_jobs(write_log(tmp_path / "run.log", CHAIN))
    # one core: one job after another (b's two threads capped at the one core)
    assert projected_minutes(jobs, 1) == pytest.approx(410 / 60)
    # two cores: a and c start; a ends at 60, b needs both cores, which c frees at 200;
    # b 200-320, d 320-350
    assert projected_minutes(jobs, 2) == pytest.approx(350 / 60)
    # cores enough: the longest chain, c (200) then d (30)
    assert projected_minutes(jobs, 8) == pytest.approx(230 / 60)
    with pytest.raises(ValueError, match="at least 1"):
        projected_minutes(jobs, 0)


def test_a_job_waiting_for_more_cores_is_not_starved_by_longer_ones(tmp_path):
    """EASY backfill: a one-thread job starts beside it only if it ends before the many-thread
    job's cores come free."""
    jobs = [
        ("1", "a", 0, 100, 1, [], ["a"]),  # a -> t (two threads) -> u: the longest chain
        ("2", "t", 100, 160, 2, ["a"], ["t"]),
        ("3", "u", 160, 460, 1, ["t"], ["u"]),
        ("4", "b", 0, 200, 1, [], ["b"]),  # holds the other core until 200
        ("5", "long", 0, 150, 1, [], ["long"]),  # would end at 250 if started at 100
        ("6", "short", 0, 50, 1, [], ["short"]),  # ends at 150 if started at 100: it fits
    ]
    parsed = read_jobs(write_log(tmp_path / "run.log", jobs))
    # a and b start at 0; at 100 short runs (100-150), long waits; t 200-260; u and long at 260
    # (u 260-560). Had long started at 100, t would wait until 250 and u end at 610.
    assert projected_minutes(parsed, 2) == pytest.approx(560 / 60)
