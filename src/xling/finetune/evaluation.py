"""A task model scored as it is (its selected epoch) on every dev and test file, and a run's
outputs: the test predictions, the test items' score counts and, last, ``metrics.json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from xling.base.atomic import write_json
from xling.contracts.items import TEST_ITEMS, write_test_items
from xling.finetune.data import Encoded, Split
from xling.finetune.metrics import ItemCounts, ratio
from xling.finetune.tasks import Task, TaskModel
from xling.finetune.training import predict

METRICS = "metrics.json"


@dataclass
class Evaluation:
    """The selected epoch's scores on dev and test per language, its test predictions, and each
    test example's numerator and denominator of the score (``Task.item_counts``)."""

    dev: dict[str, float]
    test: dict[str, float]
    test_predictions: dict[str, list]
    test_items: dict[str, ItemCounts] = field(default_factory=dict)


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


def write_outputs(
    spec: Task, encoded: Encoded, evaluation: Evaluation, metrics: dict, out_dir: Path
) -> None:
    """Test predictions, the test items' score counts (:func:`write_test_items`), then
    metrics.json (the job's declared output) last, each atomically."""
    for lang, split in encoded.test.items():
        path = out_dir / f"predictions.{lang}.{spec.prediction_extension}"
        spec.write_predictions(path, lang, split.examples, evaluation.test_predictions[lang])
    write_test_items(out_dir / TEST_ITEMS, spec.metric, evaluation.test_items)
    write_json(out_dir / METRICS, metrics)


def output_files(
    spec: Task, encoded: Encoded, out_dir: Path, encoder_dir: Path | None = None
) -> dict[str, Path]:
    """Every output a run writes (:func:`write_outputs`, and the encoder if saved), by name."""
    names = [f"predictions.{lang}.{spec.prediction_extension}" for lang in encoded.test]
    outputs = {name: out_dir / name for name in [*names, TEST_ITEMS, METRICS]}
    if encoder_dir is not None:
        outputs["encoder"] = Path(encoder_dir)
    return outputs
