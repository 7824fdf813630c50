"""How much of the toy world a pretrained model learns: its masked-token accuracy against
count-based predictors of the same dev tokens.

A masked token is guessed from the training stream's counts: the most frequent token (unigram),
the most frequent follower of the token on its left (left bigram), and the most frequent token
between its two neighbours (left + right context, backing off to the bigram). These see at most
two tokens of context; a masked LM sees the whole stream window. If the model stays below them,
its accuracy is the model's limit, not the toy world's entropy. Prints each accuracy and the
ratio of the model's (``summary.json`` dev_acc: 15% of tokens selected, their neighbours
sometimes masked too) to the context predictor's.

    python bench/measurements/masked_token_ceiling.py results/demo/vocab/en-fr/wiki-wiki/joint \\
        results/demo/pretrain/en-fr/default/summary.json
    python bench/measurements/masked_token_ceiling.py   # those two paths of the demo, if it ran
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

EOS_ID = 3  # every line ends with </s> (docs/contracts.md, section 3)
DEMO = Path("results/demo")


def most_frequent(pairs) -> dict:
    counts: dict = defaultdict(Counter)
    for key, token in pairs:
        counts[key][token] += 1
    return {key: c.most_common(1)[0][0] for key, c in counts.items()}


def accuracies(train: np.ndarray, dev: np.ndarray) -> dict[str, float]:
    """Accuracy of the three count predictors on every dev token that is not </s>."""
    train, dev = train.astype(np.int64).tolist(), dev.astype(np.int64).tolist()
    triples = zip(train, train[1:], train[2:], strict=False)
    middle = [(a, b, c) for a, b, c in triples if b != EOS_ID]
    unigram = Counter(b for _, b, _ in middle).most_common(1)[0][0]
    bigram = most_frequent(((a, b) for a, b, _ in middle))
    context = most_frequent((((a, c), b) for a, b, c in middle))
    hits = Counter()
    n = 0
    for a, b, c in zip(dev, dev[1:], dev[2:], strict=False):
        if b == EOS_ID:
            continue
        n += 1
        guess = bigram.get(a, unigram)
        hits["unigram"] += b == unigram
        hits["left bigram"] += b == guess
        hits["left + right context"] += b == context.get((a, c), guess)
    return {name: hits[name] / n for name in ("unigram", "left bigram", "left + right context")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vocab_dir", nargs="?", type=Path)
    parser.add_argument("summary", nargs="?", type=Path, help="a pretrained model's summary.json")
    parser.add_argument("--lang", default="en")
    args = parser.parse_args()
    if args.vocab_dir is None:
        args.vocab_dir = DEMO / "vocab/en-fr/wiki-wiki/joint"
        args.summary = DEMO / "pretrain/en-fr/default/summary.json"
        if not args.vocab_dir.is_dir():
            print(f"No {args.vocab_dir} yet: run `make demo` first, or name a vocab folder.")
            return
    train = np.load(args.vocab_dir / f"{args.lang}.train.npy")
    dev = np.load(args.vocab_dir / f"{args.lang}.valid.npy")
    print(f"{args.vocab_dir} ({args.lang}): {train.size:,} training tokens, {dev.size:,} dev")
    results = accuracies(train, dev)
    for name, value in results.items():
        print(f"{name + ' predictor:':<32}{value:.3f}")
    if args.summary and args.summary.is_file():
        summary = json.loads(args.summary.read_text())
        model = summary["dev_acc"]
        print(f"{'masked LM (' + args.summary.parent.name + '):':<32}{model:.3f}")
        ratio = model / results["left + right context"]
        print(f"ratio (model / left + right context): {ratio:.2f}")


if __name__ == "__main__":
    main()
