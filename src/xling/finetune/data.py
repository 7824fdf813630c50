"""The files of a fine-tuning job: checked against the model before anything is read, then read
and encoded up front, so that bad input fails in seconds, not hours."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xling.finetune.encoding import Tokenizer
from xling.finetune.settings import FinetuneSettings
from xling.finetune.tasks import Task, make_task
from xling.model import load_encoder_config, load_encoder_tokenizer
from xling.model.interface import EncoderSpec


@dataclass(frozen=True)
class TaskData:
    """The files of one task: the source-language training file, dev and test files per language.

    For XNLI, dev/test of every language are the same XNLI-1.0 file (filtered by language).
    """

    train: Path
    dev: Mapping[str, Path] = field(default_factory=dict)
    test: Mapping[str, Path] = field(default_factory=dict)


@dataclass
class Split:
    """Examples of one language and split, and their encoded items."""

    lang: str
    examples: list
    items: list[dict[str, Any]]


@dataclass
class Encoded:
    """Every file of a job, read and encoded: the training file, dev and test per language."""

    train: Split
    dev: dict[str, Split]
    test: dict[str, Split]


def load_tokenizer(model_dir: Path) -> Tokenizer:
    """The tokenizer saved with the model (``model_dir/tokenizer``, or the transformers one)."""
    return load_encoder_tokenizer(model_dir)


def validate_job(
    task: str,
    model_dir: Path,
    data: TaskData | Encoded,
    settings: FinetuneSettings,
    *,
    config_section: str = "tasks",
) -> EncoderSpec:
    """Check the job against the model's config before anything is read; return that config.
    ``config_section`` is where ``settings`` come from (``tasks`` or ``muller.tasks``): a message
    names the key to change there."""
    source = settings.source_lang
    if isinstance(data, Encoded):
        dev = {split.lang for split in data.dev.values()}
        needed = dev | {split.lang for split in data.test.values()}
    else:
        dev = set(data.dev)
        needed = dev | set(data.test)
    if source not in dev:
        raise ValueError(f"data.dev has no {source} file, which epoch selection needs")
    config = load_encoder_config(model_dir)
    # The config answers whether a language can go through the model: ours need that language's
    # parts, mBERT takes any (its config has no list of them). Asking it, rather than handing
    # mBERT a make-believe container of every language, keeps `languages` a plain list.
    needed |= {source}
    missing = sorted(lang for lang in needed if not config.accepts_language(lang))
    if missing:
        raise ValueError(f"{model_dir} has no parts for language(s) {missing}: {config.languages}")
    if settings.max_length > config.max_positions:
        raise ValueError(
            f"max_length {settings.max_length} exceeds the max_positions {config.max_positions} "
            f"of {model_dir}: lower config key {config_section}.{task}.max_length"
        )
    return config


def check_tokenizer(tokenizer: Tokenizer, config: EncoderSpec, model_dir: Path) -> None:
    if tokenizer.pad_id != config.pad_id:
        raise ValueError(
            f"tokenizer pad id {tokenizer.pad_id} differs from the model's {config.pad_id} "
            f"({model_dir}): use the tokenizer saved with the model"
        )
    size = getattr(tokenizer, "vocab_size", None)
    if size is not None and size > config.vocab_size:
        raise ValueError(
            f"tokenizer has {size} ids but the model {model_dir} only {config.vocab_size}: "
            "use the tokenizer saved with the model"
        )


def checked_task(
    task: str,
    tokenizer: Tokenizer,
    config: EncoderSpec,
    model_dir: Path,
    settings: FinetuneSettings,
) -> Task:
    """The task object of ``task`` (:func:`make_task`), once ``tokenizer`` is checked against the
    config of ``model_dir``."""
    check_tokenizer(tokenizer, config, model_dir)
    return make_task(task, tokenizer, settings)


def encode_files(
    spec: Task, data: TaskData, settings: FinetuneSettings, eval_length: int
) -> Encoded:
    """Read, check and encode every file up front.

    Training inputs are cut at ``settings.max_length``, evaluation inputs at ``eval_length``.
    """
    source = settings.source_lang
    train = spec.read(data.train, source, "train")
    spec.fit_labels(train)
    dev = {lang: spec.read(path, lang, "dev") for lang, path in data.dev.items()}
    test = {lang: spec.read(path, lang, "test") for lang, path in data.test.items()}
    return Encoded(
        Split(source, train, spec.encode(train, source, settings.max_length)),
        {lang: Split(lang, ex, spec.encode(ex, lang, eval_length)) for lang, ex in dev.items()},
        {lang: Split(lang, ex, spec.encode(ex, lang, eval_length)) for lang, ex in test.items()},
    )
