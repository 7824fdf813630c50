"""Fully shared encoders export to a stock transformers XLM masked LM with the same logits."""

import pytest
import torch
from transformers import AutoModelForMaskedLM, XLMWithLMHeadModel

from xling.model import EncoderConfig, MLMEncoder
from xling.model.export import export_transformers

torch.set_num_threads(1)


def random_model(languages, **changes) -> MLMEncoder:
    sizes = {"dim": 32, "layers": 3, "heads": 4, "ffn_dim": 128, "max_positions": 20}
    config = EncoderConfig(
        vocab_size=70,
        languages=languages,
        dropout=0.1,
        attention_dropout=0.1,
        **{**sizes, **changes},
    )
    torch.manual_seed(0)
    model = MLMEncoder(config)
    with torch.no_grad():  # move away from the init so that every parameter matters
        for param in model.parameters():
            param.add_(0.1 * torch.randn_like(param))
    return model.eval()


def padded_batch():
    generator = torch.Generator().manual_seed(3)
    ids = torch.randint(5, 70, (3, 12), generator=generator)
    mask = torch.ones_like(ids)
    ids[1, 8:], mask[1, 8:] = 0, 0
    return ids, mask


def test_bilingual_export_gives_the_same_logits(tmp_path):
    model = random_model(["en", "fr"])
    tokenizer = tmp_path / "tok"
    tokenizer.mkdir()
    (tokenizer / "vocab.txt").write_text("<pad>\n")
    export_transformers(model, tmp_path / "hf", tokenizer_dir=tokenizer)
    loaded = AutoModelForMaskedLM.from_pretrained(tmp_path / "hf").eval()
    assert isinstance(loaded, XLMWithLMHeadModel)
    assert (tmp_path / "hf" / "tokenizer" / "vocab.txt").exists()
    assert (
        loaded.pred_layer.proj.weight.data_ptr() == loaded.transformer.embeddings.weight.data_ptr()
    )
    ids, mask = padded_batch()
    real = mask.bool()
    for lang in ("en", "fr"):
        langs = torch.full_like(ids, loaded.config.lang2id[lang])
        with torch.no_grad():
            ours = model.mlm_logits(model(ids, lang, attention_mask=mask).last_hidden_state, lang)
            theirs = loaded(input_ids=ids, attention_mask=mask, langs=langs).logits
        assert torch.allclose(ours[real], theirs[real], atol=1e-5, rtol=1e-5)
    # Language embeddings matter: the wrong language id changes the logits.
    with torch.no_grad():
        wrong = loaded(input_ids=ids, attention_mask=mask, langs=torch.zeros_like(ids)).logits
    assert not torch.allclose(ours[real], wrong[real], atol=1e-3)


def test_monolingual_export_needs_no_language_ids(tmp_path):
    model = random_model(["zh"])
    export_transformers(model, tmp_path / "hf")
    loaded = AutoModelForMaskedLM.from_pretrained(tmp_path / "hf").eval()
    ids, _ = padded_batch()
    ids[ids == 0] = 7  # no padding: the XLM model infers lengths from the pad id
    with torch.no_grad():
        ours = model.mlm_logits(model(ids, "zh").last_hidden_state, "zh")
        theirs = loaded(input_ids=ids).logits
    assert torch.allclose(ours, theirs, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"sep_embeddings": True}, "fully shared"),
        ({"sep_layers": 1}, "fully shared"),
        ({"ffn_dim": 96}, "4 x dim"),
    ],
)
def test_models_without_a_stock_equivalent_are_refused(tmp_path, changes, message):
    with pytest.raises(ValueError, match=message):
        export_transformers(random_model(["en", "fr"], **changes), tmp_path / "hf")
    assert not (tmp_path / "hf").exists()
