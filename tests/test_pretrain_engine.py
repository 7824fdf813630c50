"""A small pretraining job end to end: it learns, selects, writes the contract's outputs."""

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from xling.base import digest
from xling.model import load_pretrained
from xling.model.config import has_language_specific_parts
from xling.papers.wu2020 import SHARING, TABLE1_ROWS
from xling.pretrain import PretrainSettings, plot_curve, pretrain_in_folder
from xling.pretrain.__main__ import main
from xling.pretrain.checkpoint import checkpoint_files
from xling.pretrain.inputs import read_inputs
from xling.pretrain.progress import CURVE_COLUMNS
from xling.pretrain.synthetic import write_synthetic_vocab_dir

torch.set_num_threads(1)

TINY = {"dim": 32, "layers": 2, "heads": 2, "ffn_dim": 64, "max_positions": 32}


def tiny_settings(**changes) -> PretrainSettings:
    values = dict(
        architecture={**TINY, "dropout": 0.0, "attention_dropout": 0.0},
        seq_len=32,
        batch_size=8,
        lr=5e-3,
        warmup_steps=30,
        total_steps=400,
        eval_interval=100,
        dev_tokens=4096,
        log_interval=40,
        threads=1,
    )
    values.update(changes)
    return PretrainSettings(**values)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    directory = tmp_path_factory.mktemp("vocab")
    ids = write_synthetic_vocab_dir(
        directory, sentences={"train": 1500, "valid": 400}, vocabulary_scale=0.2, anchors=10
    )
    return directory, ids


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    data_dir, _ = corpus
    out = tmp_path_factory.mktemp("pretrain")
    summary = pretrain_in_folder(out, data_dir, ["en", "fr"], tiny_settings(), log_file=out / "log")
    return out, summary


def test_the_model_learns_more_than_token_frequencies(trained):
    _, summary = trained
    assert summary["dev_acc"] > summary["unigram_acc"] + 0.03
    assert summary["best_dev_loss"] < np.log(summary["unigram_ppl"]) - 0.1
    assert summary["last_train_loss"] < summary["first_train_loss"] - 2.0
    assert summary["per_language"]["fr"]["dev_acc"] > summary["per_language"]["fr"]["unigram_acc"]
    assert summary["steps"] == 400 and summary["tokens"] == 400 * 8 * 32


def test_outputs_follow_the_contract(trained):
    out, summary = trained
    assert json.loads((out / "summary.json").read_text()) == summary
    model = load_pretrained(out / "model")
    assert model.config.languages == ["en", "fr"]
    assert (out / "model" / "tokenizer" / "vocab.txt").exists()
    work = [p.name for p in (out / ".work").iterdir()]
    assert work == ["finished"], "the resumable state makes way for links to the outputs"
    with open(out / "curve.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == CURVE_COLUMNS
    dev_steps = sorted({int(r["step"]) for r in rows if r["dev_ppl"]})
    assert dev_steps == [100, 200, 300, 400]
    assert all(r["dev_ppl"] == "" for r in rows if int(r["step"]) not in dev_steps)
    assert {r["lang"] for r in rows} == {"en", "fr"}
    log = (out / "log").read_text()
    assert "step 40/400" in log and "tok/s" in log and "left" in log and "ppl" in log


def test_the_selected_model_is_the_best_english_dev_step(trained):
    out, summary = trained
    with open(out / "curve.csv", newline="") as handle:
        english = [r for r in csv.DictReader(handle) if r["lang"] == "en" and r["dev_loss"]]
    best = min(english, key=lambda r: float(r["dev_loss"]))
    assert summary["best_step"] == int(best["step"])
    assert summary["dev_acc"] == pytest.approx(float(best["dev_acc"]), abs=1e-6)


def test_curve_plot(trained, tmp_path):
    out, _ = trained
    png = plot_curve(out / "curve.csv", tmp_path / "figures" / "curve.png", title="en-fr default")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_monolingual_and_separate_embedding_models(corpus, tmp_path):
    data_dir, ids = corpus
    settings = tiny_settings(total_steps=20, eval_interval=10)
    mono = pretrain_in_folder(tmp_path / "mono", data_dir, ["fr"], settings)
    assert mono["selection_language"] == "fr" and mono["parameters"]["language_specific"] == 0
    sep = tiny_settings(total_steps=20, eval_interval=10)
    sep.architecture["sep_embeddings"] = True
    summary = pretrain_in_folder(
        tmp_path / "sep", data_dir, ["en", "fr"], sep, language_token_ids=ids
    )
    model = load_pretrained(tmp_path / "sep" / "model")
    allowed = torch.nonzero(model.vocab_mask("fr")).squeeze(1).numpy()
    assert np.array_equal(allowed, np.union1d(np.arange(5), ids["fr"]))
    assert summary["parameters"]["language_specific"] > summary["parameters"]["shared"] / 10


def test_resume_refuses_other_settings_and_extends_a_finished_run(corpus, tmp_path):
    data_dir, _ = corpus
    job = (tmp_path, data_dir, ["en", "fr"])
    pretrain_in_folder(*job, tiny_settings(total_steps=10), keep_work_dir=True)
    with pytest.raises(RuntimeError, match=r"different pretraining job \(lr: 0\.005 -> 0\.001\)"):
        pretrain_in_folder(*job, tiny_settings(total_steps=10, lr=1e-3))
    log = tmp_path / "log"
    longer = pretrain_in_folder(*job, tiny_settings(total_steps=15), log_file=log)
    assert "resumed from" in log.read_text() and "at step 10" in log.read_text()
    assert longer["steps"] == 15


def test_the_checkpoints_stay_until_every_output_is_written(corpus, tmp_path, capsys):
    """A failure after training (here the figure; a signal, a node) leaves the work directory,
    so the rerun writes the outputs from the last checkpoint instead of training again; its log
    (stdout, which Snakemake empties before each attempt) starts with the first attempt's."""
    data_dir, _ = corpus
    job = (tmp_path, data_dir, ["en", "fr"], tiny_settings(total_steps=10))
    (tmp_path / "figures").write_text("a file where the figure's folder should be")
    with pytest.raises(OSError):
        pretrain_in_folder(*job, figure=tmp_path / "figures" / "curve.png")
    assert checkpoint_files(tmp_path / ".work"), "the checkpoints went before the figure"
    first_attempt = capsys.readouterr().out
    assert "done: selected" in first_attempt
    (tmp_path / "figures").unlink()
    log = tmp_path / "log"
    summary = pretrain_in_folder(*job, figure=tmp_path / "figures" / "curve.png", log_file=log)
    assert "at step 10" in log.read_text() and summary["steps"] == 10
    second_attempt = capsys.readouterr().out
    earlier, own = second_attempt.split("--- end of history.log ---\n")
    assert earlier.startswith("--- earlier attempts of this job logged")
    assert first_attempt.strip() in earlier and own.strip() == log.read_text().strip()
    # the history of both attempts is kept with the outputs
    history = (tmp_path / ".work" / "finished" / "history.log").read_text()
    assert history == first_attempt + own
    assert (tmp_path / "figures" / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert not checkpoint_files(tmp_path / ".work")
    assert sorted(p.name for p in (tmp_path / ".work").iterdir()) == ["finished"]


def test_a_rerun_after_its_outputs_were_deleted_restores_them_without_training(
    corpus, tmp_path, capsys
):
    """Snakemake deletes a job's outputs before it runs the job again, as it does for a job that
    finished while Snakemake itself was stopped (rerun-incomplete): the checkpoints are gone by
    then, and the links the job kept in their place bring the outputs back."""
    data_dir, _ = corpus
    figure = tmp_path / "figures" / "curve.png"
    job = (tmp_path, data_dir, ["en", "fr"], tiny_settings(total_steps=10))
    first = pretrain_in_folder(*job, figure=figure, figure_title="en-fr")
    training = capsys.readouterr().out
    outputs = [tmp_path / "model" / "model.safetensors", tmp_path / "curve.csv", figure]
    outputs.append(tmp_path / "summary.json")
    kept = tmp_path / ".work" / "finished" / "model" / "model.safetensors"
    assert kept.stat().st_ino == outputs[0].stat().st_ino  # a link: no second copy on disk
    before = [path.read_bytes() for path in outputs]
    shutil.rmtree(tmp_path / "model")
    for path in outputs[1:]:
        path.unlink()
    log = tmp_path / "log"
    again = pretrain_in_folder(*job, figure=figure, figure_title="en-fr", log_file=log)
    assert again == first and [path.read_bytes() for path in outputs] == before
    assert "restored" in log.read_text() and "done: selected" not in log.read_text()
    # the rule's log (stdout) gets the training's lines all the same
    replayed = capsys.readouterr().out.split("--- the training of these outputs logged")[1]
    assert training.strip() in replayed
    assert sorted(p.name for p in (tmp_path / ".work").iterdir()) == ["finished"]
    load_pretrained(tmp_path / "model")  # the whole folder is back, tokenizer and config too
    # Each of these differs from the job before it in one thing only, and trains again:
    # the data rebuilt (here copied elsewhere; the same sizes, so the same key for a checkpoint)
    log.unlink()
    job = (tmp_path, tmp_path / "data", *job[2:])
    shutil.copytree(data_dir, job[1])
    pretrain_in_folder(*job, figure=figure, figure_title="en-fr", log_file=log)
    assert "another job" in log.read_text() and "done: selected" in log.read_text()
    # a change of the code (here pretended)
    log.unlink()
    changed = lambda: "another version of xling"  # noqa: E731
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(digest, "source_digest", changed)
        pretrain_in_folder(*job, figure=figure, figure_title="en-fr", log_file=log)
    assert "another job" in log.read_text() and "done: selected" in log.read_text()
    # another job in the same folder (other settings) trains, and its own outputs are kept
    log.unlink()
    other = pretrain_in_folder(*job[:3], tiny_settings(total_steps=12), log_file=log)
    assert other["steps"] == 12 and "another job" in log.read_text()
    assert "done: selected" in log.read_text()
    assert kept.stat().st_ino == (tmp_path / "model" / "model.safetensors").stat().st_ino


def test_resume_keeps_the_global_batch_not_its_split(corpus, tmp_path):
    """A rerun may split the same global batch otherwise (other GPUs, another batch per GPU), not
    change it: the schedule's steps would mean another batch. Checkpoints written before the key
    held the global batch (processes and batch per process) resume as the same."""
    data_dir, _ = corpus
    job = (tmp_path, data_dir, ["en", "fr"])
    pretrain_in_folder(*job, tiny_settings(total_steps=10), keep_work_dir=True)
    (path,) = checkpoint_files(tmp_path / ".work")
    state = torch.load(path, weights_only=False)
    assert state["job"]["global_batch"] == 8 and "world_size" not in state["job"]
    with pytest.raises(RuntimeError, match=r"different pretraining job \(global_batch: 8 -> 16\)"):
        pretrain_in_folder(*job, tiny_settings(total_steps=12, world_size=2))
    log = tmp_path / "log"
    halves = tiny_settings(total_steps=12, world_size=2, batch_size=4)  # 2 micro-batches of 4
    assert pretrain_in_folder(*job, halves, keep_work_dir=True, log_file=log)["steps"] == 12
    assert "at step 10" in log.read_text()
    assert "8 streams a step = 1 process(es) x 2 micro-batch(es) of 4" in log.read_text()
    # a checkpoint of earlier versions: processes x batch per process, the precision setting
    path = checkpoint_files(tmp_path / ".work")[0]
    state = torch.load(path, weights_only=False)
    old = {k: v for k, v in state["job"].items() if k not in ("global_batch", "compute_capability")}
    state["job"] = {**old, "batch_size": 4, "world_size": 2, "precision": "auto"}
    torch.save(state, path)
    assert pretrain_in_folder(*job, tiny_settings(total_steps=14), log_file=log)["steps"] == 14
    assert "at step 12" in log.read_text()


def test_resume_on_another_gpu_or_precision_is_refused_saying_why_and_what_to_do(corpus, tmp_path):
    data_dir, _ = corpus
    job = (tmp_path, data_dir, ["en", "fr"])
    pretrain_in_folder(*job, tiny_settings(total_steps=10), keep_work_dir=True)
    (path,) = checkpoint_files(tmp_path / ".work")
    state = torch.load(path, weights_only=False)
    assert (state["job"]["precision"], state["job"]["compute_capability"]) == ("fp32", None)
    state["job"].update(precision="bf16", compute_capability="8.0")
    torch.save(state, path)
    with pytest.raises(RuntimeError) as refused:
        pretrain_in_folder(*job, tiny_settings(total_steps=12))
    message = str(refused.value)
    assert "trained in bf16 on GPUs of compute capability 8.0" in message
    assert "continue it in fp32 on the CPU, another arithmetic" in message
    assert "pin the GPU type" in message and "pretrain.precision" in message
    assert f"delete {tmp_path / '.work'}" in message


def test_finished_outputs_come_back_on_other_gpus(corpus, tmp_path, monkeypatch):
    """The GPU model binds a resume, not the outputs of a finished job: a rerun after Snakemake
    deleted them puts them back wherever it runs, instead of training days again."""
    import xling.pretrain.trainer as trainer_module

    data_dir, _ = corpus
    job = (tmp_path, data_dir, ["en", "fr"], tiny_settings(total_steps=10))
    pretrain_in_folder(*job)
    shutil.rmtree(tmp_path / "model")
    h100 = trainer_module.Hardware("bf16", ["NVIDIA H100"], [(9, 0)], [80.0])
    monkeypatch.setattr(trainer_module, "_hardware", lambda *args: h100)
    log = tmp_path / "log"
    pretrain_in_folder(*job, log_file=log)
    assert "restored" in log.read_text() and "done: selected" not in log.read_text()


def test_bad_inputs_name_the_file_or_setting(corpus, tmp_path):
    job = tmp_path / "job"
    with pytest.raises(FileNotFoundError, match=r"tokenizer/vocab\.txt is missing"):
        pretrain_in_folder(job, tmp_path, ["en"], tiny_settings())
    data_dir, ids = corpus
    with pytest.raises(FileNotFoundError, match=r"de\.train\.npy is missing: run the vocab"):
        pretrain_in_folder(job, data_dir, ["en", "de"], tiny_settings())
    with pytest.raises(ValueError, match="selection_language 'en' is not one of"):
        pretrain_in_folder(job, data_dir, ["fr", "ru"], tiny_settings())
    separate = tiny_settings()
    separate.architecture["sep_embeddings"] = True
    only_en = {"en": ids["en"]}
    with pytest.raises(ValueError, match=r"lack the languages \['fr'\]"):
        pretrain_in_folder(job, data_dir, ["en", "fr"], separate, language_token_ids=only_en)
    assert not (job / "model").exists()


def test_command_line(corpus, tmp_path):
    data_dir, _ = corpus
    settings = tiny_settings(total_steps=6, eval_interval=3).to_dict()
    summary = main(
        [
            "--data-dir",
            str(data_dir),
            "--languages",
            "en",
            "fr",
            "--out-model",
            str(tmp_path / "model"),
            "--work-dir",
            str(tmp_path / "work"),
            "--curve",
            str(tmp_path / "curve.csv"),
            "--summary",
            str(tmp_path / "summary.json"),
            "--settings-json",
            json.dumps(settings),
        ]
    )
    assert summary["steps"] == 6 and (tmp_path / "model" / "model.safetensors").exists()


def test_the_section_4_3_models_draw_random_words_within_one_language(corpus, tmp_path):
    """Wu et al. 4.3: every model with a separate part (embeddings or bottom layers) samples its
    random replacement words within the batch's language; the others from the whole vocabulary.
    Only separate embeddings restrict the softmax."""
    for row in TABLE1_ROWS.values():
        assert has_language_specific_parts(row.settings()) == (row.group == SHARING)
    data_dir, ids = corpus
    for specific in (True, False):
        inputs = read_inputs(
            data_dir, ["en", "fr"], seq_len=32, alpha=0.7, language_specific=specific,
            language_token_ids=ids, log=lambda message: None,
        )  # fmt: skip
        expected = ids["fr"] if specific else np.arange(5, inputs.vocab_size)
        assert np.array_equal(inputs.replacement_ids("fr"), expected)
    sep_layers = tiny_settings(total_steps=4, eval_interval=2)
    sep_layers.architecture["sep_layers"] = 1
    log = tmp_path / "log"
    job = (tmp_path / "job", data_dir, ["en", "fr"], sep_layers)
    pretrain_in_folder(*job, language_token_ids=ids, log_file=log)
    assert "each language's own ids, for its random replacements (given)" in log.read_text()
    assert bool(load_pretrained(tmp_path / "job" / "model").vocab_mask("fr").all())


def test_a_dev_token_outside_a_separate_softmax_is_read_as_unk(corpus, tmp_path):
    """An English dev token that only French has (a character English training never saw) would
    score -inf under English's own softmax: the dev loss would be infinite at every evaluation and
    the model selected at the first."""
    import shutil

    data_dir, ids = corpus
    data = tmp_path / "data"
    shutil.copytree(data_dir, data)
    valid = np.load(data / "en.valid.npy")
    french_only = int(np.setdiff1d(ids["fr"], ids["en"])[0])
    valid[::50] = french_only
    np.save(data / "en.valid.npy", valid)
    sep = tiny_settings(total_steps=20, eval_interval=10)
    sep.architecture["sep_embeddings"] = True
    log = tmp_path / "log"
    summary = pretrain_in_folder(
        tmp_path / "sep", data, ["en", "fr"], sep, language_token_ids=ids, log_file=log
    )
    assert summary["best_dev_loss"] < 50
    assert "outside en's vocabulary read as <unk>" in log.read_text()


@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_compile_layers_compiles_every_transformer_layer_separate_ones_too():
    from xling.model import MLMEncoder
    from xling.model.config import EncoderConfig
    from xling.pretrain.distributed import Runtime
    from xling.pretrain.loop import _objective

    config = EncoderConfig(vocab_size=50, languages=["en", "fr"], sep_layers=1, **TINY)
    model = MLMEncoder(config)
    _objective(model, Runtime(0, 0, 1, torch.device("cpu")), compile_layers=True)
    separate = [layer for layers in model.language_layers.values() for layer in layers]
    layers = [*model.shared_layers, *separate]
    assert len(separate) == 2 and all(layer._compiled_call_impl is not None for layer in layers)


def test_a_kill_inside_the_clean_up_leaves_no_checkpoint_naming_a_deleted_best_model(
    corpus, tmp_path, monkeypatch
):
    data_dir, _ = corpus

    real_rmtree = shutil.rmtree

    def killed(path, *args, **kwargs):  # the clean-up's first best model half deleted, a kill
        if not Path(path).name.startswith("best-step"):
            return real_rmtree(path, *args, **kwargs)
        (Path(path) / "model.safetensors").unlink()
        raise KeyboardInterrupt

    monkeypatch.setattr(shutil, "rmtree", killed)
    # the clean-up meets the best model before the checkpoints ("best-step" sorts first)
    real_iterdir = Path.iterdir
    monkeypatch.setattr(Path, "iterdir", lambda self: iter(sorted(real_iterdir(self))))
    with pytest.raises(KeyboardInterrupt):
        pretrain_in_folder(tmp_path, data_dir, ["en", "fr"], tiny_settings(total_steps=10))
    assert not checkpoint_files(tmp_path / ".work")
