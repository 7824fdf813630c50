"""One loader for both encoder implementations (:mod:`xling.model.interface`).

A model is named by a directory or a hub id:

* a directory whose ``config.json`` is an :class:`EncoderConfig` (no ``model_type``), with
  ``model.safetensors`` and ``tokenizer/``, as :func:`xling.model.save_pretrained` writes them:
  the study's own :class:`MLMEncoder` and :class:`~xling.vocab.SubwordTokenizer`;
* a directory written by ``transformers``' ``save_pretrained`` (its ``config.json`` has
  ``model_type``) or a hub id such as ``bert-base-multilingual-cased``: :class:`HFEncoder` and
  :class:`HFTokenizer`.

Fine-tuning and the analyses load through here, so they work on either without knowing which.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from xling.base.fileio import file_stamp
from xling.model.config import EncoderConfig
from xling.model.encoder import MLMEncoder
from xling.model.io import (
    CONFIG_NAME,
    TOKENIZER_DIR,
    WEIGHTS_NAME,
    load_pretrained,
    save_pretrained,
)

XLING, TRANSFORMERS = "xling", "transformers"
# The weights a transformers directory may hold, in the order from_pretrained looks for them.
_HF_WEIGHTS = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


def encoder_kind(model: str | Path) -> str:
    """``"xling"`` or ``"transformers"``: which implementation ``model`` (a directory or a hub
    id) is. A path that does not exist and cannot be a hub id is an error here, not a download."""
    path = Path(model)
    if path.is_dir():
        config = path / CONFIG_NAME
        if not config.exists():
            raise FileNotFoundError(
                f"{config} is missing: {path} is not a model directory (one written by "
                "xling.model.save_pretrained or by transformers' save_pretrained)"
            )
        return TRANSFORMERS if "model_type" in json.loads(config.read_text()) else XLING
    if path.exists() or not _HUB_ID.fullmatch(str(model)):
        raise FileNotFoundError(
            f"{model} is neither a model directory nor a hub id (such as "
            "bert-base-multilingual-cased); rerun the rule that writes it"
        )
    return TRANSFORMERS


def load_encoder_config(model: str | Path):
    """The config of ``model`` (an :class:`EncoderConfig` or an ``HFEncoderConfig``), without
    loading weights: enough to check a job before anything heavy is read."""
    if encoder_kind(model) == XLING:
        return EncoderConfig.load(Path(model) / CONFIG_NAME)
    from xling.model.hf import load_hf_config

    return load_hf_config(model)


def load_encoder(model: str | Path, device: str | torch.device = "cpu"):
    """The encoder of ``model``: an :class:`MLMEncoder` or an ``HFEncoder``."""
    if encoder_kind(model) == XLING:
        return load_pretrained(model, device)
    from xling.model.hf import load_hf_encoder

    return load_hf_encoder(model, device)


def load_encoder_tokenizer(model: str | Path):
    """The tokenizer saved with ``model``: ``model/tokenizer`` (a SubwordTokenizer) for ours, the
    transformers tokenizer (as an ``HFTokenizer``) otherwise."""
    if encoder_kind(model) == XLING:
        from xling.vocab import SubwordTokenizer  # the vocab stage's package; imported when needed

        return SubwordTokenizer.load(Path(model) / TOKENIZER_DIR)
    from xling.model.hf import load_hf_tokenizer

    return load_hf_tokenizer(model)


def model_stamp(model: str | Path) -> list:
    """What identifies ``model``'s weights for resuming a job: the weight file's resolved path,
    size and mtime; for a hub id, the id (its cached revision is not tracked)."""
    kind, path = encoder_kind(model), Path(model)
    if kind == XLING:
        return file_stamp(path / WEIGHTS_NAME)
    if not path.is_dir():
        return ["hub", str(model)]
    for name in _HF_WEIGHTS:
        if (path / name).exists():
            return file_stamp(path / name)
    raise FileNotFoundError(f"{path} has no weights ({', '.join(_HF_WEIGHTS)})")


def save_encoder(encoder, out_dir: str | Path, tokenizer) -> Path:
    """Write ``encoder`` and ``tokenizer`` to ``out_dir`` atomically, in the format its loader
    reads (:func:`load_encoder` and :func:`load_encoder_tokenizer` give them back)."""
    if isinstance(encoder, MLMEncoder):
        return save_pretrained(encoder, out_dir, tokenizer=tokenizer)
    from xling.model.hf import save_hf_encoder

    return save_hf_encoder(encoder, out_dir, tokenizer)
