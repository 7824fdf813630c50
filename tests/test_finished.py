"""A finished job's outputs kept as links in its work directory, and put back by a rerun of the
same job after Snakemake deleted them (xling.jobs.finished)."""

import json
import os
import shutil

import pytest

from xling.base import digest
from xling.jobs import finished

KEY = {"job": {"lr": 0.001, "steps": (1, 2)}, "figure_title": "en-fr"}


@pytest.fixture
def job(tmp_path):
    """A job's outputs: a folder with a nested file, and two files."""
    model = tmp_path / "out" / "model"
    (model / "tokenizer").mkdir(parents=True)
    (model / "weights.bin").write_bytes(os.urandom(4096))
    (model / "tokenizer" / "vocab.txt").write_text("a\nb\n")
    (tmp_path / "out" / "curve.csv").write_text("step,loss\n1,2.0\n")
    (tmp_path / "out" / "summary.json").write_text('{"steps": 2}\n')
    outputs = {
        "model": model,
        "curve": tmp_path / "out" / "curve.csv",
        "summary": tmp_path / "out" / "summary.json",
    }
    return tmp_path / "out" / ".work", outputs


def contents(outputs):
    files = {}
    for name, path in outputs.items():
        paths = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        files |= {(name, str(p.relative_to(path.parent))): p.read_bytes() for p in paths}
    return files


def delete(outputs):
    """What Snakemake does to a job's outputs before it runs the job again."""
    for path in outputs.values():
        shutil.rmtree(path) if path.is_dir() else path.unlink()


def test_kept_outputs_share_their_blocks_and_come_back_after_a_delete(job):
    work_dir, outputs = job
    before = contents(outputs)
    folder = finished.keep(work_dir, outputs, KEY)
    kept = folder / "model" / "weights.bin"
    assert kept.stat().st_ino == (outputs["model"] / "weights.bin").stat().st_ino
    record = json.loads((folder / finished.RECORD).read_text())
    assert record["files"]["model/tokenizer/vocab.txt"] == 4
    delete(outputs)
    messages = []
    assert finished.restore(work_dir, outputs, KEY, messages.append)
    assert contents(outputs) == before and "restored" in messages[0]
    assert not list(outputs["model"].parent.glob(".*.part"))


@pytest.mark.parametrize(
    "change",
    [
        lambda key: {**key, "figure_title": "en-de"},
        lambda key: {**key, "job": {**key["job"], "lr": 0.002}},
    ],
)
def test_another_jobs_outputs_are_discarded_not_restored(job, change):
    work_dir, outputs = job
    finished.keep(work_dir, outputs, KEY)
    delete(outputs)
    messages = []
    assert not finished.restore(work_dir, outputs, change(KEY), messages.append)
    assert "another job" in messages[0]
    assert not (work_dir / finished.FOLDER).exists() and not outputs["curve"].exists()


def test_a_kept_file_of_another_size_is_not_restored(job):
    work_dir, outputs = job
    folder = finished.keep(work_dir, outputs, KEY)
    (folder / "curve").unlink()
    (folder / "curve").write_text("step,loss\n")
    assert not finished.restore(work_dir, outputs, KEY, lambda _: None)
    assert not (work_dir / finished.FOLDER).exists()


def test_nothing_kept_restores_nothing(job):
    work_dir, outputs = job
    assert not finished.restore(work_dir, outputs, KEY, lambda _: None)


def test_without_hard_links_the_outputs_are_copied(job, monkeypatch):
    work_dir, outputs = job
    before = contents(outputs)

    def no_link(source, target):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    folder = finished.keep(work_dir, outputs, KEY)
    kept = folder / "model" / "weights.bin"
    assert kept.stat().st_ino != (outputs["model"] / "weights.bin").stat().st_ino
    delete(outputs)
    assert finished.restore(work_dir, outputs, KEY, lambda _: None)
    assert contents(outputs) == before


def test_the_source_digest_follows_the_packages_code(tmp_path, monkeypatch):
    assert (digest.PACKAGE_ROOT / "jobs" / "finished.py").is_file()  # the whole package
    package = tmp_path / "xling"
    (package / "pretrain").mkdir(parents=True)
    (package / "pretrain" / "loop.py").write_text("STEPS = 1\n")
    monkeypatch.setattr(digest, "PACKAGE_ROOT", package)
    first = digest.source_digest()
    assert first == digest.source_digest()
    (package / "optim.py").write_text("BETA = 0.9\n")
    second = digest.source_digest()
    (package / "pretrain" / "loop.py").write_text("STEPS = 2\n")
    assert len({first, second, digest.source_digest()}) == 3
