"""Each Table 1 variant builds, shares exactly what it should, routes languages its own way."""

import pytest
import torch
import torch.nn.functional as F

from xling.model import EncoderConfig, MLMEncoder, load_pretrained, save_pretrained
from xling.model.config import encoder_config_for
from xling.papers.wu2020 import TABLE1_ROWS

torch.set_num_threads(1)

BASE = EncoderConfig(
    vocab_size=60,
    languages=["en", "fr"],
    dim=16,
    layers=8,
    heads=2,
    ffn_dim=32,
    dropout=0.0,
    attention_dropout=0.0,
    max_positions=24,
)


def layer_parameters(d: int, f: int) -> int:
    attention = 3 * d * d + 3 * d + d * d + d
    ffn = d * f + f + f * d + d
    return attention + ffn + 2 * 2 * d  # two LayerNorms


def embedding_parameters(config: EncoderConfig) -> int:
    d = config.dim
    tokens_and_bias = config.vocab_size * d + config.vocab_size
    return tokens_and_bias + config.max_positions * d + 2 * d


def build(name: str) -> MLMEncoder:
    spec = TABLE1_ROWS[name]
    torch.manual_seed(0)
    config = encoder_config_for(
        BASE, sep_embeddings=spec.sep_embeddings, sep_layers=spec.sep_layers
    )
    return MLMEncoder(config)


@pytest.mark.parametrize("name", list(TABLE1_ROWS))
def test_each_variant_counts_shared_and_language_parameters(name):
    model = build(name)
    config, spec, languages = model.config, TABLE1_ROWS[name], 2
    layer = layer_parameters(config.dim, config.ffn_dim)
    embeddings = embedding_parameters(config)
    language_embeddings = languages * config.dim
    expected_specific = language_embeddings + languages * spec.sep_layers * layer
    expected_shared = (config.layers - spec.sep_layers) * layer
    if spec.sep_embeddings:
        expected_specific += languages * embeddings
    else:
        expected_shared += embeddings
    assert model.num_parameters(language_specific=True) == expected_specific
    assert model.num_parameters(language_specific=False) == expected_shared
    assert model.num_parameters() == expected_shared + expected_specific
    assert config.fully_shared == (not spec.sep_embeddings and spec.sep_layers == 0)


def french_only_parameters(model: MLMEncoder):
    """(parameter, row or None) that only French uses."""
    owned = []
    for name, param in model.named_parameters():
        if name.startswith("language_embeddings."):
            owned.append((param, model.lang_to_index["fr"]))
        elif ".fr." in f".{name}":
            owned.append((param, None))
    return owned


def mlm_loss(model: MLMEncoder, lang: str, ids: torch.Tensor) -> torch.Tensor:
    hidden = model(ids, lang).last_hidden_state
    logits = model.mlm_logits(hidden.reshape(-1, model.config.dim), lang)
    return F.cross_entropy(logits, ids.reshape(-1))


@pytest.mark.parametrize("name", ["default", "sep_emb", "sep_emb_l1_3", "sep_l1_6"])
def test_each_language_runs_through_its_own_parts(name):
    model = build(name)
    ids = torch.randint(5, BASE.vocab_size, (2, 10), generator=torch.Generator().manual_seed(1))
    before = {lang: model(ids, lang).last_hidden_state for lang in ("en", "fr")}
    with torch.no_grad():
        for param, row in french_only_parameters(model):
            target = param if row is None else param[row]
            target.add_(torch.randn_like(target))
    after = {lang: model(ids, lang).last_hidden_state for lang in ("en", "fr")}
    assert torch.equal(before["en"], after["en"]), "English must not touch French parameters"
    assert not torch.allclose(before["fr"], after["fr"]), "French must use its own parameters"
    # And no gradient reaches French parameters from an English batch.
    mlm_loss(model, "en", ids).backward()
    for param, row in french_only_parameters(model):
        grad = param.grad if row is None else (None if param.grad is None else param.grad[row])
        assert grad is None or not grad.any()


def test_separate_layers_are_distinct_copies_and_shared_layers_are_one():
    model = build("sep_l1_3")
    en, fr = model.layers_for("en"), model.layers_for("fr")
    assert all(a is not b for a, b in zip(en[:3], fr[:3], strict=True))
    assert all(a is b for a, b in zip(en[3:], fr[3:], strict=True))
    assert model.embeddings_for("en") is model.embeddings_for("fr")
    sep = build("sep_emb")
    assert sep.embeddings_for("en") is not sep.embeddings_for("fr")


def test_language_specific_softmax_scores_only_the_languages_tokens():
    model = build("sep_emb")
    french = torch.arange(30, 60)
    model.set_language_vocabulary("fr", torch.cat([torch.arange(5), french]))
    logits = model.mlm_logits(torch.randn(4, BASE.dim), "fr")
    probs = logits.softmax(-1)
    assert torch.all(probs[:, 5:30] == 0)
    assert torch.allclose(probs[:, french].sum(-1) + probs[:, :5].sum(-1), torch.ones(4))


def test_monolingual_model_has_nothing_language_specific(tmp_path):
    config = encoder_config_for(BASE, sep_embeddings=False, sep_layers=0, languages=["ru"])
    model = MLMEncoder(config)
    assert model.language_embeddings is None
    assert model.num_parameters(language_specific=True) == 0
    save_pretrained(model, tmp_path / "model")
    loaded = load_pretrained(tmp_path / "model")
    ids = torch.randint(5, BASE.vocab_size, (1, 7))
    model.eval(), loaded.eval()
    assert torch.equal(model(ids, "ru").last_hidden_state, loaded(ids, "ru").last_hidden_state)


def test_variant_with_more_separate_layers_than_layers_is_refused():
    with pytest.raises(ValueError, match="sep_layers"):
        encoder_config_for(BASE, sep_embeddings=False, sep_layers=9)


def test_position_scale_scales_the_fixed_table_and_survives_saving(tmp_path):
    fixed = {**BASE.__dict__, "sinusoidal_positions": True}
    full = MLMEncoder(EncoderConfig(**fixed)).embeddings["shared"].positions.weight
    scaled = MLMEncoder(EncoderConfig(**{**fixed, "position_scale": 0.5}))
    table = scaled.embeddings["shared"].positions.weight
    assert torch.equal(table, full * 0.5) and not table.requires_grad
    save_pretrained(scaled, tmp_path / "m")
    loaded = load_pretrained(tmp_path / "m")
    assert loaded.config.position_scale == 0.5
    assert torch.equal(loaded.embeddings["shared"].positions.weight, table)


@pytest.mark.parametrize("changes", [{"position_scale": 0.0}, {"position_scale": 0.5}])
def test_position_scale_needs_a_positive_value_and_the_fixed_table(changes):
    """0 is refused; 0.5 is refused with learned positions, which it would not touch."""
    with pytest.raises(ValueError, match="position_scale"):
        EncoderConfig(**{**BASE.__dict__, **changes})


def test_sinusoidal_positions_are_a_fixed_table_that_survives_saving(tmp_path):
    config = EncoderConfig(**{**BASE.__dict__, "sinusoidal_positions": True})
    model = MLMEncoder(config)
    table = model.embeddings["shared"].positions.weight
    assert not table.requires_grad
    # Position 0: sin(0) = 0 on even dimensions, cos(0) = 1 on odd ones.
    assert torch.equal(table[0, 0::2], torch.zeros(config.dim // 2))
    assert torch.equal(table[0, 1::2], torch.ones(config.dim // 2))
    assert torch.allclose(table[5, 0], torch.sin(torch.tensor(5.0)))
    # Training moves every learned weight but not the table.
    before = table.clone()
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    ids = torch.randint(4, config.vocab_size, (2, 10))
    model(ids, "en").last_hidden_state.sum().backward()
    optimizer.step()
    assert torch.equal(model.embeddings["shared"].positions.weight, before)
    save_pretrained(model, tmp_path / "m")
    loaded = load_pretrained(tmp_path / "m")
    assert loaded.config.sinusoidal_positions
    assert not loaded.embeddings["shared"].positions.weight.requires_grad
    assert torch.equal(loaded.embeddings["shared"].positions.weight, before)
