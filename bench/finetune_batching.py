"""Fine-tuning jobs as the demo runs them: random batches with torch's default Adam (what a user
gets from a plain training loop) against batches of similar length with the fused Adam.

For XNLI, NER and parsing, one whole job each (the demo's settings from config/demo.yaml) on a
finished demo model, timed end to end, with its English dev and test scores and the target's test
score, so that the speed-up can be checked against the seed spread of the scores. Every setting
runs the same jobs in this process, one thread, one after the other.

Run after ``make demo`` (it reads the demo's model and data):

    .venv/bin/python bench/finetune_batching.py [results/demo] [--pair en-fr] [--seeds 1 2]

About 5 minutes per seed on one core.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from xling.base import yamlfile
from xling.finetune import FinetuneJob, FinetuneSettings, TaskData, run_finetune
from xling.finetune import fitting as finetune_fitting
from xling.finetune.settings import GRID_LEVEL_KEYS

REPO = Path(__file__).resolve().parents[1]
TASK_FILES = {"ner": ("ner", "txt"), "parsing": ("ud", "conllu")}


def task_data(results: Path, task: str, source: str, target: str) -> TaskData:
    if task == "xnli":
        xnli = results / "data/xnli"
        tests = {lang: xnli / "xnli.test.tsv" for lang in (source, target)}
        return TaskData(
            xnli / f"multinli.train.{source}.tsv", {source: xnli / "xnli.dev.tsv"}, tests
        )
    folder, ext = TASK_FILES[task]
    base = results / "data" / folder / "toy"
    tests = {lang: base / lang / f"test.{ext}" for lang in (source, target)}
    return TaskData(base / source / f"train.{ext}", {source: base / source / f"dev.{ext}"}, tests)


class PlainAdam(torch.optim.Adam):
    """torch's Adam with its default implementation (a loop over tensors on CPU), whatever the
    caller asks for: the optimizer a plain training loop uses."""

    def __init__(self, params, *args, fused=None, **kwargs):
        super().__init__(params, *args, **kwargs)


def run_job(task, model, data, hp, settings, plain_adam: bool) -> tuple[float, dict]:
    # run_finetune builds xling.model.optim.EagerAdam (fused) in xling.finetune.fitting: the
    # name it looks up there is the one replaced
    fused_adam = finetune_fitting.EagerAdam
    if plain_adam:
        finetune_fitting.EagerAdam = PlainAdam
    try:
        with tempfile.TemporaryDirectory() as work:
            start = time.perf_counter()
            job = FinetuneJob(task, model, data, hp, Path(work) / "out", Path(work) / "w", settings)
            metrics = run_finetune(job)
            return time.perf_counter() - start, metrics
    finally:
        finetune_fitting.EagerAdam = fused_adam


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", type=Path, default=REPO / "results/demo")
    parser.add_argument("--pair", default="en-fr")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1234])
    args = parser.parse_args()
    torch.set_num_threads(1)
    demo = yamlfile.load(REPO / "config/demo.yaml")
    source, target = args.pair.split("-")
    model = args.results / "pretrain" / args.pair / "default" / "model"
    if not model.is_dir():
        print(f"{model}: no demo model there; run `make demo` first")
        return
    setups = {
        "random batches, Adam": (False, True),
        "random batches, fused Adam": (False, False),
        "grouped batches, fused Adam": (True, False),
    }
    print(f"{args.pair} Default model, demo settings, one thread; scores: dev / test ({target})")
    for task in ("xnli", "ner", "parsing"):
        section = {k: v for k, v in demo["tasks"][task].items() if k not in GRID_LEVEL_KEYS}
        hp = {key: values[0] for key, values in demo["tasks"][task]["grid"].items()}
        data = task_data(args.results, task, source, target)
        times = {}
        for name, (grouped, plain_adam) in setups.items():
            section["group_by_length"] = grouped
            for seed in args.seeds:
                settings = FinetuneSettings.from_config(
                    task, section, seed=seed, source_lang=source
                )
                took, metrics = run_job(task, model, data, hp, settings, plain_adam)
                times.setdefault(name, []).append(took)
                print(
                    f"  {task:8} {name:28} seed {seed}: {took:5.1f} s, "
                    f"{metrics['dev'][source]:.3f} / {metrics['test'][source]:.3f} "
                    f"({metrics['test'][target]:.3f})",
                    flush=True,
                )
        plain, fused, ours = (sum(times[name]) for name in setups)
        print(
            f"{task}: of the time of random batches + Adam, fused Adam takes {fused / plain:.2f}, "
            f"grouped batches + fused Adam {ours / plain:.2f}"
        )


if __name__ == "__main__":
    main()
