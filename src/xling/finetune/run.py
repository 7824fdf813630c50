"""One fine-tuning job: one (model, task, grid point), zero-shot from the source language.

Wu, Conneau et al. 2020, section 3.2: fine-tune on English, select the epoch on English dev, test
every language with no target-language training; language-specific parameters stay frozen (4.3),
and each language goes through its own language-specific parts at test time.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from xling.atomic import write_json
from xling.finetune import checkpoint
from xling.finetune.encoding import Tokenizer
from xling.finetune.grid import hp_id, normalize_hp
from xling.finetune.tasks import Task, TaskModel, make_task
from xling.finetune.training import (
    batches_per_epoch,
    epoch_order,
    make_scheduler,
    predict,
    train_epoch,
)
from xling.model import EncoderConfig, MLMEncoder, load_pretrained

log = logging.getLogger(__name__)
WARMUP_FRACTION = 0.1  # paper, 3.2: warm up over the first 10% of batches (NER, parsing)


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


def freeze_language_specific(encoder: MLMEncoder) -> list[str]:
    """Stop gradients into language-specific parameters (paper, 4.3); returns their names."""
    frozen = []
    for name, param in encoder.language_specific_parameters():
        param.requires_grad_(False)
        frozen.append(name)
    return frozen


def load_tokenizer(model_dir: Path) -> Tokenizer:
    from xling.vocab import SubwordTokenizer  # the vocab stage's package; imported when needed

    return SubwordTokenizer.load(model_dir / "tokenizer")


def _stamp(path: Path) -> list:
    info = os.stat(path)
    return [str(Path(path).resolve()), info.st_size, info.st_mtime_ns]


def _check_tokenizer(tokenizer: Tokenizer, config: EncoderConfig, model_dir: Path) -> None:
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


def _read_all(
    spec: Task, data: TaskData, source_lang: str, max_length: int, eval_length: int
) -> tuple[Split, dict[str, Split], dict[str, Split]]:
    """Read, check and encode every file up front, so bad input fails in seconds, not hours."""
    train = spec.read(data.train, source_lang, "train")
    spec.fit_labels(train)
    dev = {lang: spec.read(path, lang, "dev") for lang, path in data.dev.items()}
    test = {lang: spec.read(path, lang, "test") for lang, path in data.test.items()}
    return (
        Split(source_lang, train, spec.encode(train, source_lang, max_length)),
        {lang: Split(lang, ex, spec.encode(ex, lang, eval_length)) for lang, ex in dev.items()},
        {lang: Split(lang, ex, spec.encode(ex, lang, eval_length)) for lang, ex in test.items()},
    )


def _evaluate(spec: Task, model: TaskModel, split: Split, batch_size: int, device) -> tuple:
    predictions = predict(spec, model, split.items, split.lang, batch_size, device)
    return spec.score(split.examples, predictions), predictions


def _fit(
    spec: Task,
    model: TaskModel,
    train: Split,
    dev: Split,
    hp: dict,
    *,
    epochs: int,
    epoch_size: int | None,
    seed: int,
    eval_batch_size: int,
    device: torch.device,
    work_dir: Path,
    fingerprint: dict,
) -> tuple[list[dict], int]:
    """Train all epochs (or the ones a killed run left), scoring ``dev`` after each.

    Returns the per-epoch dev history and the best epoch (ties: the earliest), whose weights are
    in ``work_dir``.
    """
    optimizer = torch.optim.Adam(spec.parameter_groups(model, hp))
    steps = epochs * batches_per_epoch(len(train.items), hp["batch_size"], epoch_size)
    scheduler = make_scheduler(optimizer, spec.lr_schedule, steps, WARMUP_FRACTION)
    work_dir.mkdir(parents=True, exist_ok=True)
    state = checkpoint.load_state(work_dir, fingerprint)
    history: list[dict] = []
    best_epoch = 0
    if state is not None:
        checkpoint.load_epoch(work_dir, model, state["epoch"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        if device.type == "cuda" and state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(state["cuda_rng"], device)
        history, best_epoch = state["history"], state["best_epoch"]
        log.info("resuming after epoch %d from %s", state["epoch"], work_dir)
    for epoch in range(len(history) + 1, epochs + 1):
        tick = time.perf_counter()
        order = epoch_order(len(train.items), epoch, seed, epoch_size)
        batch_size = hp["batch_size"]
        args = (train.items, order, batch_size, train.lang, optimizer, scheduler, device)
        loss = train_epoch(spec, model, *args)
        score, _ = _evaluate(spec, model, dev, eval_batch_size, device)
        history.append({"epoch": epoch, "dev": {dev.lang: score}})
        if not best_epoch or score > history[best_epoch - 1]["dev"][dev.lang]:
            best_epoch = epoch
        checkpoint.save_epoch(work_dir, model, epoch)
        state = {"fingerprint": fingerprint, "epoch": epoch, "best_epoch": best_epoch}
        state |= {"history": history, "rng": torch.get_rng_state()}
        state |= {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}
        if device.type == "cuda":
            state["cuda_rng"] = torch.cuda.get_rng_state(device)
        checkpoint.save_state(work_dir, state)
        checkpoint.prune(work_dir, {epoch, best_epoch})
        rate = len(order) / (time.perf_counter() - tick)
        log.info(
            "epoch %d/%d: train loss %.4f, %s dev %s %.4f (%.0f train examples/s)",
            *(epoch, epochs, loss, dev.lang, spec.metric, score, rate),
        )
    return history, best_epoch


def run_finetune(
    task: str,
    model_dir: str | Path,
    data: TaskData,
    hp: Mapping[str, object],
    out_dir: str | Path,
    work_dir: str | Path,
    *,
    epochs: int,
    seed: int,
    max_length: int,
    source_lang: str = "en",
    epoch_size: int | None = None,
    threads: int = 1,
    eval_batch_size: int = 64,
    head_dropout: float | None = None,
    ner_labels: list[str] | None = None,
    parser_arc_dim: int = 512,
    parser_label_dim: int = 128,
    exclude_punct: bool = False,
    pair: str = "",
    variant: str = "",
    device: str | None = None,
    tokenizer: Tokenizer | None = None,
    keep_work_dir: bool = False,
) -> dict:
    """Fine-tune ``model_dir`` on ``task`` with grid point ``hp``; write metrics and predictions.

    Trains ``epochs`` epochs on ``data.train`` (``source_lang``), scores ``source_lang`` dev after
    each, keeps the best epoch (ties: the earliest), then evaluates it on dev and test of every
    language in ``data``. Writes ``out_dir/predictions.{lang}.{ext}`` (test) and, last,
    ``out_dir/metrics.json`` (docs/contracts.md section 5), all atomically; returns the metrics.
    Resumable state lives in ``work_dir``: a rerun after a kill continues after the last epoch.

    ``max_length`` limits training inputs (subwords, boundaries included); evaluation uses the
    model's ``max_positions``. ``epoch_size`` (examples per epoch, None = one pass) reproduces
    XLM's XNLI epochs. ``head_dropout`` None takes the encoder's dropout. ``ner_labels`` None
    takes the tags of the training file. ``parser_*_dim`` are the biaffine MLP sizes;
    ``exclude_punct`` scores LAS without PUNCT/SYM words. ``pair``/``variant`` are copied into
    metrics.json. ``device`` None picks CUDA when present. ``tokenizer`` None loads
    ``model_dir/tokenizer``. Once metrics.json is written the work directory is deleted (a paper
    study has over a thousand jobs) unless ``keep_work_dir``; it then holds the weights of the
    last and of the selected epoch.
    """
    started = time.perf_counter()
    torch.set_num_threads(threads)
    model_dir, out_dir, work_dir = Path(model_dir), Path(out_dir), Path(work_dir)
    hp = normalize_hp(task, hp)
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    if source_lang not in data.dev:
        raise ValueError(f"data.dev has no {source_lang} file, which epoch selection needs")
    config = EncoderConfig.load(model_dir / "config.json")
    missing = sorted(({source_lang} | set(data.dev) | set(data.test)) - set(config.languages))
    if missing:
        raise ValueError(f"{model_dir} has no parts for language(s) {missing}: {config.languages}")
    if not 3 <= max_length <= config.max_positions:
        raise ValueError(f"max_length {max_length} must lie in 3..{config.max_positions}")
    run_device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    tokenizer = tokenizer or load_tokenizer(model_dir)
    _check_tokenizer(tokenizer, config, model_dir)
    spec = make_task(
        task,
        tokenizer,
        ner_labels=ner_labels,
        parser_arc_dim=parser_arc_dim,
        parser_label_dim=parser_label_dim,
        exclude_punct=exclude_punct,
    )
    train, dev, test = _read_all(spec, data, source_lang, max_length, config.max_positions)

    encoder = load_pretrained(model_dir)
    torch.manual_seed(seed)
    dropout = config.dropout if head_dropout is None else head_dropout
    model = TaskModel(encoder, spec.build_head(config.dim, dropout))
    frozen = freeze_language_specific(encoder)
    model.to(run_device)
    log.info(
        "%s %s on %s: %d train examples, %d frozen tensors",
        *(task, hp_id(hp), run_device, len(train.items), len(frozen)),
    )
    settings = {"task": task, "hp": hp, "seed": seed, "epochs": epochs, "epoch_size": epoch_size}
    settings |= {"max_length": max_length, "head_dropout": dropout, "labels": spec.labels}
    settings |= {"source_lang": source_lang, "metric": spec.metric}
    settings |= {"parser_dims": [parser_arc_dim, parser_label_dim]}
    settings |= {"model": _stamp(model_dir / "model.safetensors"), "train": _stamp(data.train)}
    settings |= {"dev": _stamp(data.dev[source_lang])}
    history, best_epoch = _fit(
        spec,
        model,
        train,
        dev[source_lang],
        hp,
        epochs=epochs,
        epoch_size=epoch_size,
        seed=seed,
        eval_batch_size=eval_batch_size,
        device=run_device,
        work_dir=work_dir,
        fingerprint=settings,
    )

    checkpoint.load_epoch(work_dir, model, best_epoch)
    dev_scores = {
        lang: _evaluate(spec, model, split, eval_batch_size, run_device)[0]
        for lang, split in dev.items()
    }
    test_scores = {}
    for lang, split in test.items():
        test_scores[lang], predictions = _evaluate(spec, model, split, eval_batch_size, run_device)
        path = out_dir / f"predictions.{lang}.{spec.prediction_extension}"
        spec.write_predictions(path, lang, split.examples, predictions)
    metrics = {"task": task, "pair": pair, "variant": variant, "hp": hp, "hp_id": hp_id(hp)}
    metrics |= {"metric": spec.metric, "selected_epoch": best_epoch, "dev": dev_scores}
    metrics |= {"test": test_scores, "epochs": history}
    write_json(out_dir / "metrics.json", metrics)
    if not keep_work_dir:
        checkpoint.clear(work_dir)
        with contextlib.suppress(OSError):
            work_dir.rmdir()  # only if nothing else lives there
    seconds = time.perf_counter() - started
    log.info("%s %s done in %.1f s: test %s", task, hp_id(hp), seconds, test_scores)
    return metrics
