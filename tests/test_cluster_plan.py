"""What a study asks of the cluster before submission (xling.cluster.plan)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.dag import plan as dag_plan
from xling.cluster.expected import pretraining_expected
from xling.cluster.plan import (
    JobRequest,
    check_partitions,
    finetune_runs,
    format_layouts,
    format_plan,
    gpus_of,
    layout_cost,
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
    assert "first attempt: 18.0; if every job used its 2 retries" in text
    assert "pretrain.attempts): 108.0." in text


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


@pytest.fixture(scope="module")
def paper_requests(tmp_path_factory):
    """The paper study's plan under the SLURM profile: one dry run for the tests that read it."""
    return plan_requests("slurm", [], ["all"], workdir=tmp_path_factory.mktemp("paper"))


def test_the_paper_plan_covers_every_job_with_the_profiles_resources(tmp_path, paper_requests):
    requests, retries = paper_requests
    counts = dag_plan([REPO / "config/config.yaml"], tmp_path)
    planned = {}
    for request in requests:
        planned[request.rule] = planned.get(request.rule, 0) + 1
    assert planned == {rule: n for rule, n in counts.items() if rule != "all"}
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    profile = yaml.safe_load((REPO / "slurm/config.yaml").read_text())
    assert retries == profile["retries"]
    pretraining = [r for r in requests if r.rule == "pretrain_model"]
    # every attempt asks for the same wall time and resumes; pretrain.attempts jobs in all
    minutes, attempts = config["pretrain"]["runtime_minutes"], config["pretrain"]["attempts"]
    for request in pretraining:
        assert request.stage == "pretrain" and request.gpus == 8
        assert request.minutes == (minutes,) * attempts
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
    # its one NER grid point (2 h) priced one run a job, and packed by 2 and 6: the same job
    layouts = done.stdout.split("Fine-tuning runs by layout", 1)[1].splitlines()
    rows = [line.split()[-4:] for line in layouts[2:5]]
    assert rows == [["1", "1", "2.0", "2.0"], ["2", "1", "2.0", "2.0"], ["6", "1", "2.0", "2.0"]]


def test_expected_pretraining_hours_follow_the_flop_model():
    from xling.cluster.expected import MFU_RANGE, pretraining_expected
    from xling.model.config import EncoderConfig
    from xling.pretrain.flops import PEAK_FLOPS, training_flops_per_step

    model = {"layers": 8, "dim": 768, "heads": 12, "ffn_dim": 3072, "sep_embeddings": False}
    pretrain = {"seq_len": 256, "batch_size": 96, "total_steps": 416800}
    expected = pretraining_expected(model, pretrain, ["en", "fr"])
    config = EncoderConfig(vocab_size=80_000, languages=["en", "fr"], dim=768, layers=8)
    total = 416800 * training_flops_per_step(config, 96, 256, 0.15 * 256)
    fast, slow = expected.hours["V100"]
    assert fast == pytest.approx(total / (PEAK_FLOPS["V100"]["fp16"] * max(MFU_RANGE)) / 3600)
    assert slow == pytest.approx(total / (PEAK_FLOPS["V100"]["fp16"] * min(MFU_RANGE)) / 3600)
    # Wu's models: about a day or two on 8 V100s, hours on 8 H100s
    assert 20 < fast < slow < 60
    assert 2 < expected.hours["H100"][0] < expected.hours["H100"][1] < 8
    # twice the steps, twice the time
    longer = pretraining_expected(model, {**pretrain, "total_steps": 833600}, ["en", "fr"])
    assert longer.hours["A100"][0] == pytest.approx(2 * expected.hours["A100"][0])


def test_the_plan_prints_expected_pretraining_use_beside_the_asked_hours():
    from xling.cluster.expected import pretraining_expected

    model = {"layers": 8, "dim": 768, "heads": 12, "ffn_dim": 3072}
    pretrain = {"seq_len": 256, "batch_size": 96, "total_steps": 416800}
    job = JobRequest(
        "pretrain_model", "pretrain", gpus=8, cpus=32, minutes=(1440.0,) * 4,
        expected=pretraining_expected(model, pretrain, ["en", "fr"]),
    )  # fmt: skip
    text = format_plan([job, job], retries=2)
    assert "expected use by the FLOP model at MFU 0.20 to 0.35" in text
    row = next(
        line for line in text.splitlines() if line.startswith("pretrain_model") and "-" in line
    )
    assert row.split()[1:3] == ["2", "384"]  # 2 jobs, 2 x 8 GPUs x 24 h asked
    assert "asked per attempt: 24.0 h, 4 attempt(s) in all" in text


def finetune_request(rule, minutes, **wildcards) -> JobRequest:
    return JobRequest(
        rule, "finetune", gpus=1, cpus=4, minutes=(minutes,) * 3, wildcards=tuple(wildcards.items())
    )


def test_fine_tuning_runs_are_priced_one_a_job_and_packed():
    """18 XNLI grid points of 12 h and 6 NER points of 2 h of one model: packed by 4, 5 + 2 jobs;
    the same GPU-hours, and a longest job of 48 h (a partition's MaxTime must allow it)."""
    model = {"pair": "en-fr", "variant": "default"}
    requests = [
        finetune_request("finetune_run", 720, task="xnli", hp=f"p{i}", **model) for i in range(18)
    ]
    requests += [
        finetune_request("finetune_run", 120, task="ner", hp=f"p{i}", **model) for i in range(6)
    ]
    runs = finetune_runs(requests)
    assert len(runs) == 24 and {run.family for run in runs} == {"finetune.runs_per_job"}
    one, packed = layout_cost(runs, 1), layout_cost(runs, 4)
    assert (one.jobs, one.gpu_hours, one.longest_hours) == (24, 18 * 12 + 6 * 2, 12)
    assert (packed.jobs, packed.gpu_hours, packed.longest_hours) == (5 + 2, one.gpu_hours, 48)
    # the jobs of a packed plan give back the same runs: 4 + 4 + 4 + 4 + 2 XNLI, 4 + 2 NER
    packs = [
        finetune_request("finetune_pack", 720 * n, task="xnli", pack=str(i), runs=str(n), **model)
        for i, n in enumerate([4, 4, 4, 4, 2], 1)
    ] + [
        finetune_request("finetune_pack", 120 * n, task="ner", pack=str(i), runs=str(n), **model)
        for i, n in enumerate([4, 2], 1)
    ]
    assert layout_cost(finetune_runs(packs), 1) == one
    assert layout_cost(finetune_runs(packs), 4) == packed


def test_muller_runs_are_priced_by_setup_and_a_whole_setup_job_is_left_out():
    setup = {"experiment": "transfer", "mtask": "pos", "msource": "en"}
    requests = [
        finetune_request("muller_finetune", 120, job=f"g/s{i}/hp", **setup) for i in range(10)
    ]
    requests.append(finetune_request("muller_finetune", 1440, job="all", **setup))
    text = "\n".join(format_layouts(requests, [3]))
    assert "muller.runs_per_job" in text and "finetune.runs_per_job" not in text
    rows = [line.split()[-4:] for line in text.splitlines()[3:]]
    assert rows == [["1", "10", "20.0", "2.0"], ["3", "4", "20.0", "6.0"]]


def test_the_plan_names_the_attempts_a_slow_gpu_needs():
    """4 x 24 h leave 72 h if one attempt fails: enough for 47 h on V100s, not for the 94 h of
    a 4-GPU layout, for which it names the attempts that would be."""
    from xling.cluster.expected import Expected
    from xling.cluster.plan import format_attempts

    def job(hours):
        return JobRequest(
            "pretrain_model", "pretrain", gpus=4, cpus=16, minutes=(1440.0,) * 4,
            expected=Expected(hours, 4),
        )  # fmt: skip

    fine = format_attempts(job({"V100": (27.0, 47.0), "A100": (11.0, 19.0)}))
    assert (
        fine
        == "4 attempt(s) give 96 h, 72 h if one fails: they cover the slow end on every GPU type."
    )
    short = format_attempts(job({"V100": (54.0, 94.0), "A100": (22.0, 38.0)}))
    assert "SHORT of the slow end on V100 (up to 94 h)" in short and "A100" not in short
    assert "config pretrain.attempts >= 5 at pretrain.runtime_minutes 1,440" in short


def test_the_plan_refuses_a_stop_margin_the_profiles_signal_beats():
    from xling.cluster.expected import Expected
    from xling.cluster.plan import StudyPlan, slurm_resources, stop_margin_refusals

    resources = {"gpu": 8, "mpi": "srun", "slurm_extra": "--signal=TERM@600", "runtime": 60}
    job = JobRequest(
        "pretrain_model", "pretrain", gpus=8, cpus=32, minutes=(1440.0,),
        expected=Expected({"A100": (1.0, 2.0)}, 8), slurm=slurm_resources(resources),
    )  # fmt: skip
    assert job.slurm == {"gpu": 8, "mpi": "srun", "slurm_extra": "--signal=TERM@600"}

    def refusals(pretrain):
        plan = StudyPlan([job, job], 2, 10, {}, set(), set(), {"pretrain": pretrain})
        return stop_margin_refusals(plan)

    [(problem, change)] = refusals({"stop_margin_minutes": 10})
    assert refusals({"stop_margin_minutes": 10})[(problem, change)] == ["pretrain_model"]
    assert "stop_margin_minutes = 10 is not above" in problem
    assert refusals({"stop_margin_minutes": 15}) == {}
    assert refusals({}) == {}  # the default margin (15) outlasts TERM@600


def _quotes(number: float, quoted: str) -> bool:
    """Whether ``quoted`` (docs' "19,100") is ``number`` to the nearest 100 (or finer)."""
    return abs(number - int(quoted.replace(",", ""))) <= 50


def test_the_gpu_hours_docs_quote_are_the_plans_for_the_8_and_4_gpu_layouts(paper_requests):
    """docs/cluster.md's opening figures, from the plan: all GPU-hours at the first attempt, the
    pretraining jobs' on 8 GPUs and on nodes of 4 (same jobs, half the GPUs, the same runtime
    asked), and the GPU-hours 4 GPUs use by the FLOP model (V100 and H100)."""
    requests, _ = paper_requests
    text = " ".join((REPO / "docs/cluster.md").read_text().split())
    quoted = re.search(
        r"about ([\d,]+) GPU-hours at the first attempt .*?: ([\d,]+) for the (\d+) pretraining "
        r"jobs .*? ask for half the GPUs a job, ([\d,]+) GPU-hours at the first attempt.*?"
        r"\(([\d,]+) to ([\d,]+) on V100s by the FLOP model, ([\d,]+) to ([\d,]+) on H100s\)",
        text,
    )
    assert quoted, "docs/cluster.md's opening paragraph no longer quotes the plan's figures"
    total, pretraining, jobs, four, *used = quoted.groups()
    models = [r for r in requests if r.rule.startswith("pretrain_") and r.gpus]
    totals = totals_by(requests, lambda r: r.stage)
    assert _quotes(sum(t.gpu_hours for t in totals.values()), total)
    assert int(jobs) == len(models) and {r.gpus for r in models} == {8}
    assert _quotes(sum(r.gpus * r.minutes[0] / 60 for r in models), pretraining)
    assert _quotes(sum(4 * r.minutes[0] / 60 for r in models), four)
    on_four = [
        pretraining_expected(**r.pretraining, processes=4).gpu_hours(gpu)
        for gpu in ("V100", "H100")
        for r in models
    ]
    v100, h100 = on_four[: len(models)], on_four[len(models) :]
    got = [sum(low for low, _ in v100), sum(high for _, high in v100)]
    got += [sum(low for low, _ in h100), sum(high for _, high in h100)]
    assert all(_quotes(g, q) for g, q in zip(got, used, strict=True)), (got, used)
