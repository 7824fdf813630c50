"""The masked-LM encoder shared by pretraining, fine-tuning and analysis, and the loader that also
serves ``transformers`` BERT-like encoders behind the same interface (:mod:`xling.model.interface`).
"""

from xling.model.auto import (
    encoder_kind,
    load_encoder,
    load_encoder_config,
    load_encoder_tokenizer,
    model_stamp,
    save_encoder,
)
from xling.model.config import EncoderConfig
from xling.model.encoder import EncoderOutput, MLMEncoder
from xling.model.io import load_pretrained, save_pretrained

__all__ = [
    "EncoderConfig",
    "EncoderOutput",
    "MLMEncoder",
    "encoder_kind",
    "load_encoder",
    "load_encoder_config",
    "load_encoder_tokenizer",
    "load_pretrained",
    "model_stamp",
    "save_encoder",
    "save_pretrained",
]
