"""What a study asks of the cluster before submission (xling.cluster.plan)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.dag import plan as dag_plan
from xling.cluster.plan import (
    JobRequest,
    check_partitions,
    format_plan,
    gpus_of,
    plan_requests,
    totals_by,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("resources", "gpus"),
    [
        ({}, 0),
        ({"gpu": 1}, 1),
        ({"gpu": 8, "nodes": 1}, 8),
        ({"nodes": 2, "gpus_per_node": 4, "gpu": 99}, 8),  # per node wins over a stray gpu
        ({"gres": "gpu:a100:2", "nodes": 3}, 6),
        ({"gres": "tmpspace:10G"}, 0),
    ],
)
def test_gpus_of_a_job(resources, gpus):
    assert gpus_of(resources) == gpus


REQUESTS = [
    JobRequest("pretrain_model", "pretrain", gpus=8, cpus=32, minutes=(120, 240, 360)),
    JobRequest("finetune_run", "finetune", gpus=1, cpus=4, minutes=(30, 60, 90)),
    JobRequest("finetune_run", "finetune", gpus=1, cpus=4, minutes=(90, 180, 270)),
    JobRequest("select_finetune", "finetune", gpus=0, cpus=1, minutes=(6, 12, 18)),
    JobRequest("download", "acquire", gpus=0, cpus=1, minutes=(60, 120, 180), local=True),
]


def test_totals_count_gpu_hours_of_the_first_attempt_and_of_every_retry():
    stages = totals_by(REQUESTS, lambda r: r.stage)
    assert stages["pretrain"].gpu_hours == 8 * 2
    assert stages["pretrain"].gpu_hours_all_retries == 8 * (2 + 4 + 6)
    assert stages["finetune"].jobs == 3 and stages["finetune"].gpu_jobs == 2
    assert stages["finetune"].gpu_hours == pytest.approx(0.5 + 1.5)
    assert stages["finetune"].cpu_hours == pytest.approx(4 * 0.5 + 4 * 1.5 + 0.1)
    # a local rule runs on the submit host: no cluster hours
    assert stages["acquire"].local_jobs == 1 and stages["acquire"].cpu_hours == 0


def test_the_table_lists_stages_in_data_order_with_totals():
    text = format_plan(REQUESTS, retries=2)
    lines = text.splitlines()
    order = [line.split()[0] for line in lines[2:] if line[:1].strip()]
    assert order[:3] == ["acquire", "pretrain", "finetune"]
    assert "= finetune" in text  # a stage of several rules has a subtotal
    assert "first attempt: 18.0; if every job used its 2 retries: 108.0" in text


def fake_sinfo(tmp_path, partitions):
    script = tmp_path / "sinfo"
    script.write_text("#!/bin/sh\nprintf '" + "\\n".join(partitions) + "\\n'\n")
    script.chmod(0o755)
    return dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}")


def test_partitions_are_checked_against_sinfo(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", fake_sinfo(tmp_path, ["cpu", "gpu"])["PATH"])
    assert check_partitions(["cpu", "gpu"]) == "This cluster has them all."
    message = check_partitions(["cpu", "a100"])
    assert "MISSING on this cluster: a100" in message and "SITE" in message
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert "No sinfo here" in check_partitions(["cpu"])


def test_a_failing_sinfo_is_reported_in_one_line(tmp_path, monkeypatch):
    script = tmp_path / "sinfo"
    script.write_text(
        "#!/bin/sh\necho 'sinfo: error: DNS' >&2\necho 'sinfo: fatal: no config' >&2\nexit 1\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    message = check_partitions(["cpu"])
    assert "sinfo: fatal: no config" in message and "DNS" not in message
    assert "\n" not in message


def test_the_paper_plan_covers_every_job_with_the_profiles_resources(tmp_path):
    requests, retries = plan_requests("slurm", [], ["all"], workdir=tmp_path)
    counts = dag_plan([REPO / "config/config.yaml"], tmp_path)
    planned = {}
    for request in requests:
        planned[request.rule] = planned.get(request.rule, 0) + 1
    assert planned == {rule: n for rule, n in counts.items() if rule != "all"}
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    profile = yaml.safe_load((REPO / "slurm/config.yaml").read_text())
    assert retries == profile["retries"]
    pretraining = [r for r in requests if r.rule == "pretrain_model"]
    minutes = config["pretrain"]["runtime_minutes"]
    for request in pretraining:
        assert request.stage == "pretrain" and request.gpus == 8
        assert request.minutes == tuple(minutes * a for a in range(1, retries + 2))
        assert request.partition == profile["set-resources"]["pretrain_model"]["slurm_partition"]
    cpu_only = [r for r in requests if r.stage in ("acquire", "preprocess", "vocab")]
    assert cpu_only and all(r.gpus == 0 for r in cpu_only)
    assert {r.gpus for r in requests if r.rule == "finetune_run"} == {1}


def test_the_command_prints_one_tables_plan(tmp_path):
    command = [
        sys.executable, "-m", "xling.cluster.plan", "--directory", str(tmp_path),
        "--configfile", "config/demo.yaml", "tests/config/cluster.yaml",
        "--", "results/demo/tables/table1.md",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "pretrain_model" in done.stdout and "finetune_run" in done.stdout
    assert "cka" not in done.stdout  # Table 1 needs no CKA
    assert "GPU-hours asked for at the first attempt" in done.stdout
