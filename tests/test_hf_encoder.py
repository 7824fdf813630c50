"""The mBERT path: a tiny on-disk BERT behind the encoder interface, through the loader, the
tokenizer adapter (BERT's [CLS] ... [SEP] framing), the per-layer states of the analyses and
every fine-tuning task, with RANDOM-INIT and the saved fine-tuned encoder.

The model and tokenizer come from tests/hf_world.py, the data from tests/finetune_world.py.
"""

import json

import pytest
import torch

from tests.finetune_world import task_data
from tests.hf_world import build_tiny_bert, write_world_files
from xling.analysis.representations import framing, mean_pooled_layers
from xling.analysis.similarity import cka_rows
from xling.contracts.ner import TaggedSentence
from xling.finetune import FinetuneJob, FinetuneSettings, run_finetune
from xling.finetune.fitting import job_fingerprint
from xling.finetune.grid import TASK_HP_KEYS
from xling.finetune.tasks import TASK_NAMES, make_task
from xling.model import (
    EncoderConfig,
    MLMEncoder,
    encoder_kind,
    load_encoder,
    load_encoder_config,
    load_encoder_tokenizer,
    model_stamp,
    save_pretrained,
)
from xling.model.hf import HFEncoder, HFTokenizer


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    return write_world_files(root), build_tiny_bert(root)


@pytest.fixture(scope="module")
def bert(world):
    return load_encoder(world[1]).eval(), load_encoder_tokenizer(world[1])


# ----------------------------------------------------------------------------- the loader
def test_loader_picks_the_implementation(world, tmp_path):
    bert_dir = world[1]
    assert encoder_kind(bert_dir) == "transformers"
    config = load_encoder_config(bert_dir)
    assert (config.dim, config.layers, config.pad_id, config.max_positions) == (32, 4, 0, 64)
    assert config.initializer_range == 0.02 and config.dropout == 0.1
    assert config.accepts_language("sw") and not config.languages
    assert model_stamp(bert_dir)[0].endswith("model.safetensors")
    assert encoder_kind("bert-base-multilingual-cased") == "transformers"  # a hub id, not fetched
    assert model_stamp("bert-base-multilingual-cased") == ["hub", "bert-base-multilingual-cased"]
    ours = EncoderConfig(vocab_size=40, languages=["en"], dim=8, layers=1, heads=1, ffn_dim=8)
    save_pretrained(MLMEncoder(ours), tmp_path / "ours")
    assert encoder_kind(tmp_path / "ours") == "xling"
    assert isinstance(load_encoder(tmp_path / "ours"), MLMEncoder)
    assert not load_encoder_config(tmp_path / "ours").accepts_language("fr")
    with pytest.raises(FileNotFoundError, match="not a model directory"):
        encoder_kind(tmp_path)
    with pytest.raises(FileNotFoundError, match="neither a model directory nor a hub id"):
        encoder_kind(tmp_path / "results" / "models" / "missing")


def test_adapter_exposes_the_encoder_interface(bert):
    encoder, tokenizer = bert
    assert isinstance(encoder, HFEncoder) and isinstance(tokenizer, HFTokenizer)
    assert list(encoder.language_specific_parameters()) == []
    assert encoder.num_parameters(language_specific=True) == 0
    assert (tokenizer.start_id, tokenizer.eos_id) == (2, 3)  # [CLS], [SEP]
    assert (tokenizer.pad_id, tokenizer.unk_id) == (0, 1)


# ----------------------------------------------------------------------------- hidden states
def test_num_layers_runs_the_first_layers_only(bert):
    encoder, tokenizer = bert
    sentences = ["Zokalo sees the Qutari .", "le Zomi voit"]
    ids = [[2, *tokenizer.encode_line(s, "en"), 3] for s in sentences]
    batch = torch.zeros(2, max(map(len, ids)), dtype=torch.long)
    for row, sentence in enumerate(ids):
        batch[row, : len(sentence)] = torch.tensor(sentence)
    mask = batch != 0
    with torch.no_grad():
        full = encoder.model(batch, attention_mask=mask.long(), output_hidden_states=True)
        ours = encoder(batch, "en", attention_mask=mask, output_hidden_states=True)
        assert len(ours.hidden_states) == 5
        for k in range(5):
            partial = encoder(batch, "fr", attention_mask=mask, num_layers=k)
            assert torch.equal(partial.last_hidden_state, full.hidden_states[k]), k
            assert torch.equal(ours.hidden_states[k], full.hidden_states[k]), k
    with pytest.raises(ValueError, match=r"outside 0\.\.4"):
        encoder(batch, "en", num_layers=5)
    # Layers beyond k are not run.
    calls = []
    hooks = [
        layer.register_forward_hook(lambda *_, i=i: calls.append(i))
        for i, layer in enumerate(encoder.transformer_layers)
    ]
    with torch.no_grad():
        encoder(batch, "en", attention_mask=mask, num_layers=2)
    for hook in hooks:
        hook.remove()
    assert calls == [0, 1]


def test_sentence_means_exclude_special_tokens(bert):
    encoder, tokenizer = bert
    sentences = [tokenizer.encode_tokenized(s, "en") for s in ("Zokalo sees a Qutari", "the Zo")]
    assert framing(tokenizer) == {"eos_id": 3, "pad_id": 0, "start_id": 2}
    pooled = mean_pooled_layers(encoder, sentences, "en", **framing(tokenizer))
    for row, ids in enumerate(sentences):
        framed = torch.tensor([[2, *ids, 3]])
        with torch.no_grad():
            states = encoder(framed, "en", output_hidden_states=True).hidden_states
        for layer, state in enumerate(states):
            content = state[0, 1:-1].double().mean(0).numpy()
            with_specials = state[0].double().mean(0).numpy()
            assert pooled[layer][row] == pytest.approx(content, abs=1e-5)
            assert pooled[layer][row] != pytest.approx(with_specials, abs=1e-5)


def test_cka_rows_run_on_bert(bert):
    encoder, tokenizer = bert
    source = ["Zokalo sees the Qutari .", "a Zomi eats", "the Zo runs", "a Qukalo sees", "Zo ."]
    target = ["le Zokalo voit", "un Zomi mange", "le Zo court", "un Qukalo voit", "Zo ."]
    rows = cka_rows(encoder, tokenizer, source, target, ("en", "fr"), 5, False, seed=0)
    assert [(r["encoder"], r["layer"]) for r in rows] == [
        (name, layer) for name in ("trained", "random") for layer in range(5)
    ]
    assert all(0.0 <= r["cka"] <= 1.0 + 1e-9 and r["n_sentences"] == 5 for r in rows)


# ----------------------------------------------------------------------------- encodings
def test_bert_framing_of_words_and_pairs(world, bert):
    root = world[0]
    tokenizer = bert[1]
    words = ["Zokalo", "sees", "Qutari", " ", "."]
    pieces = tokenizer.encode_words(words, "en")
    assert pieces[0] == tokenizer.hf("Zokalo", add_special_tokens=False)["input_ids"]
    assert len(pieces[0]) > 1 and pieces[3] == [tokenizer.unk_id]
    ner = make_task("ner", tokenizer)
    sentence = TaggedSentence(words, ["O"] * 5, 1, "f")
    ner.fit_labels([sentence])
    item = ner.encode([sentence], "en", 64)[0]
    flat = [i for word in pieces for i in word]
    assert item["input_ids"] == [2, *flat, 3]
    assert [item["input_ids"][p] for p in item["first_subword"]] == [w[0] for w in pieces]
    xnli = make_task("xnli", tokenizer)
    pairs = xnli.read(root / "xnli" / "xnli.dev.tsv", "fr", "dev")[:5]
    encoder = bert[0]
    for pair, encoded in zip(pairs, xnli.encode(pairs, "fr", 64), strict=True):
        reference = tokenizer.hf(pair.premise, pair.hypothesis)
        assert encoded["input_ids"] == reference["input_ids"]  # [CLS] a [SEP] b [SEP]
        segments = encoder.segment_ids(torch.tensor([encoded["input_ids"]]), None)
        assert segments[0].tolist() == reference["token_type_ids"]


# ----------------------------------------------------------------------------- fine-tuning
def hyperparameters(task):
    values = {"batch_size": 16, "lr": 5e-3, "encoder_lr": 1e-3, "classifier_lr": 1e-2}
    return {key: values[key] for key in TASK_HP_KEYS[task]}


@pytest.mark.parametrize("task", TASK_NAMES)
def test_every_task_fine_tunes_bert(world, task, tmp_path):
    root, bert_dir = world
    random_init = "1-2" if task == "ner" else None
    settings = FinetuneSettings(epochs=2, seed=1, max_length=48, arc_dim=32, label_dim=16)
    out, saved = tmp_path / "out", tmp_path / "encoder"
    metrics = run_finetune(
        FinetuneJob(
            task,
            bert_dir,
            task_data(root, task),
            hyperparameters(task),
            out,
            tmp_path / "work",
            settings,
            random_init=random_init,
            save_encoder_to=saved,
        ),
        keep_work_dir=True,
    )
    assert json.loads((out / "metrics.json").read_text()) == metrics
    assert metrics["random_init"] == random_init
    assert set(metrics["test"]) == {"en", "fr"}
    assert all(0.0 <= s <= 1.0 for split in ("dev", "test") for s in metrics[split].values())
    assert sorted(p.name.split(".")[1] for p in out.glob("predictions.*")) == ["en", "fr"]
    state = torch.load(tmp_path / "work" / "state.pt", weights_only=False)
    assert ("random_init" in state["fingerprint"]) == (random_init is not None)
    # The saved encoder is the selected epoch's: the pretrained one with that epoch's weights.
    selected = torch.load(tmp_path / "work" / f"epoch{metrics['selected_epoch']:03d}.pt")
    expected = load_encoder(bert_dir)
    weights = {k.removeprefix("encoder."): v for k, v in selected.items() if k[:8] == "encoder."}
    assert set(weights) == {name for name, _ in expected.named_parameters()}  # nothing frozen
    expected.load_state_dict(weights, strict=False)
    reloaded, reloaded_tokenizer = load_encoder(saved).eval(), load_encoder_tokenizer(saved)
    line = "Zokalo sees the Qutari ."
    assert reloaded_tokenizer.encode_line(line, "en") == load_encoder_tokenizer(
        bert_dir
    ).encode_line(line, "en")
    ids = torch.tensor([[2, *reloaded_tokenizer.encode_line(line, "en"), 3]])
    with torch.no_grad():
        after = reloaded(ids, "en", output_hidden_states=True).hidden_states
        before = expected.eval()(ids, "en", output_hidden_states=True).hidden_states
        pretrained = load_encoder(bert_dir).eval()(ids, "en").last_hidden_state
    assert all(torch.equal(a, b) for a, b in zip(after, before, strict=True))
    assert not torch.equal(after[-1], pretrained)  # fine-tuned


def test_random_init_group_enters_the_fingerprint(world, bert):
    root, bert_dir = world
    tokenizer = bert[1]
    settings = FinetuneSettings(epochs=1, seed=1, max_length=48)
    spec = make_task("ner", tokenizer, settings)
    config = load_encoder_config(bert_dir)
    args = ("ner", {"batch_size": 8, "lr": 0.01}, settings, spec, config, bert_dir)
    plain = job_fingerprint(*args, task_data(root, "ner"))
    assert plain["model"] == model_stamp(bert_dir)
    group = job_fingerprint(*args, task_data(root, "ner"), random_init="1-2")
    assert group["random_init"] == {"group": "1-2", "seed": 1}
    assert {k: v for k, v in group.items() if k != "random_init"} == plain
    with pytest.raises(ValueError, match="'5'"):
        run_finetune(
            FinetuneJob(
                "ner",
                bert_dir,
                task_data(root, "ner"),
                {"batch_size": 8, "lr": 0.01},
                root / "o",
                root / "w",
                settings,
                random_init="5",
            )
        )
