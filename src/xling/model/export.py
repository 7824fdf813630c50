"""Export a fully shared encoder as a stock ``transformers`` XLM masked LM.

The encoder mirrors XLM (Lample and Conneau 2019), so ``XLMWithLMHeadModel`` holds exactly its
parameters: the fused ``qkv`` projection is split into XLM's ``q_lin``/``k_lin``/``v_lin`` and the
tied softmax becomes ``pred_layer.proj`` (tied to ``transformer.embeddings``). The export loads with
``AutoModelForMaskedLM.from_pretrained(dir)``; pass ``langs`` (ids from ``config.lang2id``) when the
model has language embeddings, as for any XLM checkpoint.

Variants with language-specific parts (separate embeddings or layers) have no stock equivalent and
are refused.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import torch

from xling.base.atomic import atomic_directory
from xling.model.encoder import MLMEncoder

TOKENIZER_DIR = "tokenizer"


def transformers_config(model: MLMEncoder):
    """The ``XLMConfig`` describing ``model`` (same sizes, special ids and languages)."""
    from transformers import XLMConfig  # imported here: transformers is slow to import

    config = model.config
    if not config.fully_shared:
        raise ValueError(
            "only fully shared models can be exported as a stock transformers model; this one has "
            f"sep_embeddings={config.sep_embeddings}, sep_layers={config.sep_layers} (keep using "
            "xling.model.load_pretrained for it)"
        )
    if config.ffn_dim != 4 * config.dim:
        raise ValueError(
            "transformers' XLM fixes the FFN width to 4 x dim; this model has "
            f"ffn_dim={config.ffn_dim} and dim={config.dim}, so it has no XLMWithLMHeadModel "
            "equivalent"
        )
    lang2id = {lang: i for i, lang in enumerate(config.languages)}
    return XLMConfig(
        vocab_size=config.vocab_size,
        emb_dim=config.dim,
        n_layers=config.layers,
        n_heads=config.heads,
        dropout=config.dropout,
        attention_dropout=config.attention_dropout,
        gelu_activation=True,
        sinusoidal_embeddings=False,
        causal=False,
        asm=False,
        n_langs=len(config.languages),
        use_lang_emb=model.language_embeddings is not None,
        max_position_embeddings=config.max_positions,
        layer_norm_eps=config.layer_norm_eps,
        # The vocabulary contract's special ids: <pad> 0, <unk> 1, <s> 2, </s> 3, <mask> 4.
        pad_token_id=config.pad_id,
        unk_index=1,
        bos_token_id=2,
        eos_token_id=3,
        mask_index=4,
        mask_token_id=4,
        lang2id=lang2id,
        id2lang={i: lang for lang, i in lang2id.items()},
        lang_id=0,
        architectures=["XLMWithLMHeadModel"],
    )


def transformers_state_dict(model: MLMEncoder) -> dict[str, torch.Tensor]:
    """``model``'s weights under ``XLMWithLMHeadModel``'s parameter names."""
    dim = model.config.dim
    emb = model.embeddings["shared"]
    state = {
        "transformer.embeddings.weight": emb.tokens.weight,
        "transformer.position_embeddings.weight": emb.positions.weight,
        "transformer.layer_norm_emb.weight": emb.norm.weight,
        "transformer.layer_norm_emb.bias": emb.norm.bias,
        "pred_layer.proj.weight": emb.tokens.weight,
        "pred_layer.proj.bias": emb.output_bias,
    }
    if model.language_embeddings is not None:
        state["transformer.lang_embeddings.weight"] = model.language_embeddings.weight
    for i, layer in enumerate(model.shared_layers):
        prefix = "transformer."
        # Our qkv output is laid out as (3, heads, head_dim): rows [0, d) are q, [d, 2d) k, then v.
        for part, rows in zip(("q_lin", "k_lin", "v_lin"), range(3), strict=True):
            block = slice(rows * dim, (rows + 1) * dim)
            state[f"{prefix}attentions.{i}.{part}.weight"] = layer.qkv.weight[block]
            state[f"{prefix}attentions.{i}.{part}.bias"] = layer.qkv.bias[block]
        pairs = {
            f"attentions.{i}.out_lin": layer.out,
            f"layer_norm1.{i}": layer.norm1,
            f"ffns.{i}.lin1": layer.ffn_in,
            f"ffns.{i}.lin2": layer.ffn_out,
            f"layer_norm2.{i}": layer.norm2,
        }
        for name, module in pairs.items():
            state[f"{prefix}{name}.weight"] = module.weight
            state[f"{prefix}{name}.bias"] = module.bias
    return {name: t.detach().clone() for name, t in state.items()}


def to_transformers(model: MLMEncoder):
    """Build an ``XLMWithLMHeadModel`` with ``model``'s weights (in eval mode, on CPU)."""
    from transformers import XLMWithLMHeadModel

    hf_model = XLMWithLMHeadModel(transformers_config(model))
    state = {k: v.cpu().float() for k, v in transformers_state_dict(model).items()}
    missing, unexpected = hf_model.load_state_dict(state, strict=False)
    # position_ids is a non-persistent buffer; nothing else may be left out.
    missing = [m for m in missing if not m.endswith("position_ids")]
    if missing or unexpected:
        raise RuntimeError(f"XLM export mismatch: missing {missing}, unexpected {unexpected}")
    hf_model.tie_weights()
    return hf_model.eval()


def export_transformers(
    model: MLMEncoder, out_dir: str | Path, tokenizer_dir: str | Path | None = None
) -> Path:
    """Write ``model`` as a ``transformers`` XLM masked LM to ``out_dir``, atomically.

    ``AutoModelForMaskedLM.from_pretrained(out_dir)`` loads it. The xling tokenizer directory, if
    given, is copied to ``out_dir/tokenizer`` (transformers' ``XLMTokenizer`` runs its own Moses and
    lower-casing pipeline, so it is not a faithful stand-in for the study's tokenizer).
    """
    hf_model = to_transformers(model)
    with atomic_directory(out_dir) as tmp:
        hf_model.save_pretrained(tmp)
        if tokenizer_dir is not None:
            shutil.copytree(tokenizer_dir, tmp / TOKENIZER_DIR)
    return Path(out_dir)
