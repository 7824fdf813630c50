"""A setup's data, read and encoded once and shared by all of its runs (Muller et al. 2021).

Every run of an (experiment, task, source) fine-tunes on the same files with the same tokenizer:
the reference model, each RANDOM-INIT group, each seed and grid point. Reading and tokenising them
once per setup, instead of once per run, takes the data preparation out of 17 x seeds x grid runs.

The cache holds the examples and their encoded items (``xling.finetune.data.Encoded``): the test
splits are keyed by evaluation name (``en_cc``), each split knowing its language. A cache is
written atomically and records the stamps of the files it was made from; a run refuses a cache
whose files changed since.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from xling.base.atomic import atomic_open
from xling.base.fileio import file_stamp
from xling.finetune.data import Encoded, Split
from xling.finetune.tasks import Task

CACHE_FORMAT = 1


def encode_setup(
    spec: Task,
    source: str,
    train: str | Path,
    dev: str | Path,
    tests: Mapping[str, tuple[str, str | Path]],
    max_length: int,
    eval_length: int,
) -> Encoded:
    """Read and encode a setup's files; ``tests`` maps an evaluation name to (language, file).

    Training inputs are cut at ``max_length``, evaluation inputs at ``eval_length`` (the model's
    positions). ``spec`` fixes its labels from the training examples.
    """
    train_examples = spec.read(train, source, "train")
    spec.fit_labels(train_examples)
    dev_examples = spec.read(dev, source, "dev")
    test = {}
    for name, (lang, path) in tests.items():
        examples = spec.read(path, lang, "test")
        test[name] = Split(lang, examples, spec.encode(examples, lang, eval_length))
    return Encoded(
        Split(source, train_examples, spec.encode(train_examples, source, max_length)),
        {source: Split(source, dev_examples, spec.encode(dev_examples, source, eval_length))},
        test,
    )


def save_encoded(path: str | Path, encoded: Encoded, sources: list[str | Path], task: str) -> None:
    payload = {"format": CACHE_FORMAT, "task": task, "encoded": encoded}
    payload["stamps"] = [file_stamp(p) for p in sources]
    with atomic_open(path, "wb", encoding=None) as handle:
        torch.save(payload, handle)


def load_encoded(path: str | Path, task: str) -> Encoded:
    """The cache at ``path``; a clear error if it is of another task, format or stale."""
    payload = torch.load(path, weights_only=False)  # our own file: examples are dataclasses
    if payload.get("format") != CACHE_FORMAT or payload.get("task") != task:
        raise ValueError(
            f"{path} is not a {task} encoding cache of format {CACHE_FORMAT}: delete it and rerun"
        )
    for stamp in payload["stamps"]:
        if not Path(stamp[0]).exists() or file_stamp(stamp[0]) != stamp:
            raise ValueError(
                f"{path} was encoded from {stamp[0]}, which has changed since: delete the cache "
                "and rerun (Snakemake rebuilds it when its inputs change)"
            )
    return payload["encoded"]
