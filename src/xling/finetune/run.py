"""One fine-tuning job: one (model, task, grid point), zero-shot from the source language.

Wu, Conneau et al. 2020, section 3.2: fine-tune on English, select the epoch on English dev, test
every language with no target-language training; language-specific parameters stay frozen (4.3),
and each language goes through its own language-specific parts at test time.

The job's steps live where other experiments that train a task head the same way reach them
(``xling.analysis.transfer``: task layers over a frozen encoder's first layers): the files in
:mod:`xling.finetune.data`, the epochs in :mod:`xling.finetune.fitting`, the scores and outputs in
:mod:`xling.finetune.evaluation`, the work directory's life in :mod:`xling.jobs.lifecycle`. This
module keeps what is the job's own: its model (the pretrained encoder, a new head) and its record.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from xling.base import digest
from xling.base.fileio import file_stamp
from xling.finetune import checkpoint
from xling.finetune.data import (
    Encoded,
    TaskData,
    checked_task,
    encode_files,
    load_tokenizer,
    validate_job,
)

# Importable from here, as Encoded: the encoding caches of earlier versions (xling.muller.encoded)
# pickled both under this module's name.
from xling.finetune.data import Split as Split
from xling.finetune.encoding import Tokenizer
from xling.finetune.evaluation import METRICS, evaluate_all, output_files, write_outputs
from xling.finetune.fitting import Fitting, fit_and_select, head_dropout, job_fingerprint
from xling.finetune.grid import hp_id, normalize_hp
from xling.finetune.settings import FinetuneSettings
from xling.finetune.tasks import Task, TaskModel
from xling.finetune.training import pick_device
from xling.jobs.lifecycle import JobLifecycle
from xling.model import load_encoder, save_encoder
from xling.model.interface import Encoder, EncoderSpec
from xling.model.random_init import BERT, parse_group, reinitialize

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FinetuneJob:
    """One fine-tuning run: ``model_dir`` fine-tuned on ``task`` with the grid point ``hp``.

    It trains ``settings.epochs`` epochs on ``data.train`` (``settings.source_lang``), scores the
    source language's dev after each, keeps the best epoch (ties: the earliest), then evaluates it
    on dev and test of every language in ``data``. Outputs, in ``out_dir``:
    ``predictions.{lang}.{ext}`` (test), ``test_items.json`` and, last, ``metrics.json``
    (docs/contracts.md section 5). Resumable state lives in ``work_dir``. ``pair``/``variant`` are
    copied into metrics.json.

    ``model_dir`` is one of the study's model directories or a ``transformers`` encoder (a
    directory or a hub id such as ``bert-base-multilingual-cased``): see
    :func:`xling.model.load_encoder`. ``random_init`` names a group of layers re-initialised after
    loading, before the head is built (RANDOM-INIT, :mod:`xling.model.random_init`; drawn with
    ``settings.seed`` by ``random_init_scheme``, the model's own rules by default); it is part of
    the resume fingerprint and written to metrics.json (``"random_init"``: the group or null).
    ``save_encoder_to`` receives the selected epoch's encoder and tokenizer, in the format
    :func:`xling.model.load_encoder` reads, before metrics.json (the representation analyses of
    fine-tuned models read it).

    ``encoded`` (with ``data`` None) gives the files already read and encoded, e.g. a cache that
    every run of a grid shares (:mod:`xling.muller.encoded`); its test splits may be keyed by any
    name, each split knowing its language. ``encoded_stamp`` then stands for the input files in the
    resume fingerprint. ``config_section``: the config section ``settings`` come from (``tasks``,
    Muller et al.'s ``muller.tasks``), for messages.
    """

    task: str
    model_dir: Path
    data: TaskData | None
    hp: Mapping[str, object]
    out_dir: Path
    work_dir: Path
    settings: FinetuneSettings
    pair: str = ""
    variant: str = ""
    random_init: str | None = None
    random_init_scheme: str = BERT
    save_encoder_to: Path | None = None
    encoded: Encoded | None = None
    encoded_stamp: list | None = None
    config_section: str = "tasks"

    def __post_init__(self) -> None:
        for name in ("model_dir", "out_dir", "work_dir"):
            object.__setattr__(self, name, Path(getattr(self, name)))


def run_finetune(
    job: FinetuneJob,
    *,
    threads: int = 1,
    device: str | None = None,
    tokenizer: Tokenizer | None = None,
    keep_work_dir: bool = False,
    on_selected: Callable[[TaskModel], None] | None = None,
    on_done: Callable[[dict], None] | None = None,
) -> dict:
    """Run ``job`` (:class:`FinetuneJob`); write its outputs, each atomically; return the metrics.

    The job locks its work directory while it runs (:mod:`xling.jobs.lifecycle`): a second job on
    it fails at once. A rerun after a kill continues after the last epoch. Once metrics.json is
    written the epochs in the work directory are deleted (a paper study has over a thousand jobs)
    unless ``keep_work_dir``; it then holds the weights of the last and of the selected epoch. In
    their place stay hard links to the outputs (:mod:`xling.jobs.finished`; not with ``on_done``
    or ``on_selected``): a rerun of the same run after Snakemake deleted them puts them back.

    ``device`` None picks CUDA when present. ``tokenizer`` None loads ``model_dir/tokenizer``.
    ``on_selected`` is called with the model at its selected epoch before any output is written
    (e.g. to measure its representations); ``on_done`` with the metrics once every output is
    written, before the work directory goes (a caller's own record that the run is finished: a
    kill before it then resumes after the last epoch).
    """
    started = time.perf_counter()
    torch.set_num_threads(threads)
    # The lock first, so that a second trainer on the same work directory stops before reading
    # anything. The run's log lines also go to the work directory's history (xling.jobs.joblog):
    # Snakemake deletes the rule's log before a retry, which resumes after the last epoch.
    with JobLifecycle(job.work_dir, "fine-tuning", log=log.info) as life:
        fitting, tokenizer = _prepare(job, tokenizer, device)
        # A finished run's outputs stay restorable (xling.jobs.finished), unless the caller keeps
        # its own record of finished runs (on_done) or measures the selected model (on_selected),
        # which a restore could not do again.
        restorable = on_selected is None and on_done is None
        if restorable:
            outputs = output_files(fitting.spec, fitting.encoded, job.out_dir, job.save_encoder_to)
            if life.restore(outputs, _finished_key(job, fitting)):
                return json.loads((job.out_dir / METRICS).read_text(encoding="utf-8"))
        history, best_epoch = fit_and_select(fitting)
        if on_selected is not None:
            on_selected(fitting.model)
        metrics = _write_run(job, fitting, tokenizer, history, best_epoch)
        if on_done is not None:
            on_done(metrics)
        seconds = time.perf_counter() - started
        test = metrics["test"]
        log.info("%s %s done in %.1f s: test %s", job.task, metrics["hp_id"], seconds, test)
        if not keep_work_dir:
            life.clean_up(first=[job.work_dir / checkpoint.STATE_NAME])
        return metrics


def _prepare(
    job: FinetuneJob, tokenizer: Tokenizer | None, device: str | None
) -> tuple[Fitting, Tokenizer]:
    """Check the job, read and encode its files, build its model: everything but the training,
    in the order that stops a bad job soonest."""
    hp = normalize_hp(job.task, job.hp)
    if (job.data is None) == (job.encoded is None):
        raise ValueError("give exactly one of data (files) and encoded (already encoded)")
    given = job.data if job.encoded is None else job.encoded
    settings, model_dir = job.settings, job.model_dir
    config = validate_job(job.task, model_dir, given, settings, config_section=job.config_section)
    if job.random_init is not None:
        parse_group(job.random_init, config.layers)  # a bad group stops before any reading
    run_device = pick_device(device)
    tokenizer = tokenizer or load_tokenizer(model_dir)
    spec = checked_task(job.task, tokenizer, config, model_dir, settings)
    encoded = job.encoded
    if encoded is None:
        encoded = encode_files(spec, job.data, settings, config.max_positions)
    else:
        spec.fit_labels(encoded.train.examples)
    model, frozen = _build_model(spec, job, config, run_device)
    log.info(
        "%s %s on %s: %d train examples, %d frozen tensors",
        *(job.task, hp_id(hp), run_device, len(encoded.train.items), len(frozen)),
    )
    inputs = job.data if job.encoded_stamp is None else job.encoded_stamp
    fingerprint = job_fingerprint(
        job.task, hp, settings, spec, config, model_dir, inputs,
        random_init=job.random_init, random_init_scheme=job.random_init_scheme,
    )  # fmt: skip
    fitting = Fitting(spec, model, encoded, hp, settings, run_device, job.work_dir, fingerprint)
    return fitting, tokenizer


def freeze_language_specific(encoder: Encoder) -> list[str]:
    """Stop gradients into language-specific parameters (paper, 4.3); returns their names."""
    frozen = []
    for name, param in encoder.language_specific_parameters():
        param.requires_grad_(False)
        frozen.append(name)
    return frozen


def _build_model(
    spec: Task, job: FinetuneJob, config: EncoderSpec, device: torch.device
) -> tuple[TaskModel, list[str]]:
    """The pretrained encoder (with the ``random_init`` group drawn again) and a new, seeded head;
    returns it and the frozen parameters."""
    encoder = load_encoder(job.model_dir)
    seed = job.settings.seed
    if job.random_init is not None:
        # Its own generator: the head below starts from the same weights with or without it.
        drawn = reinitialize(encoder, job.random_init, seed, job.random_init_scheme)
        log.info("RANDOM-INIT %s: %d parameter tensors drawn again", job.random_init, len(drawn))
    torch.manual_seed(seed)  # seeds the head's initial weights
    model = TaskModel(encoder, spec.build_head(config.dim, head_dropout(job.settings, config)))
    frozen = freeze_language_specific(encoder)
    return model.to(device), frozen


def _finished_key(job: FinetuneJob, fitting: Fitting) -> dict:
    """What kept outputs must match to be put back (:mod:`xling.jobs.finished`): the resume
    fingerprint, the settings, the names copied into metrics.json, the code and the test files."""
    key = {"job": fitting.fingerprint, "settings": dataclasses.asdict(job.settings)}
    key |= {"pair": job.pair, "variant": job.variant, "code": digest.source_digest()}
    if job.data is not None:
        key["tests"] = {lang: file_stamp(path) for lang, path in sorted(job.data.test.items())}
    return key


def _write_run(
    job: FinetuneJob, fitting: Fitting, tokenizer: Tokenizer, history: list[dict], best_epoch: int
) -> dict:
    """Score the selected model everywhere and write the run's outputs, metrics.json last;
    returns the metrics."""
    spec, hp = fitting.spec, fitting.hp
    evaluation = evaluate_all(
        spec, fitting.model, fitting.encoded, job.settings.eval_batch_size, fitting.device
    )
    metrics = {"task": job.task, "pair": job.pair, "variant": job.variant, "hp": hp}
    metrics |= {"hp_id": hp_id(hp), "metric": spec.metric, "selected_epoch": best_epoch}
    metrics |= {"dev": evaluation.dev, "test": evaluation.test, "epochs": history}
    metrics |= {"random_init": job.random_init}
    if job.save_encoder_to is not None:
        save_encoder(fitting.model.encoder, job.save_encoder_to, tokenizer)
    write_outputs(spec, fitting.encoded, evaluation, metrics, job.out_dir)
    return metrics
