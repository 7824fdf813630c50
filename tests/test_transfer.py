"""Layer-wise transfer (xling.analysis.transfer) on tiny random encoders and generated data:
what runs through the frozen layers, what trains, mappings, and whole jobs for NER and parsing."""

import json

import pytest
import torch

from tests.finetune_world import World, build_tokenizer, build_world, make_model
from xling.analysis import transfer
from xling.analysis.transfer import (
    LayerTransferJob,
    LayerTransferModel,
    TransferEvaluation,
    build_task_layers,
    run_layer_transfer,
)
from xling.contracts.conllu import read_conllu
from xling.contracts.items import read_test_items
from xling.contracts.ner import read_ner
from xling.finetune import FinetuneSettings, TaskData
from xling.finetune import fitting as fitting_module
from xling.finetune.metrics import ratio
from xling.finetune.tasks import make_task
from xling.finetune.training import Learner, make_scheduler, train_epoch
from xling.model import load_pretrained
from xling.model.encoder import TransformerLayer
from xling.vocab import SubwordTokenizer

torch.set_num_threads(1)
CPU = torch.device("cpu")
HP = {"batch_size": 16, "lr": 5e-3}


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory):
    return build_world(tmp_path_factory.mktemp("world"))


@pytest.fixture(scope="module")
def models(world_dir, tmp_path_factory):
    """An en-fr source model (French parts with separate bottom layers) and a French monolingual
    model with its own, smaller tokenizer, as the monolingual models of the paper have."""
    out = tmp_path_factory.mktemp("models")
    source = make_model(world_dir, out, sep_layers=1, name="source")
    fr_tokenizer = build_tokenizer(World(seed=1), out / "fr_vocab", langs=("fr",), merges=60)
    assert SubwordTokenizer.load(fr_tokenizer).vocab_size < world_dir[1].vocab_size
    target = make_model(
        world_dir, out, sep_layers=0, languages=("fr",), tokenizer_dir=fr_tokenizer, name="fr"
    )
    return source, target


def english_data(root, task):
    sub, ext = ("ner", "txt") if task == "ner" else ("ud", "conllu")
    return TaskData(
        train=root / sub / "en" / f"train.{ext}",
        dev={"en": root / sub / "en" / f"dev.{ext}"},
        test={"en": root / sub / "en" / f"test.{ext}"},
    )


def ner_model(world_dir, model_dir, layer, mapping=None):
    root, tokenizer = world_dir
    spec = make_task("ner", tokenizer)
    examples = read_ner(root / "ner" / "en" / "train.txt", "en")[:48]
    spec.fit_labels(examples)
    encoder = load_pretrained(model_dir)
    torch.manual_seed(0)
    model = LayerTransferModel(
        encoder, layer, build_task_layers(encoder.config), spec.build_head(32, 0.0), mapping
    )
    return spec, model, spec.encode(examples, "en", 48)


def orthogonal(dim, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.linalg.qr(torch.randn(dim, dim, generator=generator)).Q


def predicted_tags(path):
    """The third column of a NER predictions file (``read_ner`` reads the gold one)."""
    return [line.split("\t")[2] for line in path.read_text().splitlines() if line]


def count_layer_calls(encoder):
    calls = []
    for module in encoder.modules():
        if isinstance(module, TransformerLayer):
            module.register_forward_hook(lambda *_: calls.append(1))
    return calls


# ----------------------------------------------------------------------------- the model
@pytest.mark.parametrize("layer", [0, 1, 2])
def test_frozen_states_are_the_encoders_hidden_state_of_the_layer(world_dir, models, layer):
    spec, model, items = ner_model(world_dir, models[0], layer)
    batch = spec.collate(items[:8])
    calls = count_layer_calls(model.encoder)
    model.train()  # the frozen layers stay in eval mode even so
    assert not model.encoder.training and model.task_layers.training
    states = model.frozen_states(batch, "en")
    assert len(calls) == layer  # layer 0: the embeddings only, no Transformer layer runs
    ids = batch["input_ids"]
    with torch.no_grad():
        reference = model.encoder(ids, "en", ids != model.pad_id, output_hidden_states=True)
    assert torch.equal(states, reference.hidden_states[layer])


def test_task_layers_have_the_encoders_architecture(world_dir, models):
    _, model, _ = ner_model(world_dir, models[0], 1)
    assert len(model.task_layers) == 4
    reference = model.encoder.shared_layers[0]
    for layer in model.task_layers:
        assert type(layer) is type(reference)
        shapes = {name: p.shape for name, p in layer.named_parameters()}
        assert shapes == {name: p.shape for name, p in reference.named_parameters()}
        assert layer.heads == reference.heads
    trainable = {name.split(".")[0] for name, p in model.named_parameters() if p.requires_grad}
    assert trainable == {"task_layers", "head"}


def test_frozen_parameters_are_bitwise_unchanged_after_training(world_dir, models):
    spec, model, items = ner_model(world_dir, models[0], 2, mapping=orthogonal(32, 0))
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    assert not any(p.requires_grad for p in model.encoder.parameters())
    optimizer = torch.optim.Adam(spec.parameter_groups(model, {"lr": 1e-2}))
    scheduler = make_scheduler(optimizer, "constant", 6, 0.1)
    learner = Learner(spec, model, optimizer, scheduler, CPU)
    train_epoch(learner, items, list(range(len(items))), 8, "en")
    changed = {name for name, p in model.named_parameters() if not torch.equal(p, before[name])}
    assert changed >= {"task_layers.0.qkv.weight", "task_layers.3.ffn_out.weight"}
    assert "head.output.weight" in changed
    assert not any(name.startswith("encoder.") for name in changed)
    assert all(p.grad is None for p in model.encoder.parameters())
    assert torch.equal(model.mapping, orthogonal(32, 0))


def test_swapping_encoder_and_mapping(world_dir, models):
    spec, model, items = ner_model(world_dir, models[0], 1)
    batch = spec.collate(items[:4])
    plain = model.frozen_states(batch, "en")
    rotation = orthogonal(32, 1)
    model.use_encoder(load_pretrained(models[0]), rotation)
    assert torch.allclose(model.frozen_states(batch, "en"), plain @ rotation)
    model.use_encoder(load_pretrained(models[0]), torch.eye(32))
    assert torch.equal(model.frozen_states(batch, "en"), plain)
    assert not any(p.requires_grad for p in model.encoder.parameters())
    with pytest.raises(ValueError, match=r"shape \(32, 16\) but must be 32 x 32"):
        model.use_encoder(load_pretrained(models[0]), torch.zeros(32, 16))


def test_a_layer_deeper_than_the_encoder_is_refused(world_dir, models, tmp_path):
    with pytest.raises(ValueError, match=r"layer 3 does not exist .* 2 Transformer layers"):
        ner_model(world_dir, models[0], 3)
    with pytest.raises(ValueError, match=r"num_layers=3 is outside 0\.\.2"):
        load_pretrained(models[0])(torch.tensor([[5, 6]]), "en", num_layers=3)
    root = world_dir[0]
    settings = FinetuneSettings(epochs=1, seed=0, max_length=48)
    args = (english_data(root, "ner"), tmp_path / "out", tmp_path / "work", settings)
    with pytest.raises(ValueError, match=rf"layer 3 does not exist in {models[0]}"):
        run_layer_transfer(LayerTransferJob("ner", models[0], 3, *args, evaluations={}, hp=HP))
    shallow = make_model(world_dir, tmp_path, sep_layers=0, layers=1, name="shallow")
    evaluation = {"fr": (shallow, "fr", root / "ner" / "fr" / "test.txt", None)}
    with pytest.raises(ValueError, match=rf"layer 2 does not exist in {shallow}"):
        run_layer_transfer(
            LayerTransferJob("ner", models[0], 2, *args, evaluations=evaluation, hp=HP)
        )
    evaluation = {"fr": (models[1], "fr", root / "ner" / "fr" / "test.txt", torch.eye(16))}
    with pytest.raises(ValueError, match="must be 32 x 32"):
        run_layer_transfer(
            LayerTransferJob("ner", models[0], 1, *args, evaluations=evaluation, hp=HP)
        )
    evaluation = {"fr": (models[1], "de", root / "ner" / "fr" / "test.txt", None)}
    with pytest.raises(ValueError, match="has no parts for 'de'"):
        run_layer_transfer(
            LayerTransferJob("ner", models[0], 1, *args, evaluations=evaluation, hp=HP)
        )
    with pytest.raises(ValueError, match="supports ner, parsing, not 'xnli'"):
        run_layer_transfer(LayerTransferJob("xnli", models[0], 1, *args, evaluations={}, hp=HP))
    assert not (tmp_path / "work").exists() and not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- whole jobs
def test_ner_job_identity_and_rotation(world_dir, models, tmp_path, monkeypatch):
    root = world_dir[0]
    source, target = models
    loaded = []

    def load_tokenizer(model_dir):
        loaded.append(model_dir)
        return SubwordTokenizer.load(model_dir / "tokenizer")

    monkeypatch.setattr(transfer, "load_tokenizer", load_tokenizer)
    en_test, fr_test = root / "ner" / "en" / "test.txt", root / "ner" / "fr" / "test.txt"
    evaluations = {
        "identity": TransferEvaluation(source, "en", en_test, torch.eye(32)),
        "rotated": (source, "en", en_test, orthogonal(32, 2).numpy()),
        "fr_mono": (target, "fr", fr_test, orthogonal(32, 3)),
        "fr_bilingual": (source, "fr", fr_test, None),
    }
    out = tmp_path / "out"
    metrics = run_layer_transfer(
        LayerTransferJob(
            "ner",
            source,
            1,
            english_data(root, "ner"),
            out,
            tmp_path / "work",
            FinetuneSettings(epochs=3, seed=1, max_length=48),
            evaluations=evaluations,
            hp={"batch_size": 16, "lr": 1e-2},
        )
    )
    assert json.loads((out / "metrics.json").read_text()) == metrics
    assert metrics["task"] == "ner" and metrics["layer"] == 1 and metrics["task_layers"] == 4
    assert metrics["metric"] == "span_f1" and metrics["hp_id"] == "bs16_lr0.01"
    # Chance (all O) is 0; random frozen embeddings make names slow to learn: 3 epochs give ~0.2.
    assert metrics["test"]["en"] > 0.1
    scores = metrics["evaluations"]
    assert scores["identity"] == {"lang": "en", "mapped": True, "test": metrics["test"]["en"]}
    assert scores["fr_bilingual"]["mapped"] is False
    assert predicted_tags(out / "predictions.rotated.txt") != predicted_tags(
        out / "predictions.identity.txt"
    )
    assert scores["rotated"]["test"] != metrics["test"]["en"]
    # every evaluation keeps its per-sentence counts beside the source test's, under its name
    items = read_test_items(out / "test_items.json")
    assert sorted(items) == sorted(["en", *evaluations])
    for name, result in scores.items():
        assert ratio(items[name]) == pytest.approx(result["test"])
        test, lang = (fr_test, "fr") if name.startswith("fr") else (en_test, "en")
        assert len(items[name]) == len(read_ner(test, lang))
    # Each evaluation reads its test file with its own model's tokenizer.
    assert target in loaded and source in loaded
    gold = read_ner(fr_test, "fr")
    assert [s.words for s in read_ner(out / "predictions.fr_mono.txt", "fr")] == [
        s.words for s in gold
    ]
    assert sorted(p.name for p in out.iterdir()) == [
        "metrics.json",
        "predictions.en.txt",
        "predictions.fr_bilingual.txt",
        "predictions.fr_mono.txt",
        "predictions.identity.txt",
        "predictions.rotated.txt",
        "test_items.json",  # each test set's per-sentence counts, as every fine-tuning run keeps
    ]
    assert not (tmp_path / "work").exists()


def test_parsing_job_and_resume(world_dir, models, tmp_path, monkeypatch):
    root = world_dir[0]
    source, target = models
    fr_test = root / "ud" / "fr" / "test.conllu"
    settings = FinetuneSettings(epochs=2, seed=1, max_length=48, arc_dim=32, label_dim=16)

    def run(out):
        return run_layer_transfer(
            LayerTransferJob(
                "parsing",
                source,
                0,
                english_data(root, "parsing"),
                out,
                tmp_path / "work",
                settings,
                evaluations={"fr": (target, "fr", fr_test, orthogonal(32, 4))},
                hp=HP,
            ),
            keep_work_dir=True,
        )

    metrics = run(tmp_path / "a")
    assert metrics["metric"] == "las" and metrics["layer"] == 0
    assert metrics["test"]["en"] > 0.3  # a fixed word order, learnt from embeddings alone
    assert 0.0 <= metrics["evaluations"]["fr"]["test"] <= 1.0
    predicted = read_conllu(tmp_path / "a" / "predictions.fr.conllu")
    assert [s.words for s in predicted] == [s.words for s in read_conllu(fr_test)]
    assert all(sentence.heads.count(0) == 1 for sentence in predicted)
    # A rerun finds every epoch in the work directory: it trains nothing and scores the same.
    trained = []
    monkeypatch.setattr(fitting_module, "train_epoch", lambda *args: trained.append(args))
    assert run(tmp_path / "b") == metrics
    assert not trained
