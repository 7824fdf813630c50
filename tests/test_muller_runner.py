"""A Muller job end to end on a tiny on-disk BERT (the paper study's mBERT path): the cached
encoding, the reference and a RANDOM-INIT run in one process, the similarity of the fine-tuned
encoder and on resamples of the parallel sentences, a resumed job that skips finished runs (and
reruns the similarity runs when the resamples change), and the collector on the result."""

import json

import pandas as pd
import pytest
import torch

from tests.finetune_world import LANGS, World
from tests.hf_world import build_tiny_bert, write_world_files
from xling.finetune import FinetuneSettings
from xling.finetune.tasks import make_task
from xling.jobs.done import done_digest
from xling.model import load_encoder_tokenizer
from xling.muller import runner
from xling.muller.collect import score_rows, select_runs, similarity_rows
from xling.muller.encoded import encode_setup, load_encoded, save_encoded
from xling.muller.similarity import parallel_ids

SETTINGS = {"epochs": 1, "max_length": 48}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("muller")
    write_world_files(root, n_train=40, n_eval=12)
    return root, build_tiny_bert(root, layers=4)


def _encode(root, model, path, source="en"):
    tokenizer = load_encoder_tokenizer(model)
    settings = FinetuneSettings.from_config("pos", SETTINGS, seed=0)
    spec = make_task("pos", tokenizer, settings)
    ud = root / "ud"
    tests = {lang: (lang, ud / lang / "test.conllu") for lang in LANGS}
    tests["en_other"] = ("en", ud / "en" / "dev.conllu")  # a named, non-language evaluation set
    # the world has English training files only: another source trains on its dev set
    train, dev = (ud / source / n for n in ("train.conllu", "dev.conllu"))
    if source != "en":
        train, dev = dev, ud / source / "test.conllu"
    encoded = encode_setup(spec, source, train, dev, tests, 48, 64)
    save_encoded(path, encoded, [train], "pos")
    return tokenizer


def test_a_job_runs_reference_and_random_init_from_one_cache_and_resumes(
    world, tmp_path, monkeypatch
):
    root, model = world
    cache = tmp_path / "encoded.pt"
    tokenizer = _encode(root, model, cache)
    assert set(load_encoded(cache, "pos").test) == {*LANGS, "en_other"}
    with pytest.raises(ValueError, match="not a ner encoding cache"):
        load_encoded(cache, "ner")
    sentences = [World(seed=i) for i in range(8)]  # the same draws in both languages
    words = {lang: [w.tree(lang)[0] for w in sentences] for lang in LANGS}

    torch.save(parallel_ids(tokenizer, words, 8), tmp_path / "parallel.pt")
    hp = {"batch_size": 8, "lr": 0.001}
    runs = [
        {"group": g, "seed": 1, "hp": hp, "dir": str(tmp_path / g), "similarity": g == "ref"}
        for g in ("ref", "1-2")
    ]
    job = tmp_path / "job.json"
    args = ("pos", "en", SETTINGS, runs, cache, job)
    parallel = {"parallel_path": tmp_path / "parallel.pt"}
    resamples = {"count": 5, "seed": 3}
    results = runner.run_job(runner.MullerJob(str(model), *args, **parallel, resamples=resamples))
    assert [m["random_init"] for m in results] == [None, "1-2"]
    assert all(0 <= m["test"]["en_other"] <= 1 for m in results)
    listed = json.loads(job.read_text())
    assert listed["runs"] == [r["dir"] for r in runs]
    assert listed["done"] == [done_digest(r["dir"]) for r in runs]
    assert (tmp_path / "ref" / "similarity.csv").exists()
    assert not (tmp_path / "1-2" / "similarity.csv").exists()
    measured = pd.read_csv(tmp_path / "ref" / "similarity.csv")
    assert set(measured["source"]) == {"en"} and set(measured["target"]) == set(LANGS) - {"en"}
    # ... and its CKA on 5 resamples of the parallel sentences, every comparison of each
    resampled = pd.read_csv(tmp_path / "ref" / "similarity_resamples.csv")
    assert len(resampled) == 5 * len(measured)
    assert sorted(resampled["replicate"].unique()) == list(range(5))

    # a rerun finds both runs done and trains nothing, also after Snakemake deleted the job's
    # declared output, as before any rerun (the runs' done.json lie beside it, undeclared)
    job.unlink()
    monkeypatch.setattr("xling.finetune.run_finetune", _no_training)
    again = runner.run_job(runner.MullerJob(str(model), *args, **parallel, resamples=resamples))
    assert again == results
    # other resamples: only the run that measures similarity is run again (its encoder is gone)
    trained = []
    monkeypatch.setattr("xling.finetune.run_finetune", _recording(trained, results[0]))
    runner.run_job(
        runner.MullerJob(str(model), *args, **parallel, resamples={"count": 6, "seed": 3})
    )
    assert trained == [str(tmp_path / "ref")]
    # the job file lists the same directories, and says which run changed (Snakemake reruns a
    # consumer of a newer file only if its content changed)
    rerun = json.loads(job.read_text())
    assert rerun["runs"] == listed["runs"]
    assert rerun["done"][0] != listed["done"][0] and rerun["done"][1] == listed["done"][1]
    # so do other parallel sentences and the debiased estimator: the similarity measured on the
    # old ones would stay beside the pretrained model's, measured on the new
    for change in ({"debiased": True}, {}):
        trained.clear()
        if not change:  # the parallel sentences rebuilt (fewer of them)
            torch.save(parallel_ids(tokenizer, words, 6), tmp_path / "parallel.pt")
        kept = {"resamples": {"count": 6, "seed": 3}, **change}
        runner.run_job(runner.MullerJob(str(model), *args, **parallel, **kept))
        assert trained == [str(tmp_path / "ref")], change

    table = [
        {"experiment": "transfer", "task": "pos", "source": "en", "hp_id": "bs8_lr0.001", **r}
        for r in runs
    ]
    selected = select_runs(table)
    evaluations = {"transfer/pos/en": {lang: lang for lang in LANGS}}
    scores = score_rows(selected, evaluations)
    assert {row["group"] for row in scores} == {"ref", "1-2"}
    pretrained = tmp_path / "pretrained.csv"
    pretrained.write_text("source,target,layer,cka,cka_debiased\n")
    rows = similarity_rows(selected, pretrained)
    assert {row["layer"] for row in rows} == {str(i) for i in range(5)}  # L0..L4
    assert all(0 <= float(row["cka"]) <= 1 + 1e-9 for row in rows)


def _no_training(*args, **kwargs):
    raise AssertionError("a finished run was trained again")


def _recording(trained, metrics):
    def run_finetune(job, *, on_done=None, **kwargs):
        trained.append(str(job.out_dir))
        if on_done is not None:
            on_done(metrics)
        return metrics

    return run_finetune


def test_a_fine_tuned_model_measures_its_own_source_against_the_others(world, tmp_path):
    """Muller's Table 4 pairs a source with its targets: a model fine-tuned from French compares
    French with every other language, not English (whose rows come from English's models)."""
    root, model = world
    cache = tmp_path / "encoded.pt"
    tokenizer = _encode(root, model, cache, source="fr")
    sentences = [World(seed=i) for i in range(8)]
    words = {lang: [w.tree(lang)[0] for w in sentences] for lang in LANGS}
    torch.save(parallel_ids(tokenizer, words, 8), tmp_path / "parallel.pt")
    run = {"group": "ref", "seed": 1, "hp": {"batch_size": 8, "lr": 0.001}, "similarity": True}
    run["dir"] = str(tmp_path / "ref")
    runner.run_job(
        runner.MullerJob(
            str(model), "pos", "fr", SETTINGS, [run], cache, tmp_path / "job.json",
            parallel_path=tmp_path / "parallel.pt",
        )
    )  # fmt: skip
    measured = pd.read_csv(tmp_path / "ref" / "similarity.csv")
    assert set(measured["source"]) == {"fr"}
    assert set(measured["target"]) == set(LANGS) - {"fr"}


def test_inputs_longer_than_the_model_takes_name_the_muller_key(world, tmp_path):
    """A Muller run's max_length comes from muller.tasks.<task>, not Table 1's tasks.<task>."""
    root, model = world
    cache = tmp_path / "encoded.pt"
    _encode(root, model, cache)
    hp = {"batch_size": 8, "lr": 0.001}
    runs = [
        {"group": "ref", "seed": 1, "hp": hp, "dir": str(tmp_path / "ref"), "similarity": False}
    ]
    settings = {**SETTINGS, "max_length": 100}  # the tiny BERT has 64 positions
    with pytest.raises(ValueError, match=r"max_positions 64 .*config key muller\.tasks\.pos\."):
        runner.run_job(
            runner.MullerJob(str(model), "pos", "en", settings, runs, cache, tmp_path / "job.json")
        )
