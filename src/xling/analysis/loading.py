"""What the analysis jobs read and write: a saved model with its tokenizer, tables of rows."""

from __future__ import annotations

from pathlib import Path

from xling.atomic import atomic_open
from xling.fileio import StrPath


def load_model_and_tokenizer(model_dir: StrPath):
    """``(model, tokenizer)`` of a pretrained model directory (model.safetensors + tokenizer/)."""
    from xling.model import load_pretrained
    from xling.vocab import SubwordTokenizer

    return load_pretrained(model_dir), SubwordTokenizer.load(Path(model_dir) / "tokenizer")


def write_rows_csv(path: StrPath, rows: list[dict]) -> None:
    """Rows of dicts as one csv table, atomically."""
    import pandas as pd

    with atomic_open(path) as handle:
        pd.DataFrame(rows).to_csv(handle, index=False)
