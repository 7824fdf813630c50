"""Fine-tuning end to end on tiny random encoders and generated data: alignment, freezing,
zero-shot routing, checkpoints and resume, metrics.json and prediction files for all three tasks.

The tokenizer is a real ``xling.vocab.SubwordTokenizer`` (joint BPE) built from generated text.
"""

import dataclasses
import json
import random

import pytest
import torch

from xling.contracts.conllu import read_conllu
from xling.contracts.ner import read_ner
from xling.errors import DataFormatError
from xling.finetune import FinetuneSettings, TaskData, run_finetune
from xling.finetune import checkpoint as checkpoint_module
from xling.finetune.encoding import align_first_subwords, encode_pair, encode_words
from xling.finetune.run import _fingerprint, freeze_language_specific
from xling.finetune.tasks import TaskModel, make_task
from xling.finetune.training import epoch_order, make_scheduler, train_epoch
from xling.model import EncoderConfig, MLMEncoder, load_pretrained, save_pretrained
from xling.preprocess.pipeline import TextPipeline
from xling.vocab import SubwordTokenizer, VocabSettings, build_vocabulary

torch.set_num_threads(1)
LANGS = ("en", "fr")


# ----------------------------------------------------------------------------- generated data
class World:
    """Words of two languages: shared names (anchors), separate common words."""

    def __init__(self, seed=0):
        self.rng = random.Random(seed)
        syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "da"]

        def word(n):
            return "".join(self.rng.choice(syllables) for _ in range(n))

        self.names = sorted({"Zo" + word(1) for _ in range(40)})
        self.places = sorted({"Qu" + word(2) for _ in range(40)})
        self.nouns = {
            lang: sorted({word(2) + suffix for _ in range(30)})
            for lang, suffix in (("en", ""), ("fr", "e"))
        }
        self.verbs = {"en": ["runs", "sees", "eats"], "fr": ["court", "voit", "mange"]}
        self.dets = {"en": ["the", "a"], "fr": ["le", "un"]}
        self.markers = {
            "en": {"entailment": "yes", "contradiction": "no", "neutral": "maybe"},
            "fr": {"entailment": "oui", "contradiction": "non", "neutral": "peut"},
        }

    def words(self):
        groups = [*self.verbs.values(), *self.nouns.values(), *self.dets.values()]
        groups += [list(markers.values()) for markers in self.markers.values()]
        return [*self.names, *self.places, ".", *(w for group in groups for w in group)]

    def ner_sentence(self, lang):
        words, tags = [], []
        for _ in range(self.rng.randint(3, 8)):
            roll = self.rng.random()
            if tags and tags[-1] != "O":
                words.append(self.rng.choice(self.nouns[lang]))
                tags.append("O")
            elif roll < 0.2:
                words += [self.rng.choice(self.names), self.rng.choice(self.names)]
                tags += ["B-PER", "I-PER"]
            elif roll < 0.3:
                words.append(self.rng.choice(self.places))
                tags.append("B-LOC")
            else:
                words.append(self.rng.choice(self.nouns[lang]))
                tags.append("O")
        return words, tags

    def tree(self, lang):
        """DET NOUN VERB DET (ADJ-less) NOUN . with UD relations."""
        d, n, v = self.dets[lang], self.nouns[lang], self.verbs[lang]
        words = [self.rng.choice(d), self.rng.choice(n), self.rng.choice(v)]
        words += [self.rng.choice(d), self.rng.choice(n), "."]
        heads = [2, 3, 0, 5, 3, 3]
        rels = ["det", "nsubj", "root", "det", "obj", "punct"]
        if self.rng.random() < 0.5:  # a name as the subject instead
            words, heads, rels = words[1:], [2, 0, 4, 2, 2], rels[1:]
            words[0] = self.rng.choice(self.names)
        return words, heads, rels

    def nli_pair(self, lang):
        premise = [self.rng.choice(self.nouns[lang]) for _ in range(self.rng.randint(2, 5))]
        label = self.rng.choice(["entailment", "contradiction", "neutral"])
        hypothesis = [self.markers[lang][label], *self.rng.sample(premise, 2)]
        return " ".join(premise), " ".join(hypothesis), label


def write_ner_file(world, path, lang, n):
    path.parent.mkdir(parents=True, exist_ok=True)
    blocks = []
    for _ in range(n):
        words, tags = world.ner_sentence(lang)
        blocks.append("".join(f"{lang}:{w}\t{t}\n" for w, t in zip(words, tags, strict=True)))
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")


def write_treebank(world, path, lang, n):
    path.parent.mkdir(parents=True, exist_ok=True)
    blocks = []
    for i in range(n):
        words, heads, rels = world.tree(lang)
        lines = [f"# sent_id = {i}"]
        for j, (w, h, r) in enumerate(zip(words, heads, rels, strict=True), 1):
            upos = "PUNCT" if r == "punct" else "X"
            lines.append(f"{j}\t{w}\t{w}\t{upos}\t_\t_\t{h}\t{r}\t_\t_")
        blocks.append("\n".join(lines) + "\n")
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")


def write_xnli_files(world, root, n_train, n_eval):
    root.mkdir(parents=True, exist_ok=True)
    train = ["premise\thypo\tlabel"]
    for _ in range(n_train):
        premise, hypothesis, label = world.nli_pair("en")
        train.append(f"{premise}\t{hypothesis}\t{label.replace('contradiction', 'contradictory')}")
    (root / "train.tsv").write_text("\n".join(train) + "\n", encoding="utf-8")
    for split in ("dev", "test"):
        rows = ["language\tgold_label\tsentence1\tsentence2\tpairID"]
        for lang in LANGS:
            for i in range(n_eval):
                premise, hypothesis, label = world.nli_pair(lang)
                rows.append(f"{lang}\t{label}\t{premise}\t{hypothesis}\t{lang}{i}")
        (root / f"xnli.{split}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def build_tokenizer(world, root):
    """A joint BPE over generated sentences of both languages (every character seen)."""
    corpora = {}
    for lang in LANGS:
        lines = [" ".join(world.ner_sentence(lang)[0]) for _ in range(300)]
        lines += [" ".join(world.tree(lang)[0]) for _ in range(300)]
        lines += [" ".join(world.nli_pair(lang)[:2]) for _ in range(300)]
        path = root / "corpus" / f"{lang}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        corpora[lang] = {"train": path}
    pipelines = {lang: TextPipeline(lang, "moses") for lang in LANGS}
    build_vocabulary(
        "joint",
        root / "vocab",
        corpora=corpora,
        pipelines=pipelines,
        settings=VocabSettings(merges=150, bpe_sentences_per_language=2000, seed=0),
    )
    return root / "vocab" / "tokenizer"


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("world")
    world = World()
    for lang in LANGS:
        for split, n in (("train", 300), ("dev", 80), ("test", 80)):
            if split == "train" and lang != "en":
                continue
            write_ner_file(world, root / "ner" / lang / f"{split}.txt", lang, n)
            write_treebank(world, root / "ud" / lang / f"{split}.conllu", lang, n)
    write_xnli_files(world, root / "xnli", 400, 60)
    return root, SubwordTokenizer.load(build_tokenizer(world, root))


def make_model(world, out, sep_layers=1, sep_embeddings=False):
    """A random encoder saved with the world's tokenizer, as the pretraining stage saves one."""
    root, tokenizer = world
    config = EncoderConfig(
        vocab_size=tokenizer.vocab_size,
        languages=list(LANGS),
        dim=32,
        layers=2,
        heads=2,
        ffn_dim=64,
        dropout=0.0,
        attention_dropout=0.0,
        max_positions=48,
        sep_layers=sep_layers,
        sep_embeddings=sep_embeddings,
    )
    torch.manual_seed(0)
    return save_pretrained(MLMEncoder(config), out / "model", root / "vocab" / "tokenizer")


def task_data(root, task):
    if task == "xnli":
        files = {lang: root / "xnli" / "xnli.dev.tsv" for lang in LANGS}
        tests = {lang: root / "xnli" / "xnli.test.tsv" for lang in LANGS}
        return TaskData(train=root / "xnli" / "train.tsv", dev=files, test=tests)
    sub, ext = ("ner", "txt") if task == "ner" else ("ud", "conllu")
    return TaskData(
        train=root / sub / "en" / f"train.{ext}",
        dev={lang: root / sub / lang / f"dev.{ext}" for lang in LANGS},
        test={lang: root / sub / lang / f"test.{ext}" for lang in LANGS},
    )


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
    train_epoch(task, model, items, list(range(32)), 8, "en", optimizer, scheduler, cpu)
    for name, param in model.named_parameters():
        changed = not torch.equal(before[name], param)
        if name.removeprefix("encoder.") in frozen:
            assert not changed, name
    assert not torch.equal(before["head.output.weight"], model.head.output.weight)
    assert not torch.equal(
        before["encoder.shared_layers.0.qkv.weight"], model.encoder.shared_layers[0].qkv.weight
    )


# ----------------------------------------------------------------------------- end to end
def spy_languages(monkeypatch):
    seen = []
    original = MLMEncoder.forward

    def forward(self, input_ids, lang, *args, **kwargs):
        seen.append((lang, self.training))
        return original(self, input_ids, lang, *args, **kwargs)

    monkeypatch.setattr(MLMEncoder, "forward", forward)
    return seen


def test_ner_end_to_end(world_dir, tmp_path, monkeypatch):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    seen = spy_languages(monkeypatch)
    out = tmp_path / "out"
    metrics = run_finetune(
        "ner",
        model_dir,
        task_data(root, "ner"),
        {"batch_size": 8, "lr": "1e-2"},
        out,
        tmp_path / "work",
        FinetuneSettings(epochs=3, seed=1, max_length=48),
        pair="en-fr",
        variant="default",
    )
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
    }
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
    assert not (tmp_path / "work").exists()  # resumable state is gone once the job is done


def test_resume_after_a_kill_gives_the_same_result(world_dir, tmp_path, monkeypatch):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    settings = FinetuneSettings(epochs=2, seed=3, max_length=48)
    hp = {"batch_size": 16, "lr": 5e-3}
    data = task_data(root, "ner")
    straight = run_finetune("ner", model_dir, data, hp, tmp_path / "a", tmp_path / "wa", settings)

    def killed(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_module, "prune", killed)
    with pytest.raises(KeyboardInterrupt):
        run_finetune("ner", model_dir, data, hp, tmp_path / "b", tmp_path / "wb", settings)
    assert not (tmp_path / "b" / "metrics.json").exists()
    monkeypatch.undo()
    seen = spy_languages(monkeypatch)
    resumed = run_finetune("ner", model_dir, data, hp, tmp_path / "b", tmp_path / "wb", settings)
    assert resumed == straight
    trained = sum(training for _, training in seen)
    assert trained == -(-300 // 16)  # one epoch of batches, not two


def test_state_of_other_settings_is_discarded(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    settings = FinetuneSettings(epochs=2, seed=3, max_length=48)
    args = dict(keep_work_dir=True)
    data = task_data(root, "ner")
    work = tmp_path / "work"
    run_finetune(
        "ner",
        model_dir,
        data,
        {"batch_size": 16, "lr": 5e-3},
        tmp_path / "a",
        work,
        settings,
        **args,
    )
    other = run_finetune(
        "ner",
        model_dir,
        data,
        {"batch_size": 32, "lr": 5e-3},
        tmp_path / "b",
        work,
        settings,
        **args,
    )
    fresh = run_finetune(
        "ner",
        model_dir,
        data,
        {"batch_size": 32, "lr": 5e-3},
        tmp_path / "c",
        tmp_path / "w2",
        settings,
        **args,
    )
    assert other == fresh
    # keep_work_dir: the state and the weights of the last and the selected epoch only.
    kept = {p.name for p in work.iterdir()}
    assert kept == {"state.pt", "epoch002.pt", f"epoch{other['selected_epoch']:03d}.pt"}


def test_parsing_end_to_end(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    out = tmp_path / "out"
    metrics = run_finetune(
        "parsing",
        model_dir,
        task_data(root, "parsing"),
        {"batch_size": 8, "lr": 5e-3},
        out,
        tmp_path / "work",
        FinetuneSettings(epochs=3, seed=1, max_length=48, arc_dim=32, label_dim=16),
    )
    assert metrics["metric"] == "las"
    assert metrics["dev"]["en"] > 0.5  # a fixed word order: well above chance
    predicted = read_conllu(out / "predictions.fr.conllu")
    gold = read_conllu(root / "ud" / "fr" / "test.conllu")
    assert [s.words for s in predicted] == [s.words for s in gold]
    for sentence in predicted:
        assert sentence.heads.count(0) == 1
    gold_lines = (root / "ud" / "fr" / "test.conllu").read_text().splitlines()
    predicted_lines = (out / "predictions.fr.conllu").read_text().splitlines()
    assert [line.split("\t")[:6] for line in predicted_lines] == [
        line.split("\t")[:6] for line in gold_lines
    ]


def test_parsing_can_exclude_punctuation(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    metrics = run_finetune(
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
    assert metrics["metric"] == "las_no_punct"


def test_xnli_end_to_end(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    out = tmp_path / "out"
    hp = {"batch_size": 8, "encoder_lr": 1e-3, "classifier_lr": 1e-2}
    metrics = run_finetune(
        "xnli",
        model_dir,
        task_data(root, "xnli"),
        hp,
        out,
        tmp_path / "work",
        FinetuneSettings(epochs=3, epoch_size=400, seed=1, max_length=24),
    )
    assert metrics["hp_id"] == "bs8_elr0.001_clr0.01"
    assert metrics["metric"] == "accuracy"
    assert metrics["dev"]["en"] > 0.6  # chance is 1/3
    lines = (out / "predictions.fr.tsv").read_text().splitlines()
    assert lines[0] == "pairID\tgold_label\tprediction"
    assert len(lines) == 61 and lines[1].startswith("fr0\t")


def test_bad_input_fails_before_training(world_dir, tmp_path):
    root = world_dir[0]
    model_dir = make_model(world_dir, tmp_path)
    bad = tmp_path / "fr_test.txt"
    bad.write_text("fr:Zoka\tB-PER\nfr:le\tB-MISC\n\n", encoding="utf-8")
    data = task_data(root, "ner")
    data = TaskData(train=data.train, dev=data.dev, test={"fr": bad})
    with pytest.raises(DataFormatError, match=r"fr_test.txt:2: tag 'B-MISC' is not among"):
        run_finetune(
            "ner",
            model_dir,
            data,
            {"batch_size": 8, "lr": 1e-3},
            tmp_path / "o",
            tmp_path / "w",
            FinetuneSettings(epochs=1, seed=1, max_length=48),
        )
    assert not (tmp_path / "w").exists()
    with pytest.raises(ValueError, match=r"language\(s\) \['de'\]"):
        run_finetune(
            "ner",
            model_dir,
            TaskData(data.train, {"en": data.dev["en"], "de": data.dev["en"]}),
            {"batch_size": 8, "lr": 1e-3},
            tmp_path / "o",
            tmp_path / "w",
            FinetuneSettings(epochs=1, seed=1, max_length=48),
        )
    with pytest.raises(ValueError, match="exactly"):
        run_finetune(
            "ner",
            model_dir,
            data,
            {"batch_size": 8},
            tmp_path / "o",
            tmp_path / "w",
            FinetuneSettings(epochs=1, seed=1, max_length=48),
        )
    with pytest.raises(ValueError, match=r"max_positions 48 .*tasks\.ner\.max_length"):
        run_finetune(
            "ner",
            model_dir,
            data,
            {"batch_size": 8, "lr": 1e-3},
            tmp_path / "o",
            tmp_path / "w",
            FinetuneSettings(epochs=1, seed=1, max_length=64),
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
        return _fingerprint(task, hp, settings, spec, config, model_dir, data)

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
