"""Transfer through the first i layers of a model (Wu, Conneau et al. 2020, 5.1.2 and A).

Task layers (four fresh Transformer layers of the encoder's own architecture, then the task head)
are trained on the source language over the frozen first ``layer`` layers of the source model.
A target language is then encoded by the first ``layer`` layers of a target model (a monolingual
model with its own tokenizer, or a bilingual one), optionally mapped into the source model's space
by a fixed linear map, and fed to the trained task layers. Layer 0 is the embedding layer's output.

Mapping convention: a ``dim x dim`` matrix ``W`` applied to every position's row vector as
``h @ W``, taking the target model's layer-``layer`` space to the source model's. Orthogonal
Procrustes on aligned pairs (rows ``X_target``, ``X_source``) gives ``W = U V^T`` where
``U S V^T = svd(X_target^T X_source)``.

The frozen layers run in eval mode (no dropout) both in training and at test time: they compute
fixed features, the same ones a mapping is learned from, so the task layers are trained on the
distribution the mapped target states are meant to match. The training loop, epoch selection on
source dev, checkpoints and resume are fine-tuning's (``xling.finetune.fitting``); only the task
layers and the head train and are checkpointed.
"""

from __future__ import annotations

import itertools
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from xling.finetune.checkpoint import STATE_NAME
from xling.finetune.data import (
    Split,
    TaskData,
    checked_task,
    encode_files,
    load_tokenizer,
    validate_job,
)
from xling.finetune.evaluation import Evaluation, evaluate_all, write_outputs
from xling.finetune.fitting import Fitting, fit_and_select, head_dropout, job_fingerprint
from xling.finetune.grid import hp_id, normalize_hp
from xling.finetune.metrics import ratio
from xling.finetune.settings import FinetuneSettings
from xling.finetune.tasks import Task, TaskModel
from xling.finetune.training import pick_device, predict
from xling.jobs.lifecycle import JobLifecycle
from xling.model import EncoderConfig, MLMEncoder, load_pretrained
from xling.model.encoder import TransformerLayer

log = logging.getLogger(__name__)
Matrix = torch.Tensor | np.ndarray
TASK_LAYERS = 4  # paper: "four Transformer layers and a task-specific layer"
# The paper runs this experiment for NER and parsing; XNLI's two learning rates (encoder and
# classifier) have no counterpart for task layers.
TRANSFER_TASKS = ("ner", "parsing")
INIT_STD = 0.02  # MLMEncoder.reset_parameters' Linear init, so task layers start as its layers do


class TransferEvaluation(NamedTuple):
    """One evaluation: ``test`` in ``lang``, encoded by the first layers of ``model_dir`` (with its
    own tokenizer), mapped by ``mapping`` (target -> source space, ``h @ W``; None: no mapping)."""

    model_dir: str | Path
    lang: str
    test: str | Path
    mapping: Matrix | None = None


def check_layer(layer: int, depth: int, where: str) -> None:
    """``layer`` must be a hidden state of a ``depth``-layer encoder (0 = embeddings output)."""
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer <= depth:
        raise ValueError(
            f"layer {layer!r} does not exist in {where}, which has {depth} Transformer layers: "
            f"use a layer in 0..{depth} (0 is the embedding layer's output)"
        )


def checked_mapping(mapping: Matrix, dim: int) -> torch.Tensor:
    """``mapping`` as a float32 ``dim x dim`` tensor, or an error naming its shape."""
    matrix = torch.as_tensor(mapping, dtype=torch.float32)
    if matrix.shape != (dim, dim):
        raise ValueError(
            f"the mapping has shape {tuple(matrix.shape)} but must be {dim} x {dim}, the encoder "
            "width, applied as h @ W from the target model's space to the source model's"
        )
    if not torch.isfinite(matrix).all():
        raise ValueError("the mapping has NaN or infinite entries: recompute it")
    return matrix


def build_task_layers(config: EncoderConfig, count: int = TASK_LAYERS) -> nn.ModuleList:
    """``count`` fresh Transformer layers of the encoder's own class and sizes (width, heads, FFN,
    dropout, post-LN), initialised as the encoder initialises its layers."""
    layers = nn.ModuleList(TransformerLayer(config) for _ in range(count))
    for module in layers.modules():
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=INIT_STD)
            nn.init.zeros_(module.bias)
    return layers


class LayerTransferModel(TaskModel):
    """Frozen first ``layer`` layers of ``encoder``, an optional fixed mapping, trainable task
    layers and a task head; a ``TaskModel`` so every ``Task`` trains and evaluates it unchanged.

    ``use_encoder`` swaps in another (target) encoder and mapping for evaluation; only
    ``task_layers`` and ``head`` have trainable parameters.
    """

    def __init__(
        self,
        encoder: MLMEncoder,
        layer: int,
        task_layers: nn.ModuleList,
        head: nn.Module,
        mapping: Matrix | None = None,
    ):
        super().__init__(encoder, head)
        self.layer = layer
        self.task_layers = task_layers
        self.dim = encoder.config.dim
        self.register_buffer("mapping", None, persistent=False)
        self.use_encoder(encoder, mapping)

    def use_encoder(self, encoder: MLMEncoder, mapping: Matrix | None = None) -> None:
        """Encode with ``encoder``'s first ``layer`` layers, then ``h @ mapping`` (None: as is)."""
        check_layer(self.layer, encoder.config.layers, "the encoder")
        if encoder.config.dim != self.dim:
            raise ValueError(
                f"the encoder has width {encoder.config.dim} but the task layers {self.dim}: "
                "use a model of the source model's width"
            )
        device = next(itertools.chain(self.task_layers.parameters(), self.head.parameters())).device
        encoder.requires_grad_(False)
        self.encoder = encoder.to(device).eval()
        self.mapping = None if mapping is None else checked_mapping(mapping, self.dim).to(device)

    def train(self, mode: bool = True) -> LayerTransferModel:
        super().train(mode)
        self.encoder.eval()  # fixed features: no dropout in the frozen layers (module docstring)
        return self

    def frozen_states(self, batch: dict[str, torch.Tensor], lang: str) -> torch.Tensor:
        """Hidden state ``layer`` of the frozen encoder through ``lang``'s parts, mapped."""
        input_ids = batch["input_ids"]
        with torch.no_grad():
            output = self.encoder(
                input_ids, lang, attention_mask=input_ids != self.pad_id, num_layers=self.layer
            )
            hidden = output.last_hidden_state
            return hidden if self.mapping is None else hidden @ self.mapping

    def encode(self, batch: dict[str, torch.Tensor], lang: str) -> torch.Tensor:
        """The task layers' output over the frozen (mapped) states, padding masked as the
        encoder masks it."""
        hidden = self.frozen_states(batch, lang)
        keep = batch["input_ids"] != self.pad_id
        attn_mask = keep[:, None, None, :]
        for layer in self.task_layers:
            hidden = layer(hidden, attn_mask) * keep.unsqueeze(-1).to(hidden.dtype)
        return hidden


def load_frozen_encoder(model_dir: Path, layer: int, device: torch.device) -> MLMEncoder:
    encoder = load_pretrained(model_dir)
    check_layer(layer, encoder.config.layers, str(model_dir))
    return encoder.requires_grad_(False).to(device).eval()


# ----------------------------------------------------------------------------- the job
class _Target(NamedTuple):
    """One evaluation, read and encoded with its own model's tokenizer."""

    evaluation: TransferEvaluation
    spec: Task
    split: Split


@dataclass(frozen=True)
class LayerTransferJob:
    """Task layers trained over the first ``layer`` layers of the source model, then evaluated.

    Training, selection of the epoch on source dev and the scores on ``data``'s dev/test files
    (through the source model, no mapping) are as in fine-tuning (:mod:`xling.finetune.fitting`),
    with the grid point ``hp``; ``task_layers`` fresh Transformer layers (the paper's four) and the
    head train. Each entry of ``evaluations`` (name -> ``TransferEvaluation`` or a tuple of its
    fields) is then scored with its own model and tokenizer and the trained task layers; the label
    inventory is the source training file's (or ``settings.labels``). Outputs, in ``out_dir``:
    ``predictions.{lang}.{ext}`` (source tests), ``predictions.{name}.{ext}`` (evaluations),
    ``test_items.json`` and last ``metrics.json``. ``work_dir`` holds the resumable state.
    """

    task: str
    source_model_dir: Path
    layer: int
    data: TaskData
    out_dir: Path
    work_dir: Path
    settings: FinetuneSettings
    evaluations: Mapping[str, TransferEvaluation | tuple]
    hp: Mapping[str, object]
    task_layers: int = TASK_LAYERS

    def __post_init__(self) -> None:
        for name in ("source_model_dir", "out_dir", "work_dir"):
            object.__setattr__(self, name, Path(getattr(self, name)))


def run_layer_transfer(
    job: LayerTransferJob,
    *,
    threads: int = 1,
    device: str | None = None,
    keep_work_dir: bool = False,
) -> dict:
    """Run ``job`` (:class:`LayerTransferJob`); write its outputs, each atomically; return the
    metrics. Everything is checked, read and encoded before the training starts. A rerun after a
    kill resumes from the work directory, which is deleted at the end unless ``keep_work_dir``.
    ``device`` None picks CUDA when present.
    """
    started = time.perf_counter()
    torch.set_num_threads(threads)
    fitting, targets = _prepare(job, device)
    # One trainer per work directory. The sweep that runs this job keeps its finished layers
    # itself: nothing is kept here to restore.
    with JobLifecycle(job.work_dir, "layer-transfer training", record=None) as life:
        history, best_epoch = fit_and_select(fitting)
        spec, batch_size = fitting.spec, job.settings.eval_batch_size
        evaluation = evaluate_all(spec, fitting.model, fitting.encoded, batch_size, fitting.device)
        scores, predictions = _evaluate_targets(fitting, targets, evaluation, job.layer)
        metrics = {"task": job.task, "layer": job.layer, "task_layers": job.task_layers}
        metrics |= {"hp": fitting.hp, "hp_id": hp_id(fitting.hp), "metric": spec.metric}
        metrics |= {"source_lang": job.settings.source_lang, "selected_epoch": best_epoch}
        metrics |= {"dev": evaluation.dev, "test": evaluation.test}
        metrics |= {"evaluations": scores, "epochs": history}
        for name, target in targets.items():
            path = job.out_dir / f"predictions.{name}.{spec.prediction_extension}"
            lang = target.evaluation.lang
            target.spec.write_predictions(path, lang, target.split.examples, predictions[name])
        write_outputs(spec, fitting.encoded, evaluation, metrics, job.out_dir)  # metrics.json last
        if not keep_work_dir:
            life.clean_up(first=[job.work_dir / STATE_NAME])
    seconds = time.perf_counter() - started
    log.info("%s layer %d done in %.1f s: %s", job.task, job.layer, seconds, scores)
    return metrics


def _prepare(job: LayerTransferJob, device: str | None) -> tuple[Fitting, dict[str, _Target]]:
    """Check the job and every evaluation, read and encode their files, build the model: all
    before anything trains."""
    task, source_dir, layer, settings = job.task, job.source_model_dir, job.layer, job.settings
    if task not in TRANSFER_TASKS:
        raise ValueError(f"layer transfer supports {', '.join(TRANSFER_TASKS)}, not {task!r}")
    count = job.task_layers
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"task_layers {count!r} is not a layer count: use 4, the paper's")
    hp = normalize_hp(task, job.hp)
    config = validate_job(task, source_dir, job.data, settings)
    check_layer(layer, config.layers, str(source_dir))
    checked = {
        name: _check_evaluation(name, TransferEvaluation(*entry), layer, config, job.data)
        for name, entry in job.evaluations.items()
    }
    run_device = pick_device(device)
    spec = checked_task(task, load_tokenizer(source_dir), config, source_dir, settings)
    encoded = encode_files(spec, job.data, settings, config.max_positions)
    targets = {
        name: _encode_target(task, evaluation, settings, spec, encoded.train.examples)
        for name, evaluation in checked.items()
    }
    torch.manual_seed(settings.seed)  # seeds the task layers' and the head's initial weights
    model = LayerTransferModel(
        load_frozen_encoder(source_dir, layer, run_device),
        layer,
        build_task_layers(config, count),
        spec.build_head(config.dim, head_dropout(settings, config)),
    ).to(run_device)
    log.info(
        "%s layer %d %s on %s: %d train examples, %d evaluations",
        *(task, layer, hp_id(hp), run_device, len(encoded.train.items), len(targets)),
    )
    fingerprint = job_fingerprint(task, hp, settings, spec, config, source_dir, job.data)
    fingerprint |= {"transfer_layer": layer, "task_layers": count}
    fitting = Fitting(spec, model, encoded, hp, settings, run_device, job.work_dir, fingerprint)
    return fitting, targets


def _evaluate_targets(
    fitting: Fitting, targets: Mapping[str, _Target], evaluation: Evaluation, layer: int
) -> tuple[dict[str, dict], dict[str, list]]:
    """Each evaluation's test through its own model's first ``layer`` layers, mapped, and the
    trained task layers: its score and predictions; its per-sentence counts go to
    ``evaluation.test_items`` under its name (never a source test language)."""
    model, batch_size = fitting.model, fitting.settings.eval_batch_size
    scores, predictions = {}, {}
    for name, target in targets.items():
        target_dir, lang, _, mapping = target.evaluation
        model.use_encoder(load_frozen_encoder(Path(target_dir), layer, fitting.device), mapping)
        predictions[name] = predict(
            target.spec, model, target.split.items, lang, batch_size, fitting.device
        )
        items = target.spec.item_counts(target.split.examples, predictions[name])
        evaluation.test_items[name] = items
        scores[name] = {"lang": lang, "mapped": mapping is not None, "test": ratio(items)}
    return scores, predictions


def _check_evaluation(
    name: str, evaluation: TransferEvaluation, layer: int, source: EncoderConfig, data: TaskData
) -> TransferEvaluation:
    """Check one evaluation against its model's config before anything is read or trained."""
    if not re.fullmatch(r"[\w.-]+", name) or name in data.test:
        raise ValueError(
            f"evaluation name {name!r} cannot name a predictions file: use letters, digits, "
            f"'_', '-' or '.', and no source test language ({', '.join(data.test)})"
        )
    model_dir = Path(evaluation.model_dir)
    config_path = model_dir / "config.json"
    if not config_path.exists():
        raise FileNotFoundError(f"evaluation {name}: {model_dir} is not a model directory")
    config = EncoderConfig.load(config_path)
    if evaluation.lang not in config.languages:
        raise ValueError(
            f"evaluation {name}: {model_dir} has no parts for {evaluation.lang!r}: "
            f"{config.languages}"
        )
    if config.dim != source.dim:
        raise ValueError(
            f"evaluation {name}: {model_dir} has width {config.dim}, the source model "
            f"{source.dim}: layer transfer needs models of one width"
        )
    check_layer(layer, config.layers, str(model_dir))
    mapping = evaluation.mapping
    if mapping is not None:
        mapping = checked_mapping(mapping, source.dim)
    return evaluation._replace(model_dir=model_dir, test=Path(evaluation.test), mapping=mapping)


def _encode_target(
    task: str,
    evaluation: TransferEvaluation,
    settings: FinetuneSettings,
    source_spec: Task,
    train_examples: list,
) -> _Target:
    """The test file read and encoded with its own model's tokenizer, labels from the source."""
    model_dir = Path(evaluation.model_dir)
    config = EncoderConfig.load(model_dir / "config.json")
    spec = checked_task(task, load_tokenizer(model_dir), config, model_dir, settings)
    spec.fit_labels(train_examples)
    assert spec.labels == source_spec.labels, "label inventories of one job differ"
    examples = spec.read(evaluation.test, evaluation.lang, "test")
    items = spec.encode(examples, evaluation.lang, config.max_positions)
    return _Target(evaluation, spec, Split(evaluation.lang, examples, items))
