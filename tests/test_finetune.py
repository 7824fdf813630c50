"""Fine-tuning end to end on tiny random encoders and generated data: alignment, freezing,
zero-shot routing, checkpoints and resume, metrics.json and prediction files for Wu's three tasks
(POS tagging: tests/test_pos.py).

The data, tokenizer and models come from tests/finetune_world.py.
"""

import dataclasses
import json
import logging

import numpy as np
import pytest
import torch

from tests.finetune_world import build_world, make_model, spy_languages, task_data
from xling.base.errors import DataFormatError
from xling.contracts.conllu import read_conllu
from xling.contracts.items import TEST_ITEMS, read_test_items
from xling.contracts.ner import read_ner
from xling.finetune import FinetuneJob, FinetuneSettings, TaskData, run_finetune
from xling.finetune import checkpoint as checkpoint_module
from xling.finetune.encoding import align_first_subwords, encode_pair, encode_words
from xling.finetune.fitting import job_fingerprint
from xling.finetune.metrics import ratio
from xling.finetune.run import freeze_language_specific
from xling.finetune.tasks import TaskModel, make_task
from xling.finetune.training import (
    Learner,
    epoch_order,
    group_by_length,
    make_scheduler,
    train_epoch,
)
from xling.model import EncoderConfig, MLMEncoder, load_pretrained

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("world"))


# ----------------------------------------------------------------------------- alignment
def test_first_subword_alignment(world_dir):
    _, tokenizer = world_dir
    words = ["Zokalo", "ka", "Qudaveponeta", "Ω", "."]
    pieces = tokenizer.encode_words(words, "en")
    assert len(pieces[2]) > 1  # a long, rare word has several subwords
    assert pieces[3] == [tokenizer.unk_id]  # an unseen character: <unk>, never dropped
    aligned = encode_words(tokenizer, words, "en", 48, "f:1")
    flat = [i for word_pieces in pieces for i in word_pieces]
    assert aligned.input_ids == [tokenizer.eos_id, *flat, tokenizer.eos_id]
    starts, position = [], 1
    for word_pieces in pieces:
        starts.append(position)
        position += len(word_pieces)
    assert aligned.first_subword == starts
    for word_pieces, start in zip(pieces, aligned.first_subword, strict=True):
        assert aligned.input_ids[start] == word_pieces[0]


def test_alignment_maps_empty_words_to_unk_and_cuts_at_the_limit():
    aligned = align_first_subwords([[7, 8], [], [9]], boundary_id=3, unk_id=1, max_length=10)
    assert aligned.input_ids == [3, 7, 8, 1, 9, 3]
    assert aligned.first_subword == [1, 3, 4]
    # max_length 5: word 2 keeps its first subword only, word 3 does not fit.
    aligned = align_first_subwords([[7], [8, 8, 8], [9]], boundary_id=3, unk_id=1, max_length=4)
    assert aligned.input_ids == [3, 7, 8, 3]
    assert aligned.kept_words == 2
    with pytest.raises(ValueError, match="max_length"):
        align_first_subwords([[7]], boundary_id=3, unk_id=1, max_length=2)


def test_tokenizer_breaking_its_contract_is_reported_with_the_sentence():
    class Broken:
        pad_id, unk_id, eos_id = 0, 1, 3

        def encode_words(self, words, lang):
            return [[5] for _ in words[:-1]]

    with pytest.raises(ValueError, match=r"train\.txt:7: the tokenizer returned 1 id lists"):
        encode_words(Broken(), ["ab", "ab"], "en", 16, "train.txt:7")


def test_pairs_truncate_the_longer_side_first():
    assert encode_pair([5] * 6, [6] * 2, boundary_id=3, max_length=9) == [3, 5, 5, 5, 5, 3, 6, 6, 3]
    assert encode_pair([5], [6] * 9, boundary_id=3, max_length=7) == [3, 5, 3, 6, 6, 6, 3]


def test_epoch_order_is_a_pure_function_covering_the_stream():
    assert list(epoch_order(10, 2, 5, None)) == list(epoch_order(10, 2, 5, None))
    assert sorted(epoch_order(10, 3, 5, None)) == list(range(10))
    stream = [i for epoch in (1, 2, 3) for i in epoch_order(10, epoch, 5, 4)]
    assert sorted(stream[:10]) == list(range(10))  # the first full pass is a permutation


def padded(order, lengths, batch_size):
    """Tokens a pass computes when every batch is padded to its longest example."""
    return sum(
        len(order[i : i + batch_size]) * max(lengths[order[i : i + batch_size]])
        for i in range(0, len(order), batch_size)
    )


def test_length_grouped_batches_keep_the_examples_and_cut_the_padding():
    lengths = np.random.default_rng(0).integers(3, 60, size=1_000)
    order = epoch_order(1_000, 1, 5, None)
    grouped = group_by_length(order, lengths, 16, 1, 5)
    assert sorted(grouped) == list(range(1_000))  # a rearrangement of the epoch's examples
    assert list(grouped) == list(group_by_length(order, lengths, 16, 1, 5))  # resumable
    assert list(grouped) != list(group_by_length(order, lengths, 16, 2, 5))  # new batches an epoch
    assert padded(grouped, lengths, 16) < 0.7 * padded(order, lengths, 16)
    # Each batch comes from one window of 50 batches: the first batch's examples are among the
    # window's 800, and the short last batch (1,000 = 62 x 16 + 8) stays last, whole.
    windows = [set(order[i : i + 800]) for i in range(0, 1_000, 800)]
    batches = [set(grouped[i : i + 16]) for i in range(0, 1_000, 16)]
    assert all(any(batch <= window for window in windows) for batch in batches)
    assert batches[-1] == set(sorted(order[800:], key=lambda i: -lengths[i])[-8:])
    assert len(group_by_length(order[:0], lengths, 16, 1, 5)) == 0


def test_xnli_segments_each_distinct_line_once(world_dir):
    from xling.contracts.xnli import NliPair

    tokenizer = world_dir[1]
    task = make_task("xnli", tokenizer)
    premise, other = "the cat sleeps .", "a dog runs ."
    pairs = [
        NliPair(premise, "the cat rests .", "entailment", "1", 2),
        NliPair(premise, "the cat runs .", "contradiction", "2", 3),
        NliPair(other, premise, "neutral", "3", 4),
    ]
    alone = [task.encode([pair], "en", 48)[0] for pair in pairs]
    calls = []
    encode_line = tokenizer.encode_line

    def counting(line, lang):
        calls.append(line)
        return encode_line(line, lang)

    tokenizer.encode_line = counting
    try:
        together = task.encode(pairs, "en", 48)
    finally:
        del tokenizer.encode_line
    assert together == alone
    assert sorted(calls) == sorted({premise, other, "the cat rests .", "the cat runs ."})


# ----------------------------------------------------------------------------- freezing
def test_frozen_parameters_are_unchanged_after_a_step(world_dir, tmp_path):
    root, tokenizer = world_dir
    model_dir = make_model(world_dir, tmp_path, sep_layers=1, sep_embeddings=True)
    encoder = load_pretrained(model_dir)
    task = make_task("ner", tokenizer)
    examples = read_ner(root / "ner" / "en" / "train.txt", "en")[:32]
    task.fit_labels(examples)
    model = TaskModel(encoder, task.build_head(32, 0.0))
    frozen = set(freeze_language_specific(encoder))
    assert any(name.startswith("embeddings.en.") for name in frozen)
    assert any(name.startswith("language_layers.en.") for name in frozen)
    assert not any(name.startswith("shared_layers.") for name in frozen)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    optimizer = torch.optim.Adam(task.parameter_groups(model, {"lr": 1e-2}))
    assert all(p.requires_grad for group in optimizer.param_groups for p in group["params"])
    scheduler = make_scheduler(optimizer, "constant", 4, 0.1)
    items = task.encode(examples, "en", 48)
    cpu = torch.device("cpu")
    train_epoch(Learner(task, model, optimizer, scheduler, cpu), items, list(range(32)), 8, "en")
    for name, param in model.named_parameters():
        changed = not torch.equal(before[name], param)
        if name.removeprefix("encoder.") in frozen:
            assert not changed, name
    assert not torch.equal(before["head.output.weight"], model.head.output.weight)
    assert not torch.equal(
        before["encoder.shared_layers.0.qkv.weight"], model.encoder.shared_layers[0].qkv.weight
    )


# ----------------------------------------------------------------------------- end to end
def test_ner_end_to_end(world_dir, tmp_path, monkeypatch, caplog, capsys):
    caplog.set_level(logging.INFO, logger="xling")  # as the workflow's scripts log
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    seen = spy_languages(monkeypatch)
    out = tmp_path / "out"
    job = ("ner", model_dir, task_data(root, "ner"), {"batch_size": 8, "lr": "1e-2"}, out)
    job += (tmp_path / "work", FinetuneSettings(epochs=3, seed=1, max_length=48))
    metrics = run_finetune(FinetuneJob(*job, pair="en-fr", variant="default"))
    saved = json.loads((out / "metrics.json").read_text())
    assert saved == metrics
    assert set(saved) == {
        "task",
        "pair",
        "variant",
        "hp",
        "hp_id",
        "metric",
        "selected_epoch",
        "dev",
        "test",
        "epochs",
        "random_init",
    }
    assert saved["random_init"] is None
    assert saved["hp"] == {"batch_size": 8, "lr": 0.01} and saved["hp_id"] == "bs8_lr0.01"
    assert saved["metric"] == "span_f1" and saved["pair"] == "en-fr"
    history = [e["dev"]["en"] for e in saved["epochs"]]
    assert [e["epoch"] for e in saved["epochs"]] == [1, 2, 3]
    assert saved["selected_epoch"] == 1 + history.index(max(history))
    assert saved["dev"]["en"] == pytest.approx(max(history))
    assert saved["dev"]["en"] > 0.4  # chance (all O) is 0
    assert set(saved["test"]) == {"en", "fr"}
    assert all(0.0 <= s <= 1.0 for split in ("dev", "test") for s in saved[split].values())
    # Training and English dev run through English parts, French test through French parts.
    assert ("en", True) in seen and ("fr", True) not in seen and ("fr", False) in seen
    predicted = read_ner(out / "predictions.fr.txt", "fr")
    gold = read_ner(root / "ner" / "fr" / "test.txt", "fr")
    assert [s.words for s in predicted] == [s.words for s in gold]
    lines = (out / "predictions.fr.txt").read_text().splitlines()
    assert all(len(line.split("\t")) == 3 for line in lines if line)
    assert not list(out.glob(".*"))  # no temporary file left behind
    # the epochs are gone once the job is done; links to the outputs stay in their place
    assert [p.name for p in (tmp_path / "work").iterdir()] == ["finished"]
    assert_test_items_give_the_scores(out, saved)
    # Snakemake deletes the declared output before it reruns a job: a rerun of the same run puts
    # it back without training (after Snakemake itself stopped while the run ended, it reruns it)
    (out / "metrics.json").unlink()
    seen.clear()
    capsys.readouterr()
    again = run_finetune(FinetuneJob(*job, pair="en-fr", variant="default"))
    assert again == saved == json.loads((out / "metrics.json").read_text())
    assert seen == []  # no training, no evaluation: the outputs came back as they were
    # and the rule's log (stdout) gets the training's own lines
    replayed = capsys.readouterr().out.split("--- the training of these outputs logged")[1]
    assert "ner bs8_lr0.01 on cpu" in replayed and "ner bs8_lr0.01 done in" in replayed
    assert [p.name for p in (tmp_path / "work").iterdir()] == ["finished"]


def assert_test_items_give_the_scores(out, metrics):
    """test_items.json holds one count pair per test example whose ratio is the test score."""
    items = read_test_items(out / TEST_ITEMS)
    assert set(items) == set(metrics["test"])
    for lang, counts in items.items():
        assert ratio(counts) == pytest.approx(metrics["test"][lang])


@pytest.mark.parametrize("grouped", [False, True])
def test_resume_after_a_kill_gives_the_same_result(
    world_dir, tmp_path, monkeypatch, grouped, caplog, capsys
):
    caplog.set_level(logging.INFO, logger="xling")
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    settings = FinetuneSettings(epochs=2, seed=3, max_length=48, group_by_length=grouped)
    hp = {"batch_size": 16, "lr": 5e-3}
    data = task_data(root, "ner")
    straight = run_finetune(
        FinetuneJob("ner", model_dir, data, hp, tmp_path / "a", tmp_path / "wa", settings)
    )

    def killed(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_module, "prune", killed)
    with pytest.raises(KeyboardInterrupt):
        run_finetune(
            FinetuneJob("ner", model_dir, data, hp, tmp_path / "b", tmp_path / "wb", settings)
        )
    assert not (tmp_path / "b" / "metrics.json").exists()
    monkeypatch.undo()
    seen = spy_languages(monkeypatch)
    capsys.readouterr()
    resumed = run_finetune(
        FinetuneJob("ner", model_dir, data, hp, tmp_path / "b", tmp_path / "wb", settings)
    )
    assert resumed == straight
    # the killed attempt's lines open the resumed one's log (Snakemake empties it in between)
    log = capsys.readouterr().out
    assert log.startswith("--- earlier attempts of this job logged") and "on cpu" in log
    assert [p.name for p in (tmp_path / "wb").iterdir()] == ["finished"]
    trained = sum(training for _, training in seen)
    assert trained == -(-300 // 16)  # one epoch of batches, not two


def test_a_state_whose_epoch_weights_are_gone_starts_afresh(tmp_path):
    """A kill in the middle of clearing the work folder must not leave a rerun that crashes."""
    checkpoint_module.save_state(tmp_path, {"fingerprint": {"a": 1}, "epoch": 2})
    assert checkpoint_module.load_state(tmp_path, {"a": 1}) is None  # no epoch002.pt
    assert not (tmp_path / checkpoint_module.STATE_NAME).exists()
    checkpoint_module.save_state(tmp_path, {"fingerprint": {"a": 1}, "epoch": 2})
    (tmp_path / "epoch002.pt").write_bytes(b"weights")
    (tmp_path / ".state.pt.abcd1234.part").write_bytes(b"half")  # a write a kill cut short
    checkpoint_module.clear(tmp_path)
    assert not any(tmp_path.iterdir())


def test_state_of_other_settings_is_discarded(world_dir, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="xling")
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    settings = FinetuneSettings(epochs=2, seed=3, max_length=48)
    args = dict(keep_work_dir=True)
    data = task_data(root, "ner")
    work = tmp_path / "work"
    run_finetune(
        FinetuneJob(
            "ner", model_dir, data, {"batch_size": 16, "lr": 5e-3}, tmp_path / "a", work, settings
        ),
        **args,
    )
    other = run_finetune(
        FinetuneJob(
            "ner", model_dir, data, {"batch_size": 32, "lr": 5e-3}, tmp_path / "b", work, settings
        ),
        **args,
    )
    fresh = run_finetune(
        FinetuneJob(
            "ner",
            model_dir,
            data,
            {"batch_size": 32, "lr": 5e-3},
            tmp_path / "c",
            tmp_path / "w2",
            settings,
        ),
        **args,
    )
    assert other == fresh
    # keep_work_dir: the state and the weights of the last and the selected epoch only, and the
    # run's log (xling.jobs.joblog)
    kept = {p.name for p in work.iterdir()}
    epochs = {"epoch002.pt", f"epoch{other['selected_epoch']:03d}.pt"}
    assert kept == {"state.pt", "history.log", *epochs}
    # whose lines are the second run's: the first run's went with its state
    history = (work / "history.log").read_text()
    assert "bs32_lr0.005" in history and "bs16_lr0.005" not in history


def test_parsing_end_to_end(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    out = tmp_path / "out"
    metrics = run_finetune(
        FinetuneJob(
            "parsing",
            model_dir,
            task_data(root, "parsing"),
            {"batch_size": 8, "lr": 5e-3},
            out,
            tmp_path / "work",
            FinetuneSettings(epochs=3, seed=1, max_length=48, arc_dim=32, label_dim=16),
        )
    )
    assert metrics["metric"] == "las"
    assert metrics["dev"]["en"] > 0.5  # a fixed word order: well above chance
    predicted = read_conllu(out / "predictions.fr.conllu")
    gold = read_conllu(root / "ud" / "fr" / "test.conllu")
    assert [s.words for s in predicted] == [s.words for s in gold]
    for sentence in predicted:
        assert sentence.heads.count(0) == 1
    assert len(read_test_items(out / TEST_ITEMS)["fr"]) == len(gold)
    assert_test_items_give_the_scores(out, metrics)
    gold_lines = (root / "ud" / "fr" / "test.conllu").read_text().splitlines()
    predicted_lines = (out / "predictions.fr.conllu").read_text().splitlines()
    assert [line.split("\t")[:6] for line in predicted_lines] == [
        line.split("\t")[:6] for line in gold_lines
    ]


def test_parsing_can_exclude_punctuation(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    metrics = run_finetune(
        FinetuneJob(
            "parsing",
            model_dir,
            task_data(root, "parsing"),
            {"batch_size": 32, "lr": 5e-3},
            tmp_path / "out",
            tmp_path / "work",
            FinetuneSettings(
                epochs=1, seed=1, max_length=48, arc_dim=16, label_dim=8, exclude_punct=True
            ),
        )
    )
    assert metrics["metric"] == "las_no_punct"


def test_xnli_end_to_end(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    out = tmp_path / "out"
    hp = {"batch_size": 8, "encoder_lr": 1e-3, "classifier_lr": 1e-2}
    metrics = run_finetune(
        FinetuneJob(
            "xnli",
            model_dir,
            task_data(root, "xnli"),
            hp,
            out,
            tmp_path / "work",
            FinetuneSettings(epochs=3, epoch_size=400, seed=1, max_length=24),
        )
    )
    assert metrics["hp_id"] == "bs8_elr0.001_clr0.01"
    assert metrics["metric"] == "accuracy"
    assert metrics["dev"]["en"] > 0.6  # chance is 1/3
    lines = (out / "predictions.fr.tsv").read_text().splitlines()
    assert lines[0] == "pairID\tgold_label\tprediction"
    assert len(lines) == 61 and lines[1].startswith("fr0\t")
    assert_test_items_give_the_scores(out, metrics)


def test_bad_input_fails_before_training(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    bad = tmp_path / "fr_test.txt"
    bad.write_text("fr:Zoka\tB-PER\nfr:le\tB-MISC\n\n", encoding="utf-8")
    data = task_data(root, "ner")
    data = TaskData(train=data.train, dev=data.dev, test={"fr": bad})
    with pytest.raises(DataFormatError, match=r"fr_test.txt:2: tag 'B-MISC' is not among"):
        run_finetune(
            FinetuneJob(
                "ner",
                model_dir,
                data,
                {"batch_size": 8, "lr": 1e-3},
                tmp_path / "o",
                tmp_path / "w",
                FinetuneSettings(epochs=1, seed=1, max_length=48),
            )
        )
    assert not (tmp_path / "w").exists()
    with pytest.raises(ValueError, match=r"language\(s\) \['de'\]"):
        run_finetune(
            FinetuneJob(
                "ner",
                model_dir,
                TaskData(data.train, {"en": data.dev["en"], "de": data.dev["en"]}),
                {"batch_size": 8, "lr": 1e-3},
                tmp_path / "o",
                tmp_path / "w",
                FinetuneSettings(epochs=1, seed=1, max_length=48),
            )
        )
    with pytest.raises(ValueError, match="exactly"):
        run_finetune(
            FinetuneJob(
                "ner",
                model_dir,
                data,
                {"batch_size": 8},
                tmp_path / "o",
                tmp_path / "w",
                FinetuneSettings(epochs=1, seed=1, max_length=48),
            )
        )
    with pytest.raises(ValueError, match=r"max_positions 48 .*tasks\.ner\.max_length"):
        run_finetune(
            FinetuneJob(
                "ner",
                model_dir,
                data,
                {"batch_size": 8, "lr": 1e-3},
                tmp_path / "o",
                tmp_path / "w",
                FinetuneSettings(epochs=1, seed=1, max_length=64),
            )
        )


def test_make_task_takes_its_options_from_the_settings(world_dir):
    tokenizer = world_dir[1]
    settings = FinetuneSettings(epochs=1, max_length=48, seed=0, labels=["O", "B-PER", "I-PER"])
    assert make_task("ner", tokenizer, settings).labels == ["O", "B-PER", "I-PER"]
    assert make_task("ner", tokenizer).labels is None  # from the training file
    settings = dataclasses.replace(settings, arc_dim=16, label_dim=8, exclude_punct=True)
    parser = make_task("parsing", tokenizer, settings)
    assert (parser.arc_dim, parser.label_dim, parser.metric) == (16, 8, "las_no_punct")
    assert make_task("parsing", tokenizer).metric == "las"


def test_resume_fingerprint_covers_every_setting_that_changes_training(world_dir, tmp_path):
    root, tokenizer = world_dir
    model_dir = make_model(world_dir, tmp_path)
    config = EncoderConfig.load(model_dir / "config.json")
    base = FinetuneSettings(epochs=2, max_length=48, seed=1)
    hp = {"batch_size": 8, "lr": 0.01}

    def fingerprint(task, settings, hp=hp):
        spec = make_task(task, tokenizer, settings)
        data = task_data(root, task)
        return job_fingerprint(task, hp, settings, spec, config, model_dir, data)

    reference = fingerprint("ner", base)
    assert list(reference) == [
        *("task", "hp", "seed", "epochs", "epoch_size", "max_length", "head_dropout", "labels"),
        *("source_lang", "metric", "parser_dims", "model", "train", "dev"),
    ]
    assert reference["head_dropout"] == config.dropout  # resolved, not None
    assert fingerprint("ner", dataclasses.replace(base, eval_batch_size=8)) == reference
    assert fingerprint("ner", base, {"batch_size": 16, "lr": 0.01}) != reference
    changes = [
        ("ner", {"seed": 2}),
        ("ner", {"epochs": 3}),
        ("ner", {"epoch_size": 100}),
        ("ner", {"max_length": 40}),
        ("ner", {"head_dropout": 0.1}),
        ("ner", {"labels": ["O", "B-PER", "I-PER", "B-LOC"]}),
        ("ner", {"source_lang": "fr"}),
        ("parsing", {"arc_dim": 16}),
        ("parsing", {"label_dim": 8}),
        ("parsing", {"exclude_punct": True}),
        ("ner", {"group_by_length": True}),
    ]
    for task, change in changes:
        other = fingerprint(task, dataclasses.replace(base, **change))
        assert other != fingerprint(task, base), change


def test_ner_words_beyond_the_limit_are_predicted_outside(world_dir):
    root, tokenizer = world_dir
    task = make_task("ner", tokenizer)
    sentences = read_ner(root / "ner" / "en" / "test.txt", "en")[:4]
    task.fit_labels(sentences)
    items = task.encode(sentences, "en", max_length=4)
    config = EncoderConfig(
        vocab_size=tokenizer.vocab_size, languages=["en"], dim=8, layers=1, heads=1, ffn_dim=8
    )
    model = TaskModel(MLMEncoder(config), task.build_head(8, 0.0)).eval()
    with torch.no_grad():
        predicted = task.predict(model, task.collate(items), "en")
    for sentence, item, tags in zip(sentences, items, predicted, strict=True):
        assert len(tags) == len(sentence.words)
        assert tags[len(item["first_subword"]) :] == ["O"] * (len(tags) - len(item["labels"]))
