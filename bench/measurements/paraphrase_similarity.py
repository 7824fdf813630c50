"""How much of Figure 7's en-en' similarity the toy paraphrases cost, on a finished demo run.

Wu et al.'s en' model is trained on the English data with another seed, and its sentences are
back-translations of the English ones: English words its model has seen. The toy world's en'
(`enp`) paraphrases English in English's words, with passives, fronted times and commas (until
2026-11-28 also with synonyms made as new forms: docs/analysis.md, "en' in the demo"). This
prints, for each language's parallel sentences, the share of word tokens that never occur in the
English training text, then Figure 7's en-en' CKA per layer (monolingual pair, bilingual model,
random encoder; `xling.analysis.similarity`, as the `similarity` job computes it) twice: with the
en' model reading the paraphrases (Figure 7) and reading the English sentences themselves.

    python bench/measurements/paraphrase_similarity.py                 # results/demo
    python bench/measurements/paraphrase_similarity.py --results DIR   # another demo run
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import torch

from xling.analysis.loading import load_model_and_tokenizer
from xling.analysis.similarity import figure7_rows, figure7_states
from xling.base.fileio import read_lines

REPO = Path(__file__).resolve().parents[2]


def unseen_share(lines: list[str], known: Counter) -> float:
    tokens = [token for line in lines for token in line.split()]
    return sum(token not in known for token in tokens) / len(tokens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "results" / "demo")
    parser.add_argument("--sentences", type=int, default=2000, help="analysis.cka.sentences")
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = args.results
    needed = [results / "pretrain" / name / "model" for name in ("mono/en", "mono/enp")]
    needed.append(results / "pretrain/en-enp/sep_emb/model")
    if missing := [path for path in needed if not path.is_dir()]:
        print(f"No {missing[0]}: run `make demo` first, or name the results folder.")
        return
    english_train = Counter(
        token
        for line in read_lines(results / "preprocess" / "wiki" / "en.train.txt")
        for token in line.split()
    )
    parallel = {
        path.stem: read_lines(path)
        for path in sorted((results / "preprocess/parallel").glob("*.txt"))
    }
    for lang, lines in parallel.items():
        share = unseen_share(lines, english_train)
        print(
            f"{lang}: {share:.3f} of the parallel tokens never occur in the English training text"
        )

    models = results / "pretrain"
    source = (*load_model_and_tokenizer(models / "mono" / "en" / "model"), "en")
    prime = (*load_model_and_tokenizer(models / "mono" / "enp" / "model"), "en")
    bilingual = (*load_model_and_tokenizer(models / "en-enp" / "sep_emb" / "model"), ("en", "enp"))
    readings = {"the en' paraphrases (Figure 7)": "enp", "the English sentences themselves": "en"}
    for reading, lang in readings.items():
        states = figure7_states(
            source, prime, bilingual, parallel["en"], parallel[lang],
            sentences=args.sentences, seed=args.seed,
        )  # fmt: skip
        by_encoder: dict[str, list[float]] = {}
        for row in figure7_rows(states, debiased=False):
            by_encoder.setdefault(row["encoder"], []).append(row["cka"])
        print(f"en-en' CKA, the en' side reading {reading}:")
        for encoder, values in by_encoder.items():
            layers = " ".join(f"{value:.3f}" for value in values)
            mean = sum(values) / len(values)
            print(f"  {encoder:11s} L0-L{len(values) - 1}: {layers}; mean {mean:.3f}")
        pairs = zip(by_encoder["monolingual"], by_encoder["random"], strict=True)
        above = sum(mono > random for mono, random in pairs)
        print(f"  monolingual above the random encoder in {above} of {len(values)} layers")


if __name__ == "__main__":
    main()
