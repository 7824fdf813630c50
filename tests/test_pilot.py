"""The pilot end to end on the test SLURM cluster: config/pilot.yaml over the paper config, its
downloads from a local server on 127.0.0.1 (the miniature's toy-world releases and a tiny BERT as
mBERT's files), through the SLURM profile with CPU workers. Its pretraining stops itself at attempt
1, is stopped by SLURM's early signal at attempt 2 and resumes until pretrain.max_train_minutes;
the report forecasts the study (the miniature) from the measured step times. The test's only
changes of scale are tests/config/miniature.yaml's and those below (a 3-minute attempt, SLURM's
signal 60 s before it ends); needs root, like tests/test_cluster.py.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.cluster import local_slurm
from tests.cluster.local_slurm import LocalSlurm
from tests.cluster.profile import fitted_profile, load_profile, write_profile
from tests.fileserver import FileServer
from tests.hf_world import build_tiny_bert
from tests.test_cluster import run_on_cluster
from tests.test_miniature import PAPER, UD_TREEBANKS, miniature_spec, overlay_for
from xling.cluster.pilot import read_pretrain, stop_checks
from xling.toyworld import generate
from xling.toyworld.releases import write_releases
from xling.toyworld.releases_analysis import write_analysis_releases

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
R = Path("results/pilot")
MODEL = R / "pretrain/en-zh/default"
BERT = "tiny/bert-multilingual"
LEAD_SECONDS = 60  # the test profile's --signal=TERM@60 for pretraining (the study's: 600)
# An attempt of 3 minutes: attempt 1 stops itself 2.1 minutes before its end (above the signal's
# lead and SLURM's minute of leeway), attempt 2 is signalled within its last 2 minutes.
PILOT_TEST = {
    "study": "pilot",
    "pretrain": {
        "runtime_minutes": 3,
        "stop_margin_minutes": 2.1,
        "max_train_minutes": 3.5,
        "attempts": 6,
        "total_steps": 1_000_000,  # never reached: the pilot ends by max_train_minutes
        "eval_interval": 200,
        "checkpoint_minutes": 10,
        "log_interval": 10,
    },
    "muller": {
        "languages": ["en", "zh"],
        "sources": ["en"],
        "model": {"name": BERT, "layers": 2},
        "similarity": {"languages": ["en", "zh"], "sentences": 20},
        "groups": {"table1": ["1-2"], "table2": ["1-2"], "table5": ["1-2"]},
        "tasks": {task: {"max_length": 64} for task in ("parsing", "pos", "ner")},
        # Table 2's French sets: the miniature serves no French (the pilot runs no Table 2 job)
        "domain": {
            "tasks": {
                **{
                    task: {
                        "evaluations": {
                            name: {"lang": "en", "dataset": "partut"}
                            for name in ("fr_tran", "fr_wiki")
                        }
                    }
                    for task in ("parsing", "pos")
                },
                "ner": {"evaluations": {"fr": {"lang": "en", "dataset": "wikiann"}}},
            }
        },
    },
    "report": {"resamples": 0},
}

pytestmark = pytest.mark.e2e


def tiny_bert_site(site: Path) -> list[str]:
    """A tiny BERT served where the transformers template puts mBERT's files; its file names."""
    model = build_tiny_bert(site.parent / "bert_build", layers=2, max_positions=64)
    served = site / BERT / "resolve" / "main"
    served.mkdir(parents=True)
    names = sorted(p.name for p in model.iterdir() if p.is_file())
    for name in names:
        shutil.copy(model / name, served / name)
    return names


def pilot_overlay(server: FileServer, files: list[str], miniature: Path, profile: Path) -> dict:
    overlay = json.loads(json.dumps(PILOT_TEST))
    url = f"{server.url}/{{name}}/resolve/{{revision}}/{{file}}"
    overlay["data"] = {"transformers": {"url": url, "revision": "main", "files": files}}
    study = [str(REPO / "config/config.yaml"), str(miniature)]
    overlay["pilot"] = {"forecast": {"configfiles": study, "profile": str(profile)}}
    return overlay


def pilot_profile(directory: Path) -> Path:
    profile = fitted_profile(fake_gpus=1)
    extra = profile["set-resources"]["pretrain_model"].get("slurm_extra", "")
    extra = re.sub(r"--signal=(B:)?TERM@\d+", f"--signal=TERM@{LEAD_SECONDS}", extra)
    profile["set-resources"]["pretrain_model"]["slurm_extra"] = extra
    return write_profile(profile, directory)


@pytest.fixture(scope="module")
def pilot(tmp_path_factory):
    local_slurm.skip_unless_available()
    root = tmp_path_factory.mktemp("pilot")
    toy, site, workdir = root / "toyworld", root / "site", root / "work"
    generate(miniature_spec(), toy)
    write_releases(toy, site, languages=["en", "zh"], ud_treebanks=UD_TREEBANKS)
    write_analysis_releases(toy, site, languages=["en", "zh"], ud_datasets=PAPER["data"]["ud"],
                            tatoeba_codes=PAPER["data"]["tatoeba"]["codes"])  # fmt: skip
    files = tiny_bert_site(site)
    shutil.copytree(site / "manual", workdir / "resources" / "manual")
    profile = pilot_profile(root / "profile")
    partitions = sorted({r.get("slurm_partition") for r in load_profile()["set-resources"].values()
                         if r.get("slurm_partition")} | {"cpu"})  # fmt: skip
    cluster = LocalSlurm(partitions, fake_gpus=1)
    with FileServer(site) as server:
        miniature = workdir / "miniature.yaml"
        miniature.write_text(overlay_for(server, site))
        test_overlay = workdir / "pilot_test.yaml"
        test_overlay.write_text(yaml.safe_dump(pilot_overlay(server, files, miniature, profile)))
        configs = [REPO / "config/config.yaml", REPO / "config/pilot.yaml", miniature, test_overlay]
        command = [
            SNAKEMAKE, "--profile", str(profile), "--directory", str(workdir),
            "--snakefile", str(REPO / "Snakefile"), "--show-failed-logs",
            "--configfile", *map(str, configs), "--", "pilot",
        ]  # fmt: skip
        try:
            cluster.start()
            run = run_on_cluster(command, workdir, limit_pretraining=False)
        finally:
            cluster.stop()
    assert run.returncode == 0, run.output[-8000:]
    return run


def test_the_pretraining_crossed_both_stops_and_resumed_each_time(pilot):
    measure = read_pretrain(pilot.workdir / MODEL / "summary.json")
    ended = [a.ended for a in measure.attempts]
    assert ended[0] == "time limit" and ended[1] == "signal" and ended[-1] == "finished", ended
    assert all(ok for _, ok, _ in stop_checks(measure.attempts)), stop_checks(measure.attempts)
    jobs = pilot.jobs.of_rule("pretrain_model")
    assert len(jobs) == len(measure.attempts), [j["JobState"] for j in jobs]
    assert jobs[-1]["JobState"] == "COMPLETED"
    log = (pilot.workdir / R / "logs/pretrain/en-zh_default.log").read_text()
    assert re.search(r"^stopped by signal 15 after checkpointing step \d+", log, re.MULTILINE)


def test_every_gpu_job_of_the_pilot_went_through_sbatch_on_the_gpu_partition(pilot):
    gpu_partition = load_profile()["set-resources"]["pretrain_model"]["slurm_partition"]
    for rule in ("pretrain_model", "finetune_run", "muller_finetune"):
        jobs = pilot.jobs.of_rule(rule)
        assert jobs and all(job["Partition"] == gpu_partition for job in jobs), rule


def test_the_report_forecasts_the_study_from_the_measured_step_time(pilot):
    """The study (the miniature over the paper config) priced at the pilot's measured step time:
    each of its pretraining jobs (one GPU each on the test profile) trains total_steps."""
    report = (pilot.workdir / R / "pilot/report.md").read_text()
    assert "Stops and resumes: every stop path crossed." in report
    measure = read_pretrain(pilot.workdir / MODEL / "summary.json")
    steps = yaml.safe_load((pilot.workdir / "miniature.yaml").read_text())["pretrain"][
        "total_steps"
    ]
    found = re.search(r"^\| pretrain \| (\d+) \| ([\d.,e+-]+) \|", report, re.MULTILINE)
    assert found, report
    jobs, forecast = int(found.group(1)), float(found.group(2).replace(",", ""))
    assert jobs > 1  # every model of the study, not the pilot's one
    gpu_hours = jobs * steps * measure.seconds_per_step * measure.processes / 3600
    assert gpu_hours > 0 and forecast == pytest.approx(gpu_hours, rel=0.01)
    html = (pilot.workdir / R / "pilot/report.html").read_text()
    assert "<h1>Pilot report</h1>" in html and "<table>" in html


def test_the_pilot_planned_only_its_slice(pilot):
    planned = dict(re.findall(r"^(\w+)\s+(\d+)$", pilot.output.split("Job stats:", 1)[1].split(
        "\n\n", 1)[0], re.MULTILINE))  # fmt: skip
    assert planned["pretrain_model"] == "1" and planned["finetune_run"] == "3"
    assert planned["muller_finetune"] == "1" and planned["cka"] == "1"
