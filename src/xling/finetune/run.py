"""One fine-tuning job: one (model, task, grid point), zero-shot from the source language.

Wu, Conneau et al. 2020, section 3.2: fine-tune on English, select the epoch on English dev, test
every language with no target-language training; language-specific parameters stay frozen (4.3),
and each language goes through its own language-specific parts at test time.

The steps of a job (``validate_job``, ``encode_files``, ``fit_epochs``, ``evaluate_all``...) are
public so that other experiments that train a task head the same way reuse them rather than copy
them (``xling.analysis.transfer``: task layers over a frozen encoder's first layers).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xling import finished, joblog
from xling.atomic import write_json
from xling.fileio import file_stamp
from xling.finetune import checkpoint
from xling.finetune.encoding import Tokenizer
from xling.finetune.grid import hp_id, normalize_hp
from xling.finetune.items import TEST_ITEMS, write_test_items
from xling.finetune.metrics import ItemCounts, ratio
from xling.finetune.settings import FinetuneSettings
from xling.finetune.tasks import Task, TaskModel, make_task
from xling.finetune.training import (
    batches_per_epoch,
    epoch_order,
    group_by_length,
    make_scheduler,
    predict,
    train_epoch,
)
from xling.model import (
    load_encoder,
    load_encoder_config,
    load_encoder_tokenizer,
    model_stamp,
    save_encoder,
)
from xling.model.interface import Encoder, EncoderSpec
from xling.model.random_init import parse_group, reinitialize
from xling.optim import EagerAdam
from xling.worklock import WorkDirLock

log = logging.getLogger(__name__)
WARMUP_FRACTION = 0.1  # Wu 3.2, Muller A.1.1: warm up over the first 10% of batches (not XNLI)


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


@dataclass
class Evaluation:
    """The selected epoch's scores on dev and test per language, its test predictions, and each
    test example's numerator and denominator of the score (``Task.item_counts``)."""

    dev: dict[str, float]
    test: dict[str, float]
    test_predictions: dict[str, list]
    test_items: dict[str, ItemCounts] = field(default_factory=dict)


def freeze_language_specific(encoder: Encoder) -> list[str]:
    """Stop gradients into language-specific parameters (paper, 4.3); returns their names."""
    frozen = []
    for name, param in encoder.language_specific_parameters():
        param.requires_grad_(False)
        frozen.append(name)
    return frozen


def load_tokenizer(model_dir: Path) -> Tokenizer:
    """The tokenizer saved with the model (``model_dir/tokenizer``, or the transformers one)."""
    return load_encoder_tokenizer(model_dir)


def run_finetune(
    task: str,
    model_dir: str | Path,
    data: TaskData | None,
    hp: Mapping[str, object],
    out_dir: str | Path,
    work_dir: str | Path,
    settings: FinetuneSettings,
    *,
    threads: int = 1,
    pair: str = "",
    variant: str = "",
    device: str | None = None,
    tokenizer: Tokenizer | None = None,
    keep_work_dir: bool = False,
    random_init: str | None = None,
    save_encoder_to: str | Path | None = None,
    encoded: Encoded | None = None,
    encoded_stamp: list | None = None,
    on_selected: Callable[[TaskModel], None] | None = None,
    on_done: Callable[[dict], None] | None = None,
    config_section: str = "tasks",
) -> dict:
    """Fine-tune ``model_dir`` on ``task`` with grid point ``hp``; write metrics and predictions.

    Trains ``settings.epochs`` epochs on ``data.train`` (``settings.source_lang``), scores the
    source language's dev after each, keeps the best epoch (ties: the earliest), then evaluates it
    on dev and test of every language in ``data``. Writes ``out_dir/predictions.{lang}.{ext}``
    (test) and, last, ``out_dir/metrics.json`` (docs/contracts.md section 5), all atomically;
    returns the metrics. Resumable state lives in ``work_dir``: a rerun after a kill continues
    after the last epoch. ``pair``/``variant`` are copied into metrics.json. ``device`` None picks
    CUDA when present. ``tokenizer`` None loads ``model_dir/tokenizer``. Once metrics.json is
    written the epochs in the work directory are deleted (a paper study has over a thousand jobs)
    unless ``keep_work_dir``; it then holds the weights of the last and of the selected epoch.
    In their place stay hard links to the outputs (:mod:`xling.finished`; not with ``on_done``
    or ``on_selected``): a rerun of the same run after Snakemake deleted them puts them back.
    The job locks ``work_dir`` while it runs (:mod:`xling.worklock`): a second job on it fails
    at once.

    ``model_dir`` is one of the study's model directories or a ``transformers`` encoder (a
    directory or a hub id such as ``bert-base-multilingual-cased``): see
    :func:`xling.model.load_encoder`. ``random_init`` names a group of layers re-initialised after
    loading, before the head is built (RANDOM-INIT, :mod:`xling.model.random_init`; drawn with
    ``settings.seed``); it is part of the resume fingerprint and written to metrics.json
    (``"random_init"``: the group or null). ``save_encoder_to`` receives the selected epoch's
    encoder and tokenizer, in the format :func:`xling.model.load_encoder` reads, before
    metrics.json (the representation analyses of fine-tuned models read it).

    ``encoded`` (with ``data`` None) gives the files already read and encoded, e.g. a cache that
    every run of a grid shares (:mod:`xling.muller.encoded`); its test splits may be keyed by any
    name, each split knowing its language. ``encoded_stamp`` then stands for the input files in the
    resume fingerprint. ``on_selected`` is called with the model at its selected epoch before any
    output is written (e.g. to measure its representations); ``on_done`` with the metrics once every
    output is written, before the work directory goes (a caller's own record that the run is
    finished: a kill before it then resumes after the last epoch). ``config_section``: the config
    section ``settings`` come from (``tasks``, Muller et al.'s ``muller.tasks``), for messages.
    """
    started = time.perf_counter()
    torch.set_num_threads(threads)
    model_dir, out_dir, work_dir = Path(model_dir), Path(out_dir), Path(work_dir)
    # First, so that a second trainer on the same work directory stops before reading anything.
    # The run's log lines also go to the work directory's history (xling.joblog): Snakemake
    # deletes the rule's log before a retry, which resumes after the last epoch.
    with WorkDirLock(work_dir, "fine-tuning"), joblog.recording(work_dir):
        hp = normalize_hp(task, hp)
        if (data is None) == (encoded is None):
            raise ValueError("give exactly one of data (files) and encoded (already encoded)")
        given = data if encoded is None else encoded
        config = validate_job(task, model_dir, given, settings, config_section=config_section)
        if random_init is not None:
            parse_group(random_init, config.layers)  # a bad group stops before any reading
        run_device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        tokenizer = tokenizer or load_tokenizer(model_dir)
        check_tokenizer(tokenizer, config, model_dir)
        spec = make_task(task, tokenizer, settings)
        if encoded is None:
            encoded = encode_files(spec, data, settings, config.max_positions)
        else:
            spec.fit_labels(encoded.train.examples)
        model, frozen = _build_model(spec, model_dir, config, settings, run_device, random_init)
        log.info(
            "%s %s on %s: %d train examples, %d frozen tensors",
            *(task, hp_id(hp), run_device, len(encoded.train.items), len(frozen)),
        )
        inputs = data if encoded_stamp is None else encoded_stamp
        fingerprint = job_fingerprint(
            task, hp, settings, spec, config, model_dir, inputs, random_init=random_init
        )
        # A finished run's outputs stay restorable (xling.finished), unless the caller keeps its
        # own record of finished runs (on_done) or measures the selected model (on_selected),
        # which a restore could not do again.
        restorable = on_selected is None and on_done is None
        if restorable:
            outputs = _output_files(spec, encoded, out_dir, save_encoder_to)
            key = {"job": fingerprint, "settings": dataclasses.asdict(settings), "pair": pair}
            key |= {"variant": variant, "code": finished.source_digest()}
            if data is not None:
                key["tests"] = {lang: file_stamp(path) for lang, path in sorted(data.test.items())}
            if finished.restore(work_dir, outputs, key, log.info):
                return json.loads((out_dir / "metrics.json").read_text(encoding="utf-8"))
        source_dev = encoded.dev[settings.source_lang]
        history, best_epoch = fit_epochs(
            spec, model, encoded.train, source_dev, hp, settings, run_device, work_dir, fingerprint
        )
        checkpoint.load_epoch(work_dir, model, best_epoch)
        if on_selected is not None:
            on_selected(model)
        evaluation = evaluate_all(spec, model, encoded, settings.eval_batch_size, run_device)
        metrics = {"task": task, "pair": pair, "variant": variant, "hp": hp, "hp_id": hp_id(hp)}
        metrics |= {"metric": spec.metric, "selected_epoch": best_epoch, "dev": evaluation.dev}
        metrics |= {"test": evaluation.test, "epochs": history, "random_init": random_init}
        if save_encoder_to is not None:
            save_encoder(model.encoder, save_encoder_to, tokenizer)
        write_outputs(spec, encoded, evaluation, metrics, out_dir)
        if on_done is not None:
            on_done(metrics)
        seconds = time.perf_counter() - started
        log.info("%s %s done in %.1f s: test %s", task, hp_id(hp), seconds, evaluation.test)
        if not keep_work_dir:
            if restorable:
                finished.keep(work_dir, outputs, key)
            remove_work_dir(work_dir)
        return metrics


# ----------------------------------------------------------------------------- validate
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


# ----------------------------------------------------------------------------- encode
def encode_files(
    spec: Task, data: TaskData, settings: FinetuneSettings, eval_length: int
) -> Encoded:
    """Read, check and encode every file up front, so bad input fails in seconds, not hours.

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


# ----------------------------------------------------------------------------- fit
def head_dropout(settings: FinetuneSettings, config: EncoderSpec) -> float:
    return config.dropout if settings.head_dropout is None else settings.head_dropout


def _build_model(
    spec: Task,
    model_dir: Path,
    config: EncoderSpec,
    settings: FinetuneSettings,
    device: torch.device,
    random_init: str | None = None,
) -> tuple[TaskModel, list[str]]:
    """The pretrained encoder (with the ``random_init`` group drawn again) and a new, seeded head;
    returns it and the frozen parameters."""
    encoder = load_encoder(model_dir)
    if random_init is not None:
        # Its own generator: the head below starts from the same weights with or without it.
        drawn = reinitialize(encoder, random_init, settings.seed)
        log.info("RANDOM-INIT %s: %d parameter tensors drawn again", random_init, len(drawn))
    torch.manual_seed(settings.seed)  # seeds the head's initial weights
    model = TaskModel(encoder, spec.build_head(config.dim, head_dropout(settings, config)))
    frozen = freeze_language_specific(encoder)
    return model.to(device), frozen


def job_fingerprint(
    task: str,
    hp: dict,
    settings: FinetuneSettings,
    spec: Task,
    config: EncoderSpec,
    model_dir: Path,
    data: TaskData | list,
    *,
    random_init: str | None = None,
) -> dict:
    """What a saved state must match to be resumed: the settings that change the weights' path
    (resolved: the head dropout taken, the tag set used) and the input files' stamps.

    Left out: ``eval_batch_size`` (scores only) and ``exclude_punct`` (in ``metric``). The
    RANDOM-INIT group and its seed, and ``group_by_length``, are added only when used, so the
    states of jobs without them stay resumable.
    """
    source = settings.source_lang
    fingerprint = {"task": task, "hp": hp, "seed": settings.seed, "epochs": settings.epochs}
    fingerprint |= {"epoch_size": settings.epoch_size, "max_length": settings.max_length}
    fingerprint |= {"head_dropout": head_dropout(settings, config), "labels": spec.labels}
    fingerprint |= {"source_lang": source, "metric": spec.metric}
    fingerprint |= {"parser_dims": [settings.arc_dim, settings.label_dim]}
    fingerprint |= {"model": model_stamp(model_dir)}
    if isinstance(data, list):  # the stamp of an encoding cache made from the files
        fingerprint["inputs"] = data
    else:
        fingerprint |= {"train": file_stamp(data.train), "dev": file_stamp(data.dev[source])}
    if settings.group_by_length:
        fingerprint["group_by_length"] = True
    if random_init is not None:
        fingerprint["random_init"] = {"group": random_init, "seed": settings.seed}
    return fingerprint


def fit_epochs(
    spec: Task,
    model: TaskModel,
    train: Split,
    dev: Split,
    hp: dict,
    settings: FinetuneSettings,
    device: torch.device,
    work_dir: Path,
    fingerprint: dict,
) -> tuple[list[dict], int]:
    """Train all epochs (or the ones a killed run left), scoring ``dev`` after each.

    Any ``TaskModel`` works: what trains and what is checkpointed are its parameters that require
    gradients. Returns the per-epoch dev history and the best epoch (ties: the earliest), whose
    weights are in ``work_dir``. The caller holds ``work_dir``'s :class:`WorkDirLock`.
    """
    epochs, batch_size = settings.epochs, hp["batch_size"]
    # torch's fused Adam: one kernel for all tensors instead of a loop over them, 3-20 % of a
    # demo fine-tuning job on CPU (bench/finetune_batching.py); the same update up to rounding.
    # EagerAdam: torch's, without the second of start-up its compile guards cost (xling.optim).
    optimizer = EagerAdam(spec.parameter_groups(model, hp), fused=True)
    grouped = settings.group_by_length
    lengths = np.array([spec.item_length(item) for item in train.items]) if grouped else None
    steps = epochs * batches_per_epoch(len(train.items), batch_size, settings.epoch_size)
    scheduler = make_scheduler(optimizer, spec.lr_schedule, steps, WARMUP_FRACTION)
    work_dir.mkdir(parents=True, exist_ok=True)
    history, best_epoch = _resume(work_dir, fingerprint, model, optimizer, scheduler, device)
    for epoch in range(len(history) + 1, epochs + 1):
        tick = time.perf_counter()
        order = epoch_order(len(train.items), epoch, settings.seed, settings.epoch_size)
        if grouped:
            order = group_by_length(order, lengths, batch_size, epoch, settings.seed)
        args = (train.items, order, batch_size, train.lang, optimizer, scheduler, device)
        loss = train_epoch(spec, model, *args)
        score, _ = evaluate_split(spec, model, dev, settings.eval_batch_size, device)
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


def _resume(
    work_dir: Path,
    fingerprint: dict,
    model: TaskModel,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    device: torch.device,
) -> tuple[list[dict], int]:
    """Restore the state a killed run of the same job left; its history and best epoch so far."""
    state = checkpoint.load_state(work_dir, fingerprint)
    if state is None:
        return [], 0
    checkpoint.load_epoch(work_dir, model, state["epoch"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["rng"])
    if device.type == "cuda" and state.get("cuda_rng") is not None:
        torch.cuda.set_rng_state(state["cuda_rng"], device)
    log.info("resuming after epoch %d from %s", state["epoch"], work_dir)
    return state["history"], state["best_epoch"]


# ----------------------------------------------------------------------------- evaluate
def evaluate_split(spec: Task, model: TaskModel, split: Split, batch_size: int, device) -> tuple:
    predictions = predict(spec, model, split.items, split.lang, batch_size, device)
    return spec.score(split.examples, predictions), predictions


def evaluate_all(
    spec: Task, model: TaskModel, encoded: Encoded, batch_size: int, device: torch.device
) -> Evaluation:
    """Scores of the model as it is (the selected epoch) on every dev and test file."""
    dev = {
        lang: evaluate_split(spec, model, split, batch_size, device)[0]
        for lang, split in encoded.dev.items()
    }
    evaluation = Evaluation(dev=dev, test={}, test_predictions={})
    for lang, split in encoded.test.items():
        predictions = predict(spec, model, split.items, split.lang, batch_size, device)
        items = spec.item_counts(split.examples, predictions)
        evaluation.test[lang], evaluation.test_predictions[lang] = ratio(items), predictions
        evaluation.test_items[lang] = items
    return evaluation


# ----------------------------------------------------------------------------- write
def write_outputs(
    spec: Task, encoded: Encoded, evaluation: Evaluation, metrics: dict, out_dir: Path
) -> None:
    """Test predictions, the test items' score counts (:func:`write_test_items`), then
    metrics.json (the job's declared output) last, each atomically."""
    for lang, split in encoded.test.items():
        path = out_dir / f"predictions.{lang}.{spec.prediction_extension}"
        spec.write_predictions(path, lang, split.examples, evaluation.test_predictions[lang])
    write_test_items(out_dir / TEST_ITEMS, spec.metric, evaluation.test_items)
    write_json(out_dir / "metrics.json", metrics)


def _output_files(spec: Task, encoded: Encoded, out_dir: Path, encoder_dir) -> dict[str, Path]:
    """Every output a run writes (:func:`write_outputs`, ``save_encoder_to``), by name."""
    names = [f"predictions.{lang}.{spec.prediction_extension}" for lang in encoded.test]
    outputs = {name: out_dir / name for name in [*names, TEST_ITEMS, "metrics.json"]}
    if encoder_dir is not None:
        outputs["encoder"] = Path(encoder_dir)
    return outputs


def remove_work_dir(work_dir: Path) -> None:
    """Delete the saved state and the run's history (kept with its outputs where they are
    restorable); the directory itself goes when the job's lock is released (if nothing else
    lives there)."""
    checkpoint.clear(work_dir)
