"""The Figure 5/8 sweep resumes a killed run only on the inputs it started from: a finished
layer computed on an older model or mapping is not mixed into the new table."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xling.analysis import transfer as transfer_module
from xling.analysis import transfer_sweep
from xling.contracts.items import TEST_ITEMS, write_test_items
from xling.model.config import EncoderConfig

LAYERS = 2


class Killed(Exception):
    pass


@pytest.fixture
def sweep(tmp_path, monkeypatch):
    """A sweep over fake models whose layer runs record what they read."""
    for name in ("source", "target"):
        (tmp_path / name).mkdir()
        EncoderConfig(
            vocab_size=10, layers=LAYERS, dim=4, heads=1, ffn_dim=8, languages=["en"]
        ).save(tmp_path / name / "config.json")
        (tmp_path / name / "model.safetensors").write_bytes(b"weights v1")
    files = {split: tmp_path / f"en.{split}.txt" for split in ("train", "dev", "test")}
    for path in [*files.values(), tmp_path / "fr.test.txt"]:
        path.write_text("data\n")
    np.savez(tmp_path / "maps.npz", maps=np.stack([np.eye(4)] * (LAYERS + 1)))
    calls, kill_at = [], {"layer": None}

    def fake_layer(job, **kwargs):
        layer, out_dir = job.layer, job.out_dir
        if layer == kill_at["layer"]:
            raise Killed
        version = (tmp_path / "target" / "model.safetensors").read_text()
        calls.append((layer, version))
        score = 0.5 if version == "weights v1" else 0.7
        metrics = {
            "test": {"en": 0.9},
            "evaluations": {"mapped": {"lang": "fr", "mapped": True, "test": score}},
        }
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "metrics.json").write_text(json.dumps(metrics))
        write_test_items(out_dir / TEST_ITEMS, "f1", {"en": [(1, 1)], "mapped": [(1, 1)]})
        return metrics

    monkeypatch.setattr(transfer_module, "run_layer_transfer", fake_layer)
    monkeypatch.setattr(transfer_sweep.FinetuneSettings, "from_config", lambda *a, **k: None)

    def run():
        job = transfer_sweep.TransferSweepJob(
            "ner",
            source_model=tmp_path / "source",
            source_files=files,
            target_model=tmp_path / "target",
            target_lang="fr",
            target_test=tmp_path / "fr.test.txt",
            mappings=tmp_path / "maps.npz",
            evaluations={"mapped": True},
            settings={"task_settings": {}, "epochs": 1, "seed": 1, "batch_size": 2, "lr": 1e-3,
                      "task_layers": 4},
            out_csv=tmp_path / "out.csv",
            work_dir=tmp_path / ".work",
        )  # fmt: skip
        return transfer_sweep.transfer_sweep(job)

    return tmp_path, run, calls, kill_at


def test_a_killed_sweep_resumes_on_the_same_inputs(sweep):
    _, run, calls, kill_at = sweep
    kill_at["layer"] = 2
    with pytest.raises(Killed):
        run()
    kill_at["layer"] = None
    run()
    assert [layer for layer, _ in calls] == [0, 1, 2], "layers 0 and 1 were not kept"


def test_a_sweep_killed_in_its_clean_up_is_redone_not_read_half_deleted(sweep, monkeypatch):
    tmp_path, run, calls, _ = sweep
    real_rmtree, kill = shutil.rmtree, [True]

    def rmtree_killed_once(path, *args, **kwargs):  # a layer half deleted, then the kill
        if kill.pop() if kill else False:
            (path / TEST_ITEMS).unlink()
            raise Killed
        return real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree_killed_once)
    # the clean-up meets a layer before the stamp ("L0" sorts before "settings.json")
    real_iterdir = Path.iterdir
    monkeypatch.setattr(Path, "iterdir", lambda self: iter(sorted(real_iterdir(self))))
    with pytest.raises(Killed):
        run()
    assert not (tmp_path / ".work" / "settings.json").exists(), "the stamp outlived its layers"
    (tmp_path / "out.csv").unlink()  # Snakemake deletes a failed job's output
    calls.clear()
    run()
    assert [layer for layer, _ in calls] == [0, 1, 2]


def test_a_sweep_rerun_on_a_new_model_recomputes_every_layer(sweep):
    tmp_path, run, calls, kill_at = sweep
    kill_at["layer"] = 2
    with pytest.raises(Killed):
        run()
    weights = tmp_path / "target" / "model.safetensors"
    weights.write_text("weights v2")  # the target model was retrained meanwhile
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    kill_at["layer"] = None
    run()
    assert calls[2:] == [(0, "weights v2"), (1, "weights v2"), (2, "weights v2")]
    table = pd.read_csv(tmp_path / "out.csv")
    assert set(table[table["evaluation"] == "mapped"]["score"]) == {0.7}
