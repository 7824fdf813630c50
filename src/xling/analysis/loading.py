"""What the analysis jobs read and write: a saved model with its tokenizer, tables of rows."""

from __future__ import annotations

from xling.base.atomic import atomic_open
from xling.base.fileio import StrPath


def load_model_and_tokenizer(model_dir: StrPath):
    """``(model, tokenizer)`` of a model directory (ours: model.safetensors + tokenizer/; or a
    transformers encoder, a directory or hub id), through :func:`xling.model.load_encoder`."""
    from xling.model import load_encoder, load_encoder_tokenizer

    return load_encoder(model_dir), load_encoder_tokenizer(model_dir)


def write_rows_csv(path: StrPath, rows: list[dict]) -> None:
    """Rows of dicts as one csv table, atomically."""
    import pandas as pd

    with atomic_open(path) as handle:
        pd.DataFrame(rows).to_csv(handle, index=False)
