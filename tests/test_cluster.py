"""The workflow on a real SLURM cluster: a single-node cluster from Debian packages runs the demo
slice (tests/config/cluster.yaml) through the SLURM profile; once the pretraining job has
checkpointed, its time limit is brought near (within the profile's `--signal=TERM@600` window),
SLURM signals it, it checkpoints and exits, Snakemake resubmits it, and it resumes. The results
must equal a local run's. Needs root and Debian's package registry; XLING_NO_SLURM=1 skips it (a
machine that cannot run SLURM), anything else that stops the cluster from starting fails.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

from tests.background import BackgroundRun
from tests.cluster import local_slurm
from tests.cluster.local_slurm import LocalSlurm
from tests.cluster.profile import fitted_profile, gpu_rules, load_profile, write_profile
from xling.cluster.gpus import ALLOW_VARIABLE

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
CONFIGS = [str(REPO / "config/demo.yaml"), str(REPO / "tests/config/cluster.yaml")]
TARGETS = ["results/demo/tables/table1.md", "results/demo/figures/cka_layers.png"]
PRETRAIN = Path("results/demo/pretrain/en-fr/default")
PRETRAIN_LOG = Path("results/demo/logs/pretrain/en-fr_default.log")
RUN_TIMEOUT = 1200  # seconds; the slice takes about three minutes on two quiet cores
FAKE_GPUS = 2

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cluster():
    local_slurm.skip_unless_available()
    profile = load_profile()
    partitions = [profile["default-resources"]["slurm_partition"]]
    for resources in profile["set-resources"].values():
        if resources.get("slurm_partition") not in (None, *partitions):
            partitions.append(resources["slurm_partition"])
    local = LocalSlurm(partitions, fake_gpus=FAKE_GPUS)
    try:
        local.start()
        yield local
    finally:
        started = dict(local.started)
        local.stop()
        for name, pid in started.items():
            assert not local_slurm.pid_running(pid, name), f"{name} (pid {pid}) still runs"


# --------------------------------------------------------------------------- watching SLURM
@dataclass
class SlurmJobs:
    """The jobs SLURM reports for one working directory while a run goes on (scontrol keeps
    finished jobs for MinJobAge = 300 s, so polling every moment misses none)."""

    workdir: Path
    seen: dict[str, dict[str, str]] = field(default_factory=dict)

    def poll(self) -> None:
        listing = subprocess.run(
            ["scontrol", "show", "job", "-o"], capture_output=True, text=True, check=False
        )
        for line in listing.stdout.splitlines():
            fields = dict(re.findall(r"([A-Za-z/:]+)=(\S*)", line))
            if "JobId" in fields and fields.get("WorkDir") == str(self.workdir):
                self.seen[fields["JobId"]] = fields

    def of_rule(self, rule: str) -> list[dict[str, str]]:
        pattern = re.compile(rf"rule_{rule}(_wildcards_|$)")
        jobs = [job for job in self.seen.values() if pattern.match(job.get("Comment", ""))]
        return sorted(jobs, key=lambda job: int(job["JobId"]))


@dataclass
class Run:
    workdir: Path
    returncode: int
    output: str
    jobs: SlurmJobs
    limited: dict[str, str] | None = None
    checkpoint_before_limit: int = 0


def snakemake(profile_dir: Path, workdir: Path, configs=CONFIGS, targets=TARGETS) -> list[str]:
    return [
        SNAKEMAKE, "--profile", str(profile_dir), "--directory", str(workdir),
        "--snakefile", str(REPO / "Snakefile"), "--configfile", *configs, "--", *targets,
    ]  # fmt: skip


def last_checkpoint_step(log: Path) -> int:
    steps = re.findall(r"^checkpoint step (\d+) ", log.read_text(), re.MULTILINE)
    return int(steps[-1]) if steps else 0


def shorten_time_limit(job: dict[str, str]) -> None:
    """Bring a running job's time limit to 2 minutes past its run time so far: it is then inside
    the window of the profile's `--signal=TERM@600`, as a week-long job is 10 minutes before its
    partition's limit, and SLURM signals it at its next time-limit check."""
    limit = minutes_of(job["RunTime"]) + 2
    update = ["scontrol", "update", f"JobId={job['JobId']}", f"TimeLimit={limit}"]
    subprocess.run(update, check=True)


def run_on_cluster(
    command: list[str],
    workdir: Path,
    limit_pretraining: bool,
    act: Callable[[Run], None] | None = None,
    environment: dict[str, str] | None = None,
) -> Run:
    """Run Snakemake; optionally bring the pretraining job near its time limit as soon as it has
    checkpointed (shorten_time_limit), or ``act`` on the run at every poll. ``environment``: more
    variables for Snakemake and so for its SLURM jobs, which inherit the submitting one."""
    jobs = SlurmJobs(workdir)
    output = workdir / "snakemake.out"
    # The test node's GPUs are pretended (fake gres devices): let GPU jobs train on the CPU.
    env = dict(os.environ, OMP_NUM_THREADS="1", **{ALLOW_VARIABLE: "1"}, **(environment or {}))
    with open(output, "w") as out:
        process = subprocess.Popen(
            command, cwd=workdir, stdout=out, stderr=subprocess.STDOUT, env=env
        )
        run = Run(workdir, -1, "", jobs)
        deadline = time.monotonic() + RUN_TIMEOUT
        while process.poll() is None:
            jobs.poll()
            if limit_pretraining and run.limited is None:
                running = [j for j in jobs.of_rule("pretrain_model") if j["JobState"] == "RUNNING"]
                checkpoints = list((workdir / PRETRAIN / ".work").glob("checkpoint-step*.pt"))
                if running and checkpoints:
                    run.checkpoint_before_limit = last_checkpoint_step(workdir / PRETRAIN_LOG)
                    shorten_time_limit(running[0])
                    run.limited = running[0]
            if act is not None:
                act(run)
            if time.monotonic() > deadline:
                process.send_signal(signal.SIGINT)  # Snakemake cancels its SLURM jobs
                process.wait(timeout=120)
                break
            time.sleep(0.2)
        jobs.poll()
    run.returncode = process.returncode
    run.output = output.read_text()
    return run


@pytest.fixture(scope="module")
def profile_dir(tmp_path_factory):
    profile = fitted_profile(fake_gpus=1)
    return write_profile(profile, tmp_path_factory.mktemp("profile"))


@pytest.fixture(scope="module")
def local_process(cluster, profile_dir, tmp_path_factory):
    """The same slice without SLURM, with the threads the cluster jobs had, started alongside the
    cluster run: that one mostly waits on SLURM's scheduling, so the two take about as long as it
    does alone (one after the other, the local run added two minutes to `make test`)."""
    workdir = tmp_path_factory.mktemp("local")
    max_threads = load_yaml(profile_dir / "config.yaml")["max-threads"]
    command = [
        SNAKEMAKE, "--cores", "2", "--max-threads", str(max_threads), "--directory", str(workdir),
        "--snakefile", str(REPO / "Snakefile"), "--configfile", *CONFIGS, "--", *TARGETS,
    ]  # fmt: skip
    run = BackgroundRun.start(command, workdir, RUN_TIMEOUT)
    try:
        yield run
    finally:
        run.stop()  # a failed cluster run: stop the local one too


@pytest.fixture(scope="module")
def cluster_run(cluster, profile_dir, local_process, tmp_path_factory) -> Run:
    workdir = tmp_path_factory.mktemp("cluster")
    run = run_on_cluster(snakemake(profile_dir, workdir), workdir, limit_pretraining=True)
    assert run.returncode == 0, run.output[-6000:]
    return run


@pytest.fixture(scope="module")
def local_run(local_process) -> Path:
    local_process.wait()
    return local_process.workdir


def load_yaml(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text())


def minutes_of(duration: str) -> int:
    """A SLURM duration, [days-]hours:minutes:seconds, in whole minutes."""
    days, _, clock = duration.rpartition("-")
    hours, minutes, _ = (int(part) for part in clock.split(":"))
    return int(days or 0) * 1440 + hours * 60 + minutes


def time_limit_minutes(job: dict[str, str]) -> int:
    return minutes_of(job["TimeLimit"])


def planned_jobs(output: str) -> dict[str, int]:
    """Snakemake's own "Job stats" table: rule -> number of jobs."""
    table = output.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^(\w+)\s+(\d+)$", table, re.MULTILINE)
    return {rule: int(count) for rule, count in rows if rule != "total"}


# --------------------------------------------------------------------------- the tests
def test_every_job_went_through_sbatch(cluster_run):
    planned = planned_jobs(cluster_run.output)
    assert planned, "no job stats in Snakemake's output"
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", cluster_run.output)
    assert len(submitted) == sum(planned.values()) + 1  # + the resubmitted pretraining job
    for rule, count in planned.items():
        jobs = cluster_run.jobs.of_rule(rule)
        retried = 1 if rule == "pretrain_model" else 0
        assert len(jobs) == count + retried, f"{rule}: SLURM saw {len(jobs)} jobs, not {count}"
        states = {job["JobState"] for job in jobs}
        assert states == ({"COMPLETED", "FAILED"} if retried else {"COMPLETED"}), rule


def test_gpu_rules_get_a_gpu_on_the_gpu_partition_and_cpu_rules_none(cluster_run):
    profile = load_profile()
    needs_gpu = gpu_rules(profile)
    assert {"pretrain_model", "finetune_run"} <= needs_gpu
    assert "cka" not in needs_gpu  # the analyses load their models on the CPU
    for job in cluster_run.jobs.seen.values():
        rule = re.match(r"rule_(\w+?)(_wildcards_|$)", job["Comment"]).group(1)
        resources = profile["set-resources"].get(rule, {})
        partition = resources.get(
            "slurm_partition", profile["default-resources"]["slurm_partition"]
        )
        assert job["Partition"] == partition, rule
        if rule in needs_gpu:
            assert job.get("TresPerJob") == "gres:gpu:1", (rule, job.get("TresPerJob"))
        else:
            assert "gpu" not in job.get("TresPerJob", "") + job["TRES"], rule


def test_a_pretraining_job_near_its_time_limit_checkpoints_exits_and_resumes(cluster_run):
    """The long-job policy (docs/cluster.md): SIGTERM well before the limit, a checkpoint, a
    failed job, and a retry with the same wall time that resumes there."""
    assert cluster_run.limited is not None, (
        "the pretraining job finished before the test could limit it: give it more steps in "
        "tests/config/cluster.yaml"
    )
    first, second = cluster_run.jobs.of_rule("pretrain_model")
    assert first["JobId"] == cluster_run.limited["JobId"] and first["JobState"] == "FAILED"
    assert second["JobState"] == "COMPLETED"
    # every attempt asks for config pretrain.runtime_minutes: a retry needs no more, it resumes
    settings = {**load_yaml(REPO / "config/demo.yaml")["pretrain"]}
    settings.update(load_yaml(REPO / "tests/config/cluster.yaml")["pretrain"])
    assert time_limit_minutes(second) == settings["runtime_minutes"]
    # The first attempt stopped on the signal after a checkpoint (its SLURM log says so; Snakemake
    # starts the rule's log afresh for the retry), and the retry resumed from it.
    first_log = cluster_run.workdir / "logs/slurm/rule_pretrain_model/en-fr_default"
    first_log = (first_log / f"{first['JobId']}.log").read_text()
    stopped = re.search(r"stopped by signal 15 after checkpointing step (\d+)", first_log)
    assert stopped, first_log[-3000:]
    log = (cluster_run.workdir / PRETRAIN_LOG).read_text()
    resumed = re.search(r"^resumed from \S+ at step (\d+)", log, re.MULTILINE)
    assert resumed, log[:3000]
    assert int(resumed.group(1)) == int(stopped.group(1))
    assert int(stopped.group(1)) >= max(cluster_run.checkpoint_before_limit, 1)
    summary = json.loads((cluster_run.workdir / PRETRAIN / "summary.json").read_text())
    assert summary["steps"] == settings["total_steps"]
    # complete outputs, and the resumable state made way for links to them
    summary = json.loads((cluster_run.workdir / PRETRAIN / "summary.json").read_text())
    settings = load_yaml(REPO / "tests/config/cluster.yaml")["pretrain"]
    assert summary["steps"] == settings["total_steps"]
    model = cluster_run.workdir / PRETRAIN / "model"
    assert (model / "config.json").is_file() and (model / "model.safetensors").is_file()
    work = cluster_run.workdir / PRETRAIN / ".work"
    assert [p.name for p in work.iterdir()] == ["finished"]
    table = pd.read_csv(cluster_run.workdir / "results/demo/tables/table1.csv")
    assert 0 <= table.set_index("variant").loc["default", "NER fr"] <= 100


# Outputs that hold wall-clock times or log lines; everything else must be byte-identical. A
# summary's attempts differ too: the cluster's pretraining took two.
TIMED = {"curve.csv": ["elapsed_s"], "summary.json": ["seconds", "attempts", "tokens_per_s"]}


def comparable(path: Path):
    if path.name == "curve.csv":
        return pd.read_csv(path).drop(columns=TIMED["curve.csv"]).to_csv(index=False)
    if path.name == "summary.json":
        summary = json.loads(path.read_text())
        return {k: v for k, v in summary.items() if k not in TIMED["summary.json"]}
    return path.read_bytes()


def test_results_equal_a_local_run(cluster_run, local_run):
    ours, theirs = cluster_run.workdir / "results", local_run / "results"
    files = {p.relative_to(ours) for p in ours.rglob("*") if p.is_file()}
    assert files == {p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file()}
    # not demo/logs/..., nor the work directories' links to the outputs compared here
    compared = [f for f in sorted(files) if f.parts[1] != "logs" and ".work" not in f.parts]
    assert any(f.name == "model.safetensors" for f in compared)
    different = [str(f) for f in compared if comparable(ours / f) != comparable(theirs / f)]
    assert not different, f"cluster and local runs differ in {different}"


def test_pretraining_on_two_processes_through_srun(cluster, cluster_run, tmp_path):
    """The multi-node launch (mpi: srun, gpus_per_node) on the one test node: srun starts torchrun,
    whose two processes meet at a c10d rendezvous and train together."""
    profile = fitted_profile(fake_gpus=FAKE_GPUS)
    pretrain = profile["set-resources"]["pretrain_model"]
    pretrain.pop("gpu")
    pretrain.update(
        nodes=1, tasks=2, mpi="srun", cpus_per_task=1, gpus_per_node=FAKE_GPUS,
        slurm_extra=f"--gpus-per-node={FAKE_GPUS} --ntasks-per-node=2",
    )  # fmt: skip
    profile["retries"] = 0
    workdir = tmp_path / "work"
    vocab = "results/demo/vocab"
    (workdir / vocab).parent.mkdir(parents=True)
    subprocess.run(["cp", "-a", str(cluster_run.workdir / vocab), str(workdir / vocab)], check=True)
    shorter = tmp_path / "shorter.yaml"
    shorter.write_text("pretrain: {total_steps: 60, eval_interval: 30}\n")
    command = snakemake(
        write_profile(profile, tmp_path / "profile"),
        workdir,
        configs=[*CONFIGS, str(shorter)],
        targets=[str(PRETRAIN / "model")],
    )
    run = run_on_cluster(command, workdir, limit_pretraining=False)
    assert run.returncode == 0, run.output[-6000:]
    (job,) = run.jobs.of_rule("pretrain_model")
    assert job["JobState"] == "COMPLETED" and job["NumTasks"] == "2"
    log = (workdir / PRETRAIN_LOG).read_text()
    assert "2 processes: srun --nodes=1" in log and "--rdzv-backend c10d" in log
    summary = json.loads((workdir / PRETRAIN / "summary.json").read_text())
    assert summary["world_size"] == 2 and summary["steps"] == 60


# --------------------------------------------------------------------------- stops at any scale
def pretraining_workdir(cluster_run: Run, workdir: Path, settings: dict) -> list[str]:
    """A work directory holding the cluster run's vocabulary, and the configs of a pretraining
    of it with these ``settings`` (the demo slice's, changed)."""
    vocab = "results/demo/vocab"
    (workdir / vocab).parent.mkdir(parents=True)
    subprocess.run(["cp", "-a", str(cluster_run.workdir / vocab), str(workdir / vocab)], check=True)
    changed = workdir.parent / f"{workdir.name}.yaml"
    changed.write_text(json.dumps({"pretrain": settings}))  # JSON is YAML
    return [*CONFIGS, str(changed)]


def two_task_profile(directory: Path) -> Path:
    """The two-process layout of the multi-node launch (srun starts torchrun), on the test node,
    and no early signal: the tests send their own."""
    profile = fitted_profile(fake_gpus=FAKE_GPUS)
    pretrain = profile["set-resources"]["pretrain_model"]
    pretrain.pop("gpu")
    pretrain.update(
        nodes=1, tasks=2, mpi="srun", cpus_per_task=1, gpus_per_node=FAKE_GPUS,
        slurm_extra=f"--gpus-per-node={FAKE_GPUS} --ntasks-per-node=2",
    )  # fmt: skip
    return write_profile(profile, directory)


def vocab_input(output: str) -> str:
    """The input of the pretraining job, as Snakemake printed it."""
    return re.search(r"rule pretrain_model:\n\s+input: (\S+)", output).group(1)


def test_a_two_task_pretraining_job_stopped_by_a_signal_checkpoints_once_and_resumes(
    cluster, cluster_run, tmp_path
):
    """SIGTERM to the job's steps (scancel --signal, as SLURM's --signal sends it): both
    processes stop at the same step after process 0's one checkpoint, none leaves before it is
    written (srun --kill-on-bad-exit would kill the rest), and the retry resumes there and ends
    with the weights of an uninterrupted run of two processes."""
    workdir = tmp_path / "work"
    settings = dict(world_size=2, total_steps=400, eval_interval=200, checkpoint_steps=40)
    configs = pretraining_workdir(cluster_run, workdir, {**settings, "log_interval": 10})
    signalled: dict[str, str] = {}

    def signal_after_the_first_checkpoint(run: Run) -> None:
        running = [j for j in run.jobs.of_rule("pretrain_model") if j["JobState"] == "RUNNING"]
        if signalled or not running or not list((workdir / PRETRAIN / ".work").glob("*.pt")):
            return
        subprocess.run(["scancel", "--signal=TERM", running[0]["JobId"]], check=True)
        signalled.update(running[0])

    command = snakemake(
        two_task_profile(tmp_path / "profile"), workdir, configs, [str(PRETRAIN / "model")]
    )
    run = run_on_cluster(command, workdir, False, act=signal_after_the_first_checkpoint)
    assert run.returncode == 0, run.output[-6000:]
    assert signalled, "the job finished before the test could signal it: give it more steps"
    first, second = run.jobs.of_rule("pretrain_model")
    assert first["JobId"] == signalled["JobId"] and first["JobState"] == "FAILED"
    assert second["JobState"] == "COMPLETED" and second["NumTasks"] == "2"
    # Process 0's lines of both attempts, in the retry's log (the first's from the job history)
    log = (workdir / PRETRAIN_LOG).read_text()
    stopped = re.findall(r"^stopped by (?:signal 15|another process's signal) after "
                         r"checkpointing step (\d+)", log, re.MULTILINE)  # fmt: skip
    assert len(stopped) == 1, log[-3000:]
    step = stopped[0]
    assert log.count(f"checkpoint step {step} ->") == 1, "one checkpoint, process 0's"
    assert re.search(rf"^resumed from \S+ at step {step} ", log, re.MULTILINE), log[-3000:]
    summary = json.loads((workdir / PRETRAIN / "summary.json").read_text())
    assert summary["world_size"] == 2 and summary["steps"] == 400
    # the uninterrupted run: the same settings, two processes of torchrun on this machine
    data_dir = workdir / vocab_input(run.output)
    reference = tmp_path / "reference"
    module_args = [
        "--data-dir", str(data_dir), "--languages", "en", "fr",
        "--out-model", str(reference / "model"), "--work-dir", str(reference / ".work"),
        "--curve", str(reference / "curve.csv"), "--summary", str(reference / "summary.json"),
        "--settings-json", json.dumps(summary["settings"]), "--device", "cpu",
    ]  # fmt: skip
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    done = subprocess.run(
        [*torchrun, "--nproc-per-node", "2", "-m", "xling.pretrain", *module_args],
        capture_output=True, text=True, timeout=600, env={**env, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    ours = load_file(workdir / PRETRAIN / "model" / "model.safetensors")
    theirs = load_file(reference / "model" / "model.safetensors")
    assert all(torch.equal(ours[name], weights) for name, weights in theirs.items())


# Paces the pretraining of a job that inherits this environment: a fixed sleep after each
# optimizer step (xling.pretrain.loop._update), hooked in as the loop module is imported, so
# that no other process of the job (Snakemake's own) imports torch for it.
PACED_STEPS = """
import importlib.abc, importlib.machinery, os, sys, time

DELAY = float(os.environ.get("XLING_TEST_STEP_DELAY") or 0)


class PacedLoop(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "xling.pretrain.loop":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            update = module._update

            def paced(*args, **kwargs):
                update(*args, **kwargs)
                time.sleep(DELAY)

            module._update = paced

        spec.loader.exec_module = exec_module
        return spec


if DELAY:
    sys.meta_path.insert(0, PacedLoop())
"""


def paced_environment(folder: Path, seconds_per_step: float) -> dict[str, str]:
    """The variables that make every pretraining step of a job take ``seconds_per_step`` more."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(PACED_STEPS, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path, "XLING_TEST_STEP_DELAY": str(seconds_per_step)}


def test_a_pretraining_job_stops_itself_before_its_time_limit_and_the_retry_finishes_it(
    cluster, cluster_run, tmp_path
):
    """A 2-minute job with no early signal (as where SLURM's signal never crosses the job
    script's shells): the trainer reads the job's end, stops 1 minute before it with a
    checkpoint, and the retry resumes there. Each step sleeps a fixed 0.1 s: one attempt, which
    has less than the minute to its stop, can never train the 650 steps (65 s of sleep alone),
    whatever the machine's speed; two or three do, and the attempts allow five."""
    margin, limit, delay, steps = 1, 2, 0.1, 650
    assert steps * delay > 60 * (limit - margin), "one attempt must not fit"
    settings = dict(runtime_minutes=limit, stop_margin_minutes=margin, attempts=5)
    settings.update(total_steps=steps, eval_interval=steps, checkpoint_minutes=10)
    workdir = tmp_path / "work"
    configs = pretraining_workdir(cluster_run, workdir, settings)
    profile = fitted_profile(fake_gpus=1)
    profile["set-resources"]["pretrain_model"].pop("slurm_extra", None)  # no --signal
    command = snakemake(
        write_profile(profile, tmp_path / "profile"), workdir, configs, [str(PRETRAIN / "model")]
    )
    paced = paced_environment(tmp_path / "paced", delay)
    run = run_on_cluster(command, workdir, limit_pretraining=False, environment=paced)
    assert run.returncode == 0, run.output[-6000:]
    jobs = run.jobs.of_rule("pretrain_model")
    assert len(jobs) >= 2 and jobs[-1]["JobState"] == "COMPLETED", [j["JobState"] for j in jobs]
    first = jobs[0]
    assert first["JobState"] == "FAILED", "stopped itself, not killed at its limit (TIMEOUT)"
    assert time_limit_minutes(first) == limit and minutes_of(first["RunTime"]) < limit
    # the attempts' lines, in the last one's log (the earlier ones' from the job history)
    log = (workdir / PRETRAIN_LOG).read_text()
    found = re.search(
        rf"^stopped {margin} min before the job's time limit after checkpointing step (\d+)",
        log,
        re.MULTILINE,
    )
    assert found, log[-3000:]
    assert re.search(r"the job's time limit ends \S+ \S+ \((squeue|SLURM_JOB_END_TIME)\)", log)
    assert re.search(rf"^resumed from \S+ at step {found.group(1)} ", log, re.MULTILINE)
    assert "signal" not in log, "no signal had to reach it"
    summary = json.loads((workdir / PRETRAIN / "summary.json").read_text())
    assert summary["steps"] == steps
    # The attempts as the summary records them: the first stopped itself, the last finished.
    attempts = summary["attempts"]
    assert len(attempts) == len(jobs), attempts
    assert attempts[0]["ended"] == f"stopped {margin} min before the job's time limit"
    assert attempts[0]["last_step"] == int(found.group(1)) == attempts[1]["first_step"]
    assert attempts[-1]["ended"] == "finished" and attempts[-1]["last_step"] == steps
    assert all(0 < a["resume_seconds"] < a["wall_seconds"] < 60 * limit for a in attempts)
