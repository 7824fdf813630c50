"""How much of the demo's CKA is sentence length.

Figure 7 (Wu et al.): the English monolingual model's layers against (a) the target's monolingual
model, (b) the random encoder on the target side (the paper's lower bound), and (c) a feature that
knows nothing but the target sentence's length, the mean of the fixed sinusoidal position vectors
over its subwords. Where (b) and (c) agree, the random bound measures length.

``--muller``: the same three columns for Muller et al.'s multilingual model (its parallel sentences,
English against every other language), plus (d) the trained model's CKA after the length feature
is regressed out of both sides, which shows where the similarity of the content peaks.

docs/analysis.md records runs of both and what they showed.

    python bench/measurements/cka_length.py                        # results/demo, en-fr
    python bench/measurements/cka_length.py --results results/demo --target ru
    python bench/measurements/cka_length.py --muller
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from xling.analysis.cka import cka
from xling.analysis.loading import load_model_and_tokenizer
from xling.analysis.representations import framing, mean_pooled_layers
from xling.model.encoder import sinusoidal_table
from xling.model.random_init import random_like


def encoded(model_dir: Path, lines: list[str], lang: str):
    """The model, its framing tokens and the subword ids of ``lines``."""
    model, tokenizer = load_model_and_tokenizer(model_dir)
    return model, framing(tokenizer), [tokenizer.encode_tokenized(line, lang) for line in lines]


def length_only(model, ids) -> np.ndarray:
    """Per sentence, the mean fixed position vector of its subwords (positions 1..n; position 0
    is the framing ``</s>``)."""
    table = sinusoidal_table(model.config.max_positions, model.config.dim).numpy()
    return np.stack([table[1 : len(sentence) + 1].mean(0) for sentence in ids]).astype(np.float64)


def without(x, feature: np.ndarray) -> np.ndarray:
    """``x`` (centred) less its least-squares fit on ``feature`` (centred)."""
    x = np.asarray(x, dtype=np.float64)
    x, feature = x - x.mean(0), feature - feature.mean(0)
    return x - feature @ np.linalg.lstsq(feature, x, rcond=None)[0]


def parallel_lines(results: Path, target: str, sentences: int) -> dict[str, list[str]]:
    """The first ``sentences`` tokenized parallel lines of en and ``target``, pairs with an empty
    side left out."""
    parallel = results / "preprocess/parallel"
    lines = {
        lang: [line.strip() for line in (parallel / f"{lang}.txt").open()][:sentences]
        for lang in ("en", target)
    }
    keep = [i for i, pair in enumerate(zip(*lines.values(), strict=True)) if all(pair)]
    return {lang: [text[i] for i in keep] for lang, text in lines.items()}


def wu_figure7(results: Path, target: str, sentences: int) -> None:
    mono = results / "pretrain/mono"
    if not (mono / target / "model").is_dir():
        print(f"No {mono / target}/model: run `make demo` first, or name --results.")
        return
    lines = parallel_lines(results, target, sentences)
    en_model, en_framing, en_ids = encoded(mono / "en/model", lines["en"], "en")
    english = mean_pooled_layers(en_model, en_ids, "en", **en_framing)
    model, special, ids = encoded(mono / target / "model", lines[target], target)
    trained = mean_pooled_layers(model, ids, target, **special)
    random = mean_pooled_layers(random_like(model, 0), ids, target, **special)
    length = length_only(model, ids)
    print(f"en-{target}, {len(lines['en'])} parallel sentences: CKA of the English layer with")
    print(f"{'layer':>5} {'monolingual':>12} {'random':>8} {'length only':>12}")
    for layer, x in enumerate(english):
        print(
            f"{layer:>5} {cka(x, trained[layer]):>12.3f} {cka(x, random[layer]):>8.3f}"
            f" {cka(x, length):>12.3f}"
        )


def muller_similarity(results: Path) -> None:
    model_dir, parallel = results / "pretrain/multi/model", results / "muller/encoded/parallel.pt"
    if not parallel.is_file():
        print(f"No {parallel}: run `make demo` first, or name --results.")
        return
    model, tokenizer = load_model_and_tokenizer(model_dir)
    ids = torch.load(parallel, weights_only=True)
    special = framing(tokenizer)
    trained = {lang: mean_pooled_layers(model, ids[lang], lang, **special) for lang in ids}
    fresh = random_like(model, 0)
    length = {lang: length_only(model, ids[lang]) for lang in ids}
    for target in (lang for lang in ids if lang != "en"):
        random = mean_pooled_layers(fresh, ids[target], target, **special)
        sizes = [np.array([len(s) for s in ids[lang]]) for lang in ("en", target)]
        print(
            f"en-{target}, {len(ids[target])} parallel sentences, subword counts correlate at"
            f" {np.corrcoef(*sizes)[0, 1]:.2f}: CKA of the English layer with"
        )
        print(f"{'layer':>5} {'trained':>8} {'random':>8} {'length only':>12} {'less length':>12}")
        for layer, x in enumerate(trained["en"]):
            y = trained[target][layer]
            content = cka(without(x, length["en"]), without(y, length[target]))
            print(
                f"{layer:>5} {cka(x, y):>8.3f} {cka(x, random[layer]):>8.3f}"
                f" {cka(x, length[target]):>12.3f} {content:>12.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results/demo"))
    parser.add_argument("--target", default="fr")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--muller", action="store_true", help="Muller et al.'s model instead")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.muller:
        muller_similarity(args.results)
    else:
        wu_figure7(args.results, args.target, args.sentences)


if __name__ == "__main__":
    main()
