"""Would a smaller position signal lift the demo's monolingual CKA above the random bound?

The demo's encoders add XLM's fixed sinusoidal position table (values in [-1, 1], rows of norm
5.7 at width 64) to token embeddings drawn with norm about 1, so the mean-pooled states of every
layer carry the sentence's length, and Figure 7's random encoder is length and little else
(docs/analysis.md). This trains the monolingual en model and each target's with the demo's
pretraining settings (one thread, 500 steps) under a scaled table, and under learned positions,
then prints per variant: dev masked-token accuracy of each model, and for each target how many of
the layers L0-L8 have the monolingual pair's CKA above the random encoder's (target side), with
both layer averages. The ratio column is the variant's mean accuracy against the full table
(scale 1). docs/analysis.md records a run and what it showed; the demo has added half the table
(`model.position_scale: 0.5`) since that run.

    python bench/measurements/position_table.py        # needs results/demo (make demo)
    python bench/measurements/position_table.py --targets fr --variants 1 0.25 learned

A scale is `model.position_scale` (the demo's setting); learned positions turn
`model.sinusoidal_positions` off.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

import numpy as np
import torch
import yaml
from cka_length import encoded, parallel_lines

from xling.analysis.cka import cka
from xling.analysis.representations import mean_pooled_layers
from xling.model.random_init import random_like
from xling.pretrain.engine import pretrain_in_folder
from xling.pretrain.settings import PretrainSettings

REPO = Path(__file__).resolve().parents[2]


def positions(variant: str) -> dict:
    """The architecture keys of ``variant``: a scale of the fixed table, or ``learned``."""
    if variant == "learned":
        return {"sinusoidal_positions": False, "position_scale": 1.0}
    return {"sinusoidal_positions": True, "position_scale": float(variant)}


def train(
    results: Path,
    demo: dict,
    lang: str,
    out: Path,
    variant: str | None = None,
    seed: int | None = None,
) -> float:
    """Pretrain ``lang``'s monolingual model as the demo does (with the demo's positions unless
    a position ``variant`` is given, its seed unless ``seed`` is); its final dev accuracy."""
    steps = demo["pretrain"]
    architecture = demo["model"] if variant is None else {**demo["model"], **positions(variant)}
    settings = PretrainSettings.from_dict(
        {
            "architecture": architecture,
            **{key: steps[key] for key in ("seq_len", "batch_size", "lr", "adam_betas")},
            "warmup_steps": steps["warmup_steps"],
            "total_steps": steps["total_steps"],
            "eval_interval": steps["total_steps"],
            "log_interval": steps["total_steps"],
            "seed": demo["seed"] if seed is None else seed,
            "threads": 1,
        }
    )
    pretrain_in_folder(out, results / "vocab/mono" / lang, [lang], settings)
    rows = [row for row in csv.DictReader((out / "curve.csv").open()) if row["dev_acc"]]
    return float(rows[-1]["dev_acc"])


def layers_above_random(models: Path, lines: dict[str, list[str]], target: str) -> tuple:
    """Layers where monolingual CKA beats the random bound; both layer averages."""
    en_model, en_framing, en_ids = encoded(models / "en/model", lines["en"], "en")
    english = mean_pooled_layers(en_model, en_ids, "en", **en_framing)
    model, framing, ids = encoded(models / target / "model", lines[target], target)
    trained = mean_pooled_layers(model, ids, target, **framing)
    random = mean_pooled_layers(random_like(model, 0), ids, target, **framing)
    mono = np.array([cka(x, y) for x, y in zip(english, trained, strict=True)])
    bound = np.array([cka(x, y) for x, y in zip(english, random, strict=True)])
    return int((mono > bound).sum()), len(mono), mono.mean(), bound.mean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results/demo"))
    parser.add_argument("--targets", nargs="+", default=["fr", "zh"])
    parser.add_argument("--variants", nargs="+", default=["1", "0.5", "0.25", "0.125", "learned"])
    parser.add_argument("--sentences", type=int, default=1000)
    args = parser.parse_args()
    if not (args.results / "vocab/mono/en").is_dir():
        print(f"No {args.results}/vocab/mono/en: run `make demo` first, or name --results.")
        return
    torch.set_num_threads(1)
    demo = yaml.safe_load((REPO / "config/demo.yaml").open())
    lines = {t: parallel_lines(args.results, t, args.sentences) for t in args.targets}
    accuracy_of_demo_table = None
    print(f"{'variant':>8}  masked-token accuracy  " + "  ".join(
        f"en-{t}: layers above random (mono / random CKA)" for t in args.targets
    ) + "  ratio")  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch:
        for variant in args.variants:
            models = Path(scratch) / variant
            accuracy = {
                lang: train(args.results, demo, lang, models / lang, variant)
                for lang in ["en", *args.targets]
            }
            mean_accuracy = float(np.mean(list(accuracy.values())))
            if variant == "1":
                accuracy_of_demo_table = mean_accuracy
            cells = []
            for target in args.targets:
                above, layers, mono, bound = layers_above_random(models, lines[target], target)
                cells.append(f"{above} of {layers} ({mono:.3f} / {bound:.3f})")
            ratio = (
                mean_accuracy / accuracy_of_demo_table if accuracy_of_demo_table else float("nan")
            )
            print(
                f"{variant:>8}  "
                + " ".join(f"{lang} {value:.3f}" for lang, value in accuracy.items())
                + "  " + "  ".join(cells) + f"  {ratio:.2f}"
            )  # fmt: skip


if __name__ == "__main__":
    main()
