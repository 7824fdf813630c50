"""One process for every fine-tuning run of a model (finetune.runs_per_job: model): each run's
files as a job of its own would write them, a resumed job that keeps finished runs, and a changed
setting or input that reruns its run."""

import json
from pathlib import Path

import pytest
import torch

from tests.finetune_world import build_world, make_model, task_data
from xling.finetune import FinetuneJob, FinetuneSettings, run_finetune
from xling.finetune.bundle import run_model_job
from xling.jobs.done import DONE, done_digest

torch.set_num_threads(1)
NER = {"epochs": 1, "max_length": 48}
PARSING = {"epochs": 1, "max_length": 48, "arc_dim": 16, "label_dim": 8}


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("world"))


def _run(root, tmp_path, task, settings, lr):
    data = task_data(root, task)
    out = tmp_path / "ft" / task / f"lr{lr}"
    return {
        "task": task,
        "hp": {"batch_size": 8, "lr": lr},
        "settings": settings,
        "seed": 1,
        "source": "en",
        "train": str(data.train),
        "dev": {"en": str(data.dev["en"])},
        "test": {lang: str(data.test[lang]) for lang in ("en", "fr")},
        "out_dir": str(out),
        "work_dir": str(out / ".work"),
        "pair": "en-fr",
        "variant": "default",
    }


def _no_training(*args, **kwargs):
    raise AssertionError("a finished run was trained again")


def test_runs_of_one_model_in_one_process_match_single_jobs_and_resume(
    world_dir, tmp_path, monkeypatch
):
    root = world_dir[0]
    model = make_model(world_dir, tmp_path)
    runs = [
        _run(root, tmp_path, "ner", NER, 0.01),
        _run(root, tmp_path, "ner", NER, 0.003),
        _run(root, tmp_path, "parsing", PARSING, 0.003),
    ]
    job = tmp_path / "runs.json"
    results = run_model_job(model, runs, job)
    assert [m["task"] for m in results] == ["ner", "ner", "parsing"]
    assert [m["hp_id"] for m in results] == ["bs8_lr0.01", "bs8_lr0.003", "bs8_lr0.003"]
    listed = json.loads(job.read_text())
    assert listed["metrics"] == [f"{run['out_dir']}/metrics.json" for run in runs]
    assert listed["done"] == [done_digest(run["out_dir"]) for run in runs]
    for run, metrics in zip(runs, results, strict=True):
        assert json.loads((Path(run["out_dir"]) / "metrics.json").read_text()) == metrics
        assert metrics["pair"] == "en-fr" and set(metrics["test"]) == {"en", "fr"}
        assert not Path(run["work_dir"]).exists()

    # The same run as a job of its own gives the same numbers.
    single = run_finetune(
        FinetuneJob(
            "ner",
            model,
            task_data(root, "ner"),
            runs[0]["hp"],
            tmp_path / "single",
            tmp_path / "single_work",
            FinetuneSettings.from_config("ner", NER, seed=1, source_lang="en"),
            pair="en-fr",
            variant="default",
        )
    )
    assert single["dev"]["en"] == results[0]["dev"]["en"] and single["test"] == results[0]["test"]

    # A job killed after its first run: the rerun keeps that run and trains the others. Snakemake
    # deletes the job's declared output before the rerun; the runs' done.json lie beside it.
    for run in runs[1:]:
        (Path(run["out_dir"]) / DONE).unlink()
    job.unlink()
    trained = []

    def counting(job, **kwargs):  # run_finetune, noting which tasks it trains
        trained.append(job.task)
        return run_finetune(job, **kwargs)

    monkeypatch.setattr("xling.finetune.run_finetune", counting)
    again = run_model_job(model, runs, job)
    assert trained == ["ner", "parsing"] and again[0] == results[0]

    # Nothing left to do: no training at all.
    monkeypatch.setattr("xling.finetune.run_finetune", _no_training)
    assert run_model_job(model, runs, job) == again

    # A changed setting reruns its run only.
    monkeypatch.setattr("xling.finetune.run_finetune", counting)
    trained.clear()
    runs[2] = {**runs[2], "settings": {**PARSING, "label_dim": 16}}
    before = json.loads(job.read_text())
    run_model_job(model, runs, job)
    assert trained == ["parsing"]
    # The job file changes with it, though it lists the same paths: Snakemake reruns a consumer
    # of a newer file only if its content changed.
    after = json.loads(job.read_text())
    assert after["metrics"] == before["metrics"]
    assert after["done"][:2] == before["done"][:2] and after["done"][2] != before["done"][2]


def test_a_done_record_of_other_settings_is_deleted_before_the_run_is_redone(tmp_path):
    from xling.jobs.done import DONE, finished, mark_done

    mark_done(tmp_path, {"lr": 1}, {"dev": 0.5})
    assert finished(tmp_path, {"lr": 1}) == {"dev": 0.5}
    assert finished(tmp_path, {"lr": 2}) is None
    # redoing it for lr 2 may be killed half-way; back at lr 1, nothing claims to be done
    assert not (tmp_path / DONE).exists() and finished(tmp_path, {"lr": 1}) is None


def test_a_run_killed_before_its_done_record_resumes_after_its_last_epoch(
    world_dir, tmp_path, monkeypatch, caplog
):
    """Its work directory stays until done.json is written, so the rerun trains no epoch again."""
    from xling.jobs import done

    root = world_dir[0]
    model = make_model(world_dir, tmp_path)
    runs = [_run(root, tmp_path, "ner", NER, 0.01)]

    def killed(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(done, "mark_done", killed)
    with pytest.raises(KeyboardInterrupt):
        run_model_job(model, runs, tmp_path / "runs.json")
    assert any(Path(runs[0]["work_dir"]).iterdir()), "the epochs went before the done record"
    monkeypatch.undo()
    caplog.set_level("INFO")
    run_model_job(model, runs, tmp_path / "runs.json")
    assert "resuming after epoch 1" in caplog.text
    assert (Path(runs[0]["out_dir"]) / DONE).exists() and not Path(runs[0]["work_dir"]).exists()
