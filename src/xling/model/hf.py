"""A ``transformers`` BERT-like encoder (mBERT) behind the interface of :class:`MLMEncoder`.

Muller et al. (2021) fine-tune and probe mBERT; this adapter lets the fine-tuning heads, grids,
selection and writers of :mod:`xling.finetune` and the analyses of :mod:`xling.analysis` run on it
unchanged. :class:`HFEncoder` gives ``forward(input_ids, lang, attention_mask, output_hidden_states,
num_layers)`` and an :class:`~xling.model.encoder.EncoderOutput`; ``lang`` is accepted and ignored
(mBERT has no language-specific parts). :class:`HFTokenizer` gives the ``Tokenizer`` protocol of
:mod:`xling.finetune.encoding` over the model's WordPiece tokenizer, with BERT's framing
``[CLS] ... [SEP]`` (``start_id`` = ``[CLS]``, ``eos_id`` = ``[SEP]``).

``transformers`` is imported only when a model or tokenizer is loaded: it takes seconds, which
every fine-tuning job of the study's own models would otherwise pay.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from xling.base.atomic import atomic_directory
from xling.model.encoder import EncoderOutput

log = logging.getLogger(__name__)

# RoBERTa-style embeddings number positions from padding_idx + 1, so two rows are never used.
_POSITIONS_AFTER_PADDING = {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert"}


@dataclass(frozen=True)
class HFEncoderConfig:
    """What callers read from an encoder's config, taken from a ``transformers`` config."""

    name_or_path: str
    model_type: str
    dim: int
    layers: int
    pad_id: int
    max_positions: int
    dropout: float
    vocab_size: int
    initializer_range: float
    # No language-specific parts, and which languages a checkpoint was pretrained on is not in its
    # config: an empty tuple, so code iterating over a model's languages finds none rather than a
    # made-up list. ``accepts_language`` answers the question callers actually ask.
    languages: tuple[str, ...] = ()

    def accepts_language(self, lang: str) -> bool:
        """Always: one set of parameters serves every language (``lang`` routes nothing)."""
        return True

    @classmethod
    def from_transformers(cls, config, name_or_path: str | Path) -> HFEncoderConfig:
        def field(*names):
            for name in names:
                value = getattr(config, name, None)
                if value is not None:
                    return value
            raise ValueError(
                f"{name_or_path}: its config has no {' / '.join(names)}; "
                "only BERT-like encoders (BERT, mBERT, XLM-R) are supported"
            )

        pad_id = field("pad_token_id")
        positions = field("max_position_embeddings")
        if config.model_type in _POSITIONS_AFTER_PADDING:
            positions -= pad_id + 1
        return cls(
            name_or_path=str(name_or_path),
            model_type=config.model_type,
            dim=field("hidden_size"),
            layers=field("num_hidden_layers"),
            pad_id=pad_id,
            max_positions=positions,
            dropout=field("hidden_dropout_prob"),
            vocab_size=field("vocab_size"),
            initializer_range=field("initializer_range"),
        )


def _bidirectional_mask_function():
    """transformers' builder of the attention mask its layers take, or None (transformers < 4.56,
    whose layers want another mask format: :class:`HFEncoder` then runs the whole model)."""
    try:
        from transformers.masking_utils import create_bidirectional_mask
    except ImportError:
        return None
    return create_bidirectional_mask


class HFEncoder(nn.Module):
    """A ``transformers`` encoder model (``AutoModel``) that looks like :class:`MLMEncoder`.

    ``separator_id`` (the tokenizer's ``[SEP]``) gives pairs BERT's segment ids: tokens after the
    first ``[SEP]`` are segment B, as the tokenizer's own pair encoding marks them; without it (or
    for models with one segment type, XLM-R) every token is segment A.
    """

    def __init__(self, model: nn.Module, config: HFEncoderConfig, separator_id: int | None = None):
        super().__init__()
        self.model = model
        self.config = config
        segment_types = getattr(model.config, "type_vocab_size", 1) or 1
        self.separator_id = separator_id if segment_types > 1 else None

    # ------------------------------------------------------------------ structure
    @property
    def embedding_module(self) -> nn.Module:
        """The embedding layer (L0): word, position and segment embeddings and their LayerNorm."""
        return self.model.embeddings

    @property
    def transformer_layers(self) -> nn.ModuleList:
        """The Transformer layers, layer i (1-based) at index i - 1."""
        return self.model.encoder.layer

    def language_specific_parameters(self) -> Iterator[tuple[str, nn.Parameter]]:
        """None: every parameter is shared by all languages, so fine-tuning freezes nothing."""
        return iter(())

    def is_language_specific(self, parameter_name: str) -> bool:
        return False

    def num_parameters(self, language_specific: bool | None = None) -> int:
        if language_specific:
            return 0
        return sum(p.numel() for p in self.parameters())

    # ------------------------------------------------------------------ forward
    def segment_ids(self, input_ids: torch.Tensor, keep: torch.Tensor | None) -> torch.Tensor:
        """0 up to and including the first ``[SEP]``, 1 after it (padding: 0)."""
        if self.separator_id is None:
            return torch.zeros_like(input_ids)
        is_separator = (input_ids == self.separator_id).long()
        segments = (is_separator.cumsum(1) - is_separator).clamp(max=1)
        return segments if keep is None else segments * keep

    def forward(
        self,
        input_ids: torch.Tensor,
        lang: str,
        attention_mask: torch.Tensor | None = None,
        output_hidden_states: bool = False,
        num_layers: int | None = None,
    ) -> EncoderOutput:
        """Encode a batch; ``lang`` is ignored. Same contract as :meth:`MLMEncoder.forward`.

        ``num_layers`` k runs the embeddings and the first k layers only (when transformers
        exposes the mask its layers take; else the whole model, sliced), so ``last_hidden_state``
        is hidden state k. Padded positions are left as the model computes them (MLMEncoder zeroes
        them); no caller reads them.
        """
        del lang  # one set of parameters for every language
        total = self.config.layers
        count = total if num_layers is None else num_layers
        if not 0 <= count <= total:
            raise ValueError(f"num_layers={num_layers} is outside 0..{total}, this model's layers")
        length = input_ids.shape[1]
        if length > self.config.max_positions:
            raise ValueError(
                f"sequence of {length} tokens exceeds max_positions={self.config.max_positions}"
            )
        keep = None if attention_mask is None else attention_mask.to(torch.long)
        segments = self.segment_ids(input_ids, keep)
        make_mask = _bidirectional_mask_function()
        if make_mask is None or not hasattr(self.model, "embeddings"):
            output = self.model(
                input_ids=input_ids,
                attention_mask=keep,
                token_type_ids=segments,
                output_hidden_states=True,
            )
            states = tuple(output.hidden_states[: count + 1])
            return EncoderOutput(states[-1], states if output_hidden_states else None)
        x = self.model.embeddings(input_ids=input_ids, token_type_ids=segments)
        mask = make_mask(config=self.model.config, inputs_embeds=x, attention_mask=keep)
        hidden = [x] if output_hidden_states else None
        for layer in self.transformer_layers[:count]:
            x = layer(x, mask)
            x = x[0] if isinstance(x, tuple) else x  # a tuple before transformers 5
            if hidden is not None:
                hidden.append(x)
        return EncoderOutput(x, tuple(hidden) if hidden is not None else None)


class HFTokenizer:
    """The fine-tuning ``Tokenizer`` protocol over a ``transformers`` tokenizer (WordPiece).

    Words given by a dataset are tokenized one by one without special tokens (Muller et al. A.1.4:
    the datasets' own word segmentation), raw sentences as a whole; the tokenizer's own
    normalisation (casing, accents) applies as in pretraining. ``lang`` is ignored.
    """

    def __init__(self, tokenizer):
        self.hf = tokenizer
        self.pad_id = tokenizer.pad_token_id
        self.unk_id = tokenizer.unk_token_id
        separator = tokenizer.sep_token_id
        self.eos_id = tokenizer.eos_token_id if separator is None else separator
        start = tokenizer.cls_token_id
        self.start_id = tokenizer.bos_token_id if start is None else start
        missing = [
            name
            for name in ("pad_id", "unk_id", "eos_id", "start_id")
            if getattr(self, name) is None
        ]
        if missing:
            raise ValueError(
                f"tokenizer {tokenizer.name_or_path!r} lacks the special tokens for {missing}: "
                "a BERT-like tokenizer ([PAD] [UNK] [CLS] [SEP]) is needed"
            )

    @property
    def vocab_size(self) -> int:
        return len(self.hf)

    def _ids(self, texts: list[str]) -> list[list[int]]:
        # verbose=False: no warning about inputs longer than the model; callers cut them.
        return self.hf(texts, add_special_tokens=False, verbose=False)["input_ids"]

    def encode_words(self, words: Sequence[str], lang: str) -> list[list[int]]:
        """One id list per word; a word with no subword (whitespace) maps to ``[unk_id]``."""
        if not words:
            return []
        return [ids or [self.unk_id] for ids in self._ids(list(words))]

    def encode_line(self, raw_line: str, lang: str) -> list[int]:
        """Ids of a raw sentence, no special tokens."""
        return self._ids([raw_line])[0]

    def encode_tokenized(self, line: str, lang: str) -> list[int]:
        """Ids of an already tokenized line: BERT's own splitting leaves its tokens as they are."""
        return self.encode_line(line, lang)

    def save(self, directory: str | Path) -> None:
        self.hf.save_pretrained(str(directory))


# ----------------------------------------------------------------------------- loading, saving
def load_hf_config(name_or_path: str | Path) -> HFEncoderConfig:
    """The config of a model directory or hub id, without loading weights."""
    from transformers import AutoConfig

    return HFEncoderConfig.from_transformers(
        AutoConfig.from_pretrained(str(name_or_path)), name_or_path
    )


def load_hf_tokenizer(name_or_path: str | Path) -> HFTokenizer:
    from transformers import AutoTokenizer

    return HFTokenizer(AutoTokenizer.from_pretrained(str(name_or_path)))


def load_hf_encoder(name_or_path: str | Path, device: str | torch.device = "cpu") -> HFEncoder:
    """``AutoModel.from_pretrained`` wrapped as an :class:`HFEncoder` (pooler kept, unused, so
    that a saved fine-tuned model holds every weight it was loaded with)."""
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(name_or_path))
    config = HFEncoderConfig.from_transformers(model.config, name_or_path)
    try:
        separator = load_hf_tokenizer(name_or_path).eos_id
    except (OSError, ValueError) as error:
        log.warning("%s: no tokenizer (%s); every token gets segment 0", name_or_path, error)
        separator = None
    return HFEncoder(model, config, separator).to(device)


def save_hf_encoder(encoder: HFEncoder, out_dir: str | Path, tokenizer: HFTokenizer) -> Path:
    """``save_pretrained`` of the model and its tokenizer into ``out_dir``, atomically; loads back
    with :func:`load_hf_encoder` (or ``AutoModel``) and :func:`load_hf_tokenizer`."""
    with atomic_directory(out_dir) as tmp:
        encoder.model.save_pretrained(str(tmp))
        tokenizer.save(tmp)
    return Path(out_dir)
