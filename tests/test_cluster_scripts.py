"""The scripts of a cluster's first run (slurm/): the downloads alone and the envs, both where the
internet is (a login or data-transfer node), and Snakemake itself as a chain of long CPU jobs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cluster import local_slurm
from tests.cluster.local_slurm import LocalSlurm

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
SCRIPTS = ("downloads.sh", "envs.sh", "controller.sbatch")
# The compiler flags of eflomal 2.0.0's src/Makefile, which pip runs as it builds the text env.
EFLOMAL_FLAGS = "-Ofast -march=native -Wall --std=gnu99 -Wno-unused-function -g -fopenmp"
EFLOMAL_MAKEFILE = f'CFLAGS={EFLOMAL_FLAGS}\nall:\n\t@echo "$(CC) $(CFLAGS)"\n'
# Stands in for Snakemake: says where it ran and with what, then builds "eflomal" as pip would.
FAKE_ENV_BUILD = """#!/usr/bin/env bash
echo "in $PWD: snakemake $*"
make -s -C {makefile_dir} all
"""


def download_rules_of_the_script() -> list[str]:
    text = (REPO / "slurm/downloads.sh").read_text(encoding="utf-8")
    listed = re.search(r"RULES=\(([^)]*)\)", text)
    assert listed, "slurm/downloads.sh has no RULES=(...)"
    return listed.group(1).split()


def rules_that_fetch() -> list[str]:
    """The rules of acquire.smk whose job is workflow/scripts/download.py."""
    text = (REPO / "workflow/rules/acquire.smk").read_text(encoding="utf-8")
    blocks = re.split(r"\n\s*rule (\w+):", text)[1:]
    pairs = zip(blocks[::2], blocks[1::2], strict=True)
    return sorted(name for name, body in pairs if "download.py" in body)


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_script_is_valid_bash(script):
    subprocess.run(["bash", "-n", str(REPO / "slurm" / script)], check=True)


def test_the_downloads_script_names_every_rule_that_fetches():
    assert sorted(download_rules_of_the_script()) == rules_that_fetch()


def test_the_downloads_script_plans_the_downloads_and_nothing_else():
    done = subprocess.run(
        ["bash", str(REPO / "slurm/downloads.sh"), "-n", "--quiet", "rules"],
        capture_output=True,
        text=True,
        env={**os.environ, "SNAKEMAKE": SNAKEMAKE},
        timeout=600,
        check=True,
    )
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", done.stdout, re.MULTILINE))
    total = int(counts.pop("total"))
    assert total > 0 and sum(map(int, counts.values())) == total
    assert set(counts) <= set(download_rules_of_the_script())
    assert {"download_wikipedia", "download_commoncrawl", "download"} <= set(counts)


def test_the_envs_script_builds_only_the_envs_and_eflomal_for_any_cpu(tmp_path):
    """Where it runs (a login node) is likely not where eflomal's aligner runs: pip's build of it
    gets the Makefile's flags without -march=native, through MAKEFLAGS."""
    (tmp_path / "Makefile").write_text(EFLOMAL_MAKEFILE)
    fake = tmp_path / "snakemake"
    fake.write_text(FAKE_ENV_BUILD.format(makefile_dir=tmp_path))
    fake.chmod(0o755)
    done = subprocess.run(
        ["bash", str(REPO / "slurm/envs.sh"), "--configfile", "my.yaml"],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "SNAKEMAKE": str(fake)},
        timeout=60, check=True,
    )  # fmt: skip
    ran, compiled = done.stdout.splitlines()
    expected = "snakemake --profile slurm --conda-create-envs-only all --configfile my.yaml"
    assert ran == f"in {REPO}: {expected}"
    flags = compiled.split()[1:]
    assert "-march=native" not in flags and not any(f.startswith("-march") for f in flags)
    # every other flag of the Makefile's stays, the optimisation and OpenMP above all
    assert flags == [flag for flag in EFLOMAL_FLAGS.split() if flag != "-march=native"]


# ------------------------------------------------------------------ the controller on SLURM
FAKE_SNAKEMAKE = """#!/usr/bin/env bash
# Stands in for Snakemake: notes its round and arguments; the first round runs until SIGINT,
# then takes a second to "cancel its jobs"; a later round finds the workflow done.
log={log}
echo "round ${{XLING_CONTROLLER_ROUND:-1}} partition ${{SLURM_JOB_PARTITION}} args $*" >> "$log"
if [ "${{XLING_CONTROLLER_ROUND:-1}}" = 1 ]; then
    trap 'echo "round 1 interrupted" >> "$log"; sleep 1; exit 130' INT
    while true; do sleep 1; done
fi
exit 0
"""


@pytest.fixture(scope="module")
def slurm():
    local_slurm.skip_unless_available()
    cluster = LocalSlurm(["cpu"], fake_gpus=0)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def _jobs_of(name: str) -> list[str]:
    done = subprocess.run(
        ["squeue", "-h", "-n", name, "-o", "%i %T"], capture_output=True, text=True, check=False
    )
    return done.stdout.split("\n") if done.stdout.strip() else []


@pytest.mark.e2e
def test_the_controller_hands_over_to_the_next_before_its_time_limit(slurm, tmp_path):
    """Near its time limit the controller interrupts Snakemake, waits for it to cancel its jobs,
    and submits the next controller with the same partition; the next, finding the workflow
    done, ends the chain."""
    log, fake = tmp_path / "rounds.log", tmp_path / "snakemake"
    fake.write_text(FAKE_SNAKEMAKE.format(log=log))
    fake.chmod(0o755)
    name = "xling-controller"  # the script's own job name, which its successor keeps
    workdir = tmp_path / "repo"
    (workdir / "slurm").mkdir(parents=True)
    (workdir / "logs/slurm").mkdir(parents=True)
    (workdir / "slurm/controller.sbatch").write_text(
        (REPO / "slurm/controller.sbatch").read_text(encoding="utf-8")
    )
    environment = {**os.environ, "SNAKEMAKE": str(fake), "XLING_CONTROLLER_ROUNDS": "2"}
    # A 2-minute limit and the signal 70 s before it (SLURM may send it up to a minute early).
    command = ["sbatch", "--parsable", "--partition=cpu", "--time=2", "--signal=B:INT@70"]
    command += ["slurm/controller.sbatch", "--configfile", "x.yaml"]
    subprocess.run(command, cwd=workdir, env=environment, check=True, capture_output=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if "round 2" in text and not _jobs_of(name):
            break
        time.sleep(2)
    text = log.read_text()
    assert "round 1 partition cpu args --profile slurm all --configfile x.yaml" in text
    assert "round 1 interrupted" in text
    assert "round 2 partition cpu args --profile slurm all --configfile x.yaml" in text
    assert text.count("round 2 partition") == 1 and "round 3" not in text
    assert not _jobs_of(name), "the chain did not end"
