"""RANDOM-INIT (Muller et al. 2021, section 2.1): group names, and re-initialising exactly one
group's parameters with the model's own initialisation, on a 12-layer tiny BERT and on our
MLMEncoder (shared and language-specific layers); then through a fine-tuning job of ours, whose
saved encoder is the selected epoch's.
"""

import math

import pytest
import torch

from tests.finetune_world import build_world, make_model, task_data
from xling.analysis.loading import load_model_and_tokenizer
from xling.analysis.similarity import cka_rows
from xling.finetune import FinetuneJob, FinetuneSettings, run_finetune
from xling.model import (
    EncoderConfig,
    MLMEncoder,
    load_encoder,
    load_encoder_tokenizer,
    load_pretrained,
)
from xling.model.hf import HFEncoder, HFEncoderConfig
from xling.model.random_init import parse_group, random_like, reinitialize


# ----------------------------------------------------------------------------- group names
def test_group_names():
    assert parse_group("all", 12) == tuple(range(13))
    assert parse_group("3", 12) == (3,)
    assert parse_group("1-2", 12) == (1, 2)
    assert parse_group("7-9", 12) == (7, 8, 9)
    assert parse_group("0-1", 12) == (0, 1)  # the embeddings and layer 1
    assert parse_group("12", 12) == (12,)


@pytest.mark.parametrize(
    ("group", "why"),
    [
        ("13", "names layer 13, but the model has 12 layers"),
        ("10-13", "names layer 13"),
        ("3-1", "empty range"),
        ("x", "is not 'all'"),
        ("", "is not 'all'"),
        ("1-", "is not 'all'"),
        ("-1", "is not 'all'"),
        ("ALL", "is not 'all'"),
    ],
)
def test_bad_groups_are_named(group, why):
    with pytest.raises(ValueError, match=f"group {group!r} .*{why}"):
        parse_group(group, 12)


# ----------------------------------------------------------------------------- checks
def pretend_pretrained(encoder):
    """Weights no initialisation would give (uniform in [0.5, 1.5]), so every drawn parameter
    shows; returns a copy of them."""
    generator = torch.Generator().manual_seed(123)
    with torch.no_grad():
        for param in encoder.parameters():
            param.copy_(torch.rand(param.shape, generator=generator) + 0.5)
    return {name: p.detach().clone() for name, p in encoder.named_parameters()}


def assert_normal(values, std, name):
    """Mean and standard deviation of N(0, std) samples, within 5 standard errors."""
    values = values.double().flatten()
    n = values.numel()
    assert abs(values.mean().item()) < 5 * std / math.sqrt(n), name
    assert abs(values.std().item() - std) < 5 * std / math.sqrt(2 * n), name


def check_group(encoder, before, drawn, expected, linear_std, embedding_std):
    """``drawn`` is ``expected``; they hold fresh draws, every other parameter is untouched."""
    assert drawn == [name for name, _ in encoder.named_parameters() if name in expected]
    assert set(drawn) == expected
    modules = dict(encoder.named_modules())
    for name, param in encoder.named_parameters():
        if name not in expected:
            assert torch.equal(param, before[name]), name
            continue
        owner = modules[name.rsplit(".", 1)[0]]
        if isinstance(owner, torch.nn.LayerNorm):
            fill = 1.0 if name.endswith("weight") else 0.0
            assert torch.equal(param, torch.full_like(param, fill)), name
        elif name.endswith("bias"):
            assert torch.equal(param, torch.zeros_like(param)), name
        elif isinstance(owner, torch.nn.Embedding):
            rows = param
            if owner.padding_idx is not None:
                assert torch.equal(param[owner.padding_idx], torch.zeros(param.shape[1])), name
                keep = torch.arange(len(param)) != owner.padding_idx
                rows = param[keep]
            assert_normal(rows, embedding_std, name)
        else:
            assert isinstance(owner, torch.nn.Linear), name
            assert_normal(param, linear_std, name)


# ----------------------------------------------------------------------------- tiny BERT
@pytest.fixture(scope="module")
def bert_config():
    from transformers import BertConfig

    return BertConfig(
        vocab_size=200,
        hidden_size=32,
        num_hidden_layers=12,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )


def tiny_bert(config):
    from transformers import BertModel

    return HFEncoder(BertModel(config), HFEncoderConfig.from_transformers(config, "tiny"), 3)


def bert_names(encoder, *prefixes):
    return {n for n, _ in encoder.named_parameters() if n.startswith(prefixes)}


@pytest.mark.parametrize(
    ("group", "prefixes"),
    [
        ("1-2", ("model.encoder.layer.0.", "model.encoder.layer.1.")),
        ("0-1", ("model.embeddings.", "model.encoder.layer.0.")),
        ("12", ("model.encoder.layer.11.",)),
        ("all", ("model.embeddings.", "model.encoder.")),  # not the pooler
    ],
)
def test_bert_group_is_drawn_again_and_nothing_else(bert_config, group, prefixes):
    encoder = tiny_bert(bert_config)
    before = pretend_pretrained(encoder)
    drawn = reinitialize(encoder, group, seed=7)
    expected = bert_names(encoder, *prefixes)
    check_group(encoder, before, drawn, expected, 0.02, 0.02)
    assert not any(name.startswith("model.pooler.") for name in drawn)


def test_draws_depend_on_the_seed_only(bert_config):
    first, second, third = (tiny_bert(bert_config) for _ in range(3))
    for encoder, global_seed, seed in ((first, 0, 5), (second, 99, 5), (third, 0, 6)):
        pretend_pretrained(encoder)
        torch.manual_seed(global_seed)
        reinitialize(encoder, "1-2", seed=seed)
    a, b, c = (dict(e.named_parameters()) for e in (first, second, third))
    name = "model.encoder.layer.1.attention.self.query.weight"
    assert torch.equal(a[name], b[name])  # whatever the global RNG
    assert not torch.equal(a[name], c[name])
    with pytest.raises(ValueError, match="group '13'"):
        reinitialize(first, "13", seed=0)


def test_random_like_leaves_the_model_alone(bert_config):
    encoder = tiny_bert(bert_config)
    before = pretend_pretrained(encoder)
    fresh = random_like(encoder, seed=1)
    assert all(torch.equal(p, before[n]) for n, p in encoder.named_parameters())
    changed = {n for n, p in fresh.named_parameters() if not torch.equal(p, before[n])}
    assert changed == bert_names(encoder, "model.embeddings.", "model.encoder.")
    ours = EncoderConfig(vocab_size=40, languages=["en"], dim=8, layers=1, heads=1, ffn_dim=8)
    torch.manual_seed(4)
    pretraining_start = MLMEncoder(ours)  # what pretraining with seed 4 starts from
    drawn, again = (random_like(MLMEncoder(ours), seed=4) for _ in range(2))
    pairs = list(zip(pretraining_start.parameters(), drawn.parameters(), strict=True))
    assert not any(torch.equal(p, q) for p, q in pairs if p.numel() > 1 and p.std() > 0)
    same = zip(drawn.parameters(), again.parameters(), strict=True)
    assert all(torch.equal(p, q) for p, q in same)


@pytest.mark.parametrize("group", ["1-2", "0"])
def test_pytorch_default_draws_what_pytorchs_constructors_give(bert_config, group):
    """Muller et al.'s released RANDOM-INIT code leaves the layers it skips loading at PyTorch's
    constructor defaults: Linear U(+-1/sqrt(fan_in)) weights and biases, Embedding N(0, 1),
    LayerNorm 1 and 0."""
    encoder = tiny_bert(bert_config)
    before = pretend_pretrained(encoder)
    drawn = reinitialize(encoder, group, seed=7, scheme="pytorch_default")
    prefixes = ("model.encoder.layer.0.", "model.encoder.layer.1.")
    expected = bert_names(encoder, *(prefixes if group == "1-2" else ("model.embeddings.",)))
    assert set(drawn) == expected
    modules = dict(encoder.named_modules())
    for name, param in encoder.named_parameters():
        if name not in expected:
            assert torch.equal(param, before[name]), name
            continue
        owner = modules[name.rsplit(".", 1)[0]]
        if isinstance(owner, torch.nn.LayerNorm):
            fill = 1.0 if name.endswith("weight") else 0.0
            assert torch.equal(param, torch.full_like(param, fill)), name
        elif isinstance(owner, torch.nn.Embedding):
            rows = param
            if owner.padding_idx is not None:
                assert torch.equal(param[owner.padding_idx], torch.zeros(param.shape[1])), name
                rows = param[torch.arange(len(param)) != owner.padding_idx]
            assert_normal(rows, 1.0, name)
        else:
            assert isinstance(owner, torch.nn.Linear), name
            bound = owner.in_features**-0.5  # kaiming_uniform_(a=sqrt(5)): 1/sqrt(fan_in)
            assert param.abs().max() <= bound, name
            assert param.abs().max() > 0.8 * bound, name  # spread over the whole range
            if name.endswith("weight"):  # U(-b, b): std b/sqrt(3), not BERT's 0.02
                assert param.std().item() == pytest.approx(bound / 3**0.5, rel=0.1), name
                assert abs(param.std().item() - 0.02) > 0.05, name


def test_the_bert_scheme_is_the_default_and_a_bad_scheme_is_named(bert_config):
    default, bert, pytorch = (tiny_bert(bert_config) for _ in range(3))
    for encoder in (default, bert, pytorch):
        pretend_pretrained(encoder)
    reinitialize(default, "1-2", seed=5)
    reinitialize(bert, "1-2", seed=5, scheme="bert")
    reinitialize(pytorch, "1-2", seed=5, scheme="pytorch_default")
    pairs = zip(default.parameters(), bert.parameters(), strict=True)
    assert all(torch.equal(p, q) for p, q in pairs)
    name = "model.encoder.layer.0.attention.self.query.weight"
    assert not torch.equal(
        dict(default.named_parameters())[name], dict(pytorch.named_parameters())[name]
    )
    assert_normal(dict(bert.named_parameters())[name], 0.02, name)
    with pytest.raises(ValueError, match=r"scheme 'xavier'.*bert, pytorch_default"):
        reinitialize(default, "1-2", seed=5, scheme="xavier")


def test_pytorch_default_on_our_mlm_draws_its_embeddings_from_n01():
    encoders = [mlm_encoder(), mlm_encoder()]
    for global_seed, encoder in zip((0, 99), encoders, strict=True):
        pretend_pretrained(encoder)
        torch.manual_seed(global_seed)  # whatever the global RNG: the draws are the seed's
        reinitialize(encoder, "0-1", seed=3, scheme="pytorch_default")
    tokens = encoders[0].embeddings["shared"].tokens
    rows = tokens.weight[torch.arange(len(tokens.weight)) != tokens.padding_idx]
    assert_normal(rows, 1.0, "tokens")  # not N(0, dim^-1/2)
    pairs = zip(encoders[0].parameters(), encoders[1].parameters(), strict=True)
    assert all(torch.equal(p, q) for p, q in pairs)


# ----------------------------------------------------------------------------- MLMEncoder
def mlm_encoder(**sharing):
    config = EncoderConfig(
        vocab_size=300, languages=["en", "fr"], dim=32, layers=4, heads=2, ffn_dim=64, **sharing
    )
    return MLMEncoder(config)


def mlm_names(encoder, *prefixes):
    names = {n for n, _ in encoder.named_parameters() if n.startswith(prefixes)}
    return {n for n in names if not n.endswith("output_bias")}  # the MLM head's


@pytest.mark.parametrize(
    ("sharing", "group", "prefixes"),
    [
        ({}, "1-2", ("shared_layers.0.", "shared_layers.1.")),
        # Layer 1 is language-specific: every language's copy; layer 2 is the first shared one.
        (
            {"sep_layers": 1},
            "1-2",
            ("language_layers.en.0.", "language_layers.fr.0.", "shared_layers.0."),
        ),
        ({"sep_layers": 2}, "2", ("language_layers.en.1.", "language_layers.fr.1.")),
        ({}, "0-1", ("embeddings.shared.", "language_embeddings.", "shared_layers.0.")),
        ({"sep_embeddings": True}, "0", ("embeddings.en.", "embeddings.fr.", "language_")),
        ({"sep_layers": 1}, "all", ("embeddings.", "language_", "shared_layers.")),
        # A fixed sinusoidal position table is no learned weight: it stays as it is.
        (
            {"sinusoidal_positions": True},
            "0",
            ("embeddings.shared.tokens.", "embeddings.shared.norm.", "language_embeddings."),
        ),
    ],
)
def test_mlm_group_is_drawn_again_and_nothing_else(sharing, group, prefixes):
    encoder = mlm_encoder(**sharing)
    before = pretend_pretrained(encoder)
    drawn = reinitialize(encoder, group, seed=3)
    expected = mlm_names(encoder, *prefixes)
    check_group(encoder, before, drawn, expected, 0.02, 32**-0.5)


# ----------------------------------------------------------------------------- a job of ours
def test_our_job_with_random_init_saves_the_selected_encoder(tmp_path):
    world = build_world(tmp_path / "world")
    model_dir = make_model(world, tmp_path)  # one language-specific layer, frozen in fine-tuning
    saved = tmp_path / "saved"
    settings = FinetuneSettings(epochs=2, seed=5, max_length=48)
    metrics = run_finetune(
        FinetuneJob(
            "ner",
            model_dir,
            task_data(world[0], "ner"),
            {"batch_size": 32, "lr": 5e-3},
            tmp_path / "out",
            tmp_path / "work",
            settings,
            random_init="1-2",
            save_encoder_to=saved,
        ),
        keep_work_dir=True,
    )
    assert metrics["random_init"] == "1-2"
    # Expected: the pretrained model, group 1-2 drawn with the job's seed (the frozen French and
    # English layer 1 keep those draws), then the selected epoch's trained weights.
    expected = load_pretrained(model_dir)
    reinitialize(expected, "1-2", settings.seed)
    weights = torch.load(tmp_path / "work" / f"epoch{metrics['selected_epoch']:03d}.pt")
    expected.load_state_dict(
        {k.removeprefix("encoder."): v for k, v in weights.items() if k.startswith("encoder.")},
        strict=False,
    )
    reloaded = load_encoder(saved)
    assert isinstance(reloaded, MLMEncoder)
    assert reloaded.config == expected.config
    for name, param in expected.state_dict().items():
        assert torch.equal(reloaded.state_dict()[name], param), name
    tokenizer, original = load_encoder_tokenizer(saved), world[1]
    # What the cka rule runs on a model directory (workflow/scripts/cka.py).
    lines = ["Zokalo sees the Qutari .", "a Zomi eats", "the Zo runs", "a Qukalo sees"]
    rows = cka_rows(*load_model_and_tokenizer(saved), lines, lines, ("en", "fr"), 4, False, 0)
    assert [r["layer"] for r in rows] == [0, 1, 2] * 2
    line = "Zokalo sees the Qutari ."
    for lang in ("en", "fr"):
        assert tokenizer.encode_line(line, lang) == original.encode_line(line, lang)
        ids = torch.tensor([[3, *tokenizer.encode_line(line, lang), 3]])
        with torch.no_grad():
            after = reloaded.eval()(ids, lang).last_hidden_state
            assert torch.equal(after, expected.eval()(ids, lang).last_hidden_state)
