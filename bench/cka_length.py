"""How much of Figure 7's CKA is sentence length: the English monolingual model's layers against
(a) the target's monolingual model, (b) the random encoder on the target side (the paper's lower
bound), and (c) a feature that knows nothing but the target sentence's length, the mean of the
fixed sinusoidal position vectors over its subwords. Where (b) and (c) agree, the random bound
measures length. docs/analysis.md records a run of it and what it showed.

    python bench/cka_length.py                        # results/demo, en-fr
    python bench/cka_length.py --results results/demo --target ru
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from xling.analysis.cka import cka
from xling.analysis.loading import load_model_and_tokenizer
from xling.analysis.representations import framing, mean_pooled_layers
from xling.model.encoder import sinusoidal_table
from xling.model.random_init import random_like


def encoded(model_dir: Path, lines: list[str], lang: str):
    """The model, its framing tokens and the subword ids of ``lines``."""
    model, tokenizer = load_model_and_tokenizer(model_dir)
    return model, framing(tokenizer), [tokenizer.encode_tokenized(line, lang) for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results/demo"))
    parser.add_argument("--target", default="fr")
    parser.add_argument("--sentences", type=int, default=1000)
    args = parser.parse_args()
    mono, parallel = args.results / "pretrain/mono", args.results / "preprocess/parallel"
    if not (mono / args.target / "model").is_dir():
        print(f"No {mono / args.target}/model: run `make demo` first, or name --results.")
        return
    lines = {
        lang: [line.strip() for line in (parallel / f"{lang}.txt").open()][: args.sentences]
        for lang in ("en", args.target)
    }
    keep = [i for i, pair in enumerate(zip(*lines.values(), strict=True)) if all(pair)]
    lines = {lang: [text[i] for i in keep] for lang, text in lines.items()}
    en_model, en_framing, en_ids = encoded(mono / "en/model", lines["en"], "en")
    english = mean_pooled_layers(en_model, en_ids, "en", **en_framing)
    model, special, ids = encoded(mono / args.target / "model", lines[args.target], args.target)
    target = mean_pooled_layers(model, ids, args.target, **special)
    random = mean_pooled_layers(random_like(model, 0), ids, args.target, **special)
    # Subwords sit at positions 1..n (position 0 is the framing </s>).
    table = sinusoidal_table(model.config.max_positions, model.config.dim).numpy()
    length_only = np.stack([table[1 : len(sentence) + 1].mean(0) for sentence in ids])
    print(f"en-{args.target}, {len(keep)} parallel sentences: CKA of the English layer with")
    print(f"{'layer':>5} {'monolingual':>12} {'random':>8} {'length only':>12}")
    for layer, x in enumerate(english):
        print(
            f"{layer:>5} {cka(x, target[layer]):>12.3f} {cka(x, random[layer]):>8.3f}"
            f" {cka(x, length_only):>12.3f}"
        )


if __name__ == "__main__":
    main()
