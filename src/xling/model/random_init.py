"""RANDOM-INIT (Muller et al. 2021, section 2.1): re-initialise a group of layers before
fine-tuning, to measure how much of the transfer those pretrained layers carry.

A group names layers of the encoder: ``"all"``, one layer ``"3"`` or a range ``"1-2"``, ``"7-9"``.
Layers are the 1-based Transformer layers; ``0`` is the embedding layer, so ``"0-1"`` is the
embeddings and layer 1 (an experiment the paper does not run: its Table 2 heading "Δ0-1" means
layers 1-2, docs/muller.md) and ``"all"`` is ``"0-{layers}"``.

The parameters are drawn again explicitly with the model's own initialisation rules (never by
skipping weight loading, which would depend on how a checkpoint happens to be stored):

* ``HFEncoder`` (BERT's ``_init_weights``): Linear and Embedding weights N(0, initializer_range),
  the padding row zero, biases zero, LayerNorm weight 1 and bias 0;
* ``MLMEncoder`` (its ``reset_parameters``): Linear weights N(0, 0.02), Embedding weights
  N(0, dim^-1/2) with the padding row zero, biases zero, LayerNorm 1 and 0. Layer i is the i-th
  layer of ``layers_for(lang)``; where it is language-specific (``sep_layers``), every language's
  copy is drawn again. Layer 0 is every embedding owner plus the language embeddings.

That is scheme ``bert`` (:data:`BERT`), the default. Scheme ``pytorch_default``
(:data:`PYTORCH_DEFAULT`) draws what PyTorch's own constructors give, whatever the model: Linear
weights and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (``nn.Linear.reset_parameters``: Kaiming
uniform with a = sqrt(5)), Embedding weights N(0, 1) with the padding row zero, LayerNorm 1 and 0.
That is what the layers re-initialised by Muller et al.'s released RANDOM-INIT code hold: it skips
loading them under transformers 4.10's ``_fast_init``, which then initialises only the modules
whose weights the checkpoint lacks (docs/muller.md).

Not in any group: BERT's pooler and the masked-LM heads (MLMEncoder's ``output_bias``, the tied
softmax's bias). They are not part of the encoder that fine-tuning reads: the task heads sit on
the hidden states.

Draws come from a ``torch.Generator`` of their own, on the CPU, so a group and a seed give the same
weights whatever the global RNG state and the device.
"""

from __future__ import annotations

import copy
import math
import re

import numpy as np
import torch
from torch import nn

from xling.model.encoder import MLMEncoder

ALL = "all"
BERT = "bert"  # the model's own initialisation rules (BERT's N(0, initializer_range))
PYTORCH_DEFAULT = "pytorch_default"  # PyTorch's constructors' (Muller et al.'s released code)
SCHEMES = (BERT, PYTORCH_DEFAULT)
_RANDOM_ENCODER = 0x52414E44  # the random encoders' stream ("RAND")
_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def parse_group(name: str, layers: int) -> tuple[int, ...]:
    """The layer indices of group ``name`` in a model of ``layers`` Transformer layers (0 is the
    embedding layer), ascending. Raises ValueError naming the group when it is not one."""
    if name == ALL:
        return tuple(range(layers + 1))
    match = _RANGE.fullmatch(name) if isinstance(name, str) else None
    if match is None:
        raise ValueError(
            f"RANDOM-INIT group {name!r} is not 'all', a layer ('3') or a range of layers ('1-2'); "
            "layers count from 1 and 0 is the embedding layer"
        )
    first = int(match[1])
    last = first if match[2] is None else int(match[2])
    if first > last:
        raise ValueError(f"RANDOM-INIT group {name!r} is an empty range: write it as low-high")
    if last > layers:
        raise ValueError(
            f"RANDOM-INIT group {name!r} names layer {last}, but the model has {layers} layers "
            f"(1 to {layers}; 0 is the embedding layer)"
        )
    return tuple(range(first, last + 1))


def _mlm_parts(encoder: MLMEncoder, layer: int) -> list[nn.Module]:
    if layer == 0:
        parts: list[nn.Module] = []
        for owner in encoder.embeddings.values():
            parts += [owner.tokens, owner.norm]  # output_bias: the MLM head's
            if not encoder.config.sinusoidal_positions:  # a fixed table is no learned weight
                parts.append(owner.positions)
        if encoder.language_embeddings is not None:
            parts.append(encoder.language_embeddings)
        return parts
    return [encoder.layers_for(lang)[layer - 1] for lang in encoder.config.languages]


def _hf_parts(encoder, layer: int) -> list[nn.Module]:
    return [encoder.embedding_module if layer == 0 else encoder.transformer_layers[layer - 1]]


def _draw(tensor: torch.Tensor, std: float, generator: torch.Generator) -> None:
    values = torch.empty(tensor.shape, dtype=torch.float32).normal_(0.0, std, generator=generator)
    tensor.copy_(values)


def _draw_uniform(tensor: torch.Tensor, bound: float, generator: torch.Generator) -> None:
    values = torch.empty(tensor.shape, dtype=torch.float32).uniform_(
        -bound, bound, generator=generator
    )
    tensor.copy_(values)


def _initialize(
    module: nn.Module,
    linear_std: float,
    embedding_std: float,
    generator: torch.Generator,
    scheme: str = BERT,
) -> set[int]:
    """Draw the Linear, Embedding and LayerNorm parameters under ``module`` (``scheme``
    :data:`PYTORCH_DEFAULT`: as PyTorch's constructors, the stds unused); their ids."""
    done: set[int] = set()
    for sub in module.modules():
        if isinstance(sub, nn.Linear) and scheme == PYTORCH_DEFAULT:
            bound = 1.0 / math.sqrt(sub.in_features) if sub.in_features > 0 else 0.0
            _draw_uniform(sub.weight, bound, generator)  # kaiming_uniform_(a=sqrt(5))
            if sub.bias is not None:
                _draw_uniform(sub.bias, bound, generator)
        elif isinstance(sub, nn.Linear):
            _draw(sub.weight, linear_std, generator)
            if sub.bias is not None:
                sub.bias.zero_()
        elif isinstance(sub, nn.Embedding):
            _draw(sub.weight, 1.0 if scheme == PYTORCH_DEFAULT else embedding_std, generator)
            if sub.padding_idx is not None:
                sub.weight[sub.padding_idx].zero_()
        elif isinstance(sub, nn.LayerNorm):
            sub.weight.fill_(1.0)
            sub.bias.zero_()
        else:
            continue
        done |= {id(p) for p in sub.parameters(recurse=False)}
    left = [n for n, p in module.named_parameters() if id(p) not in done]
    if left:
        raise TypeError(f"RANDOM-INIT has no initialisation rule for parameters {left}")
    return done


@torch.no_grad()
def reinitialize(encoder: nn.Module, group: str, seed: int, scheme: str = BERT) -> list[str]:
    """Re-initialise the parameters of ``group`` (see :func:`parse_group`) in place, drawn from a
    generator seeded with ``seed`` by ``scheme`` (:data:`SCHEMES`: the model's own rules, or
    PyTorch's constructors'); returns their names, in ``named_parameters`` order.

    Every other parameter is left bit for bit as it was.
    """
    from xling.model.hf import HFEncoder  # no transformers import: the adapter module is light

    if scheme not in SCHEMES:
        raise ValueError(f"RANDOM-INIT scheme {scheme!r}: expected one of {', '.join(SCHEMES)}")
    if isinstance(encoder, MLMEncoder):
        parts, linear_std, embedding_std = _mlm_parts, 0.02, encoder.config.dim**-0.5
    elif isinstance(encoder, HFEncoder):
        std = encoder.config.initializer_range
        parts, linear_std, embedding_std = _hf_parts, std, std
    else:
        raise TypeError(f"RANDOM-INIT supports MLMEncoder and HFEncoder, not {type(encoder)}")
    generator = torch.Generator().manual_seed(seed)
    touched: set[int] = set()
    seen: set[int] = set()
    for layer in parse_group(group, encoder.config.layers):
        for module in parts(encoder, layer):
            if id(module) not in seen:  # a shared layer is listed once per language
                seen.add(id(module))
                touched |= _initialize(module, linear_std, embedding_std, generator, scheme)
    return [name for name, param in encoder.named_parameters() if id(param) in touched]


def random_like(encoder: nn.Module, seed: int) -> nn.Module:
    """A randomly initialised encoder of ``encoder``'s architecture (the lower bound of the CKA
    analyses), drawn from a stream of its own (:func:`random_encoder_seed`): pretraining builds
    its model under ``torch.manual_seed(seed)``, and a bound drawn under the same seed would be
    the trained model's own starting weights, not an unrelated encoder. An MLMEncoder is built
    afresh; any other encoder is copied and drawn again whole (group ``"all"``)."""
    stream = random_encoder_seed(seed)
    if isinstance(encoder, MLMEncoder):
        torch.manual_seed(stream)
        return MLMEncoder(encoder.config)
    fresh = copy.deepcopy(encoder)
    reinitialize(fresh, ALL, stream)
    return fresh


def random_encoder_seed(seed: int) -> int:
    """The seed of the random encoders drawn for ``seed``: fixed, and apart from ``seed`` itself."""
    return int(np.random.SeedSequence([seed, _RANDOM_ENCODER]).generate_state(1)[0])
