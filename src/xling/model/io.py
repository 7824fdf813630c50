"""Save and load encoders as ``config.json`` + ``model.safetensors`` (+ the tokenizer directory)."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from xling.base.atomic import atomic_directory
from xling.model.config import EncoderConfig
from xling.model.encoder import MLMEncoder

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
TOKENIZER_DIR = "tokenizer"


def save_pretrained(
    model: MLMEncoder,
    out_dir: str | Path,
    tokenizer_dir: str | Path | None = None,
    *,
    tokenizer=None,
) -> Path:
    """Write the model directory atomically: it appears complete or not at all.

    The tokenizer directory is a copy of ``tokenizer_dir`` or written by ``tokenizer.save``
    (a ``SubwordTokenizer`` in memory, as fine-tuning holds it); at most one of them.
    """
    if tokenizer_dir is not None and tokenizer is not None:
        raise ValueError("pass tokenizer_dir or tokenizer, not both")
    with atomic_directory(out_dir) as tmp:
        model.config.save(tmp / CONFIG_NAME)
        state = {name: t.detach().cpu().contiguous() for name, t in model.state_dict().items()}
        save_file(state, str(tmp / WEIGHTS_NAME), metadata={"format": "pt"})
        if tokenizer_dir is not None:
            shutil.copytree(tokenizer_dir, tmp / TOKENIZER_DIR)
        if tokenizer is not None:
            (tmp / TOKENIZER_DIR).mkdir()
            tokenizer.save(tmp / TOKENIZER_DIR)
    return Path(out_dir)


def load_pretrained(model_dir: str | Path, device: str | torch.device = "cpu") -> MLMEncoder:
    """Load a directory written by :func:`save_pretrained`."""
    model_dir = Path(model_dir)
    config_path = model_dir / CONFIG_NAME
    if not config_path.exists():
        raise FileNotFoundError(
            f"{config_path} is missing: {model_dir} is not a model directory written by "
            "xling.model.save_pretrained (rerun the pretraining rule that produces it)"
        )
    model = MLMEncoder(EncoderConfig.load(config_path))
    state = load_file(str(model_dir / WEIGHTS_NAME), device=str(device))
    model.load_state_dict(state)
    return model.to(device)
