"""The masked-LM encoder shared by pretraining, fine-tuning and analysis."""

from xling.model.config import EncoderConfig
from xling.model.encoder import EncoderOutput, MLMEncoder
from xling.model.io import load_pretrained, save_pretrained

__all__ = ["EncoderConfig", "EncoderOutput", "MLMEncoder", "load_pretrained", "save_pretrained"]
