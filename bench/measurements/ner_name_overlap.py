"""How much of zero-shot NER a lookup of names could do: the share of each language's test entity
mentions that the English training set already holds, written the same.

In the demo's toy world a French name is an anchor (written as in English), so a French test
mention the English NER training set holds is found by its string alone, whatever the encoder has
learned of French. Printed per language: the test mentions seen in its own training set, and those
identical to an English training mention (type and words). docs/notebook/demo_budget.md ("Ten
times the named entities") records a run and what it showed.

    python bench/measurements/ner_name_overlap.py                      # results/demo's NER data
    python bench/measurements/ner_name_overlap.py --data results/demo/data/ner/toy --languages fr ru
"""

from __future__ import annotations

import argparse
from pathlib import Path

from seqeval.metrics.sequence_labeling import get_entities

from xling.contracts.ner import read_ner


def mentions(path: Path, lang: str) -> list[tuple[str, str]]:
    """Every entity mention of a file as (type, words joined by spaces), in file order."""
    found = []
    for sentence in read_ner(path, lang):
        for kind, start, end in get_entities(sentence.tags):
            found.append((kind, " ".join(sentence.words[start : end + 1])))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("results/demo/data/ner/toy"))
    parser.add_argument("--languages", nargs="+", default=["fr", "de", "ru", "zh"])
    args = parser.parse_args()
    if not (args.data / "en/train.txt").is_file():
        print(f"No {args.data}/en/train.txt: run `make demo` first, or name --data.")
        return
    english = mentions(args.data / "en/train.txt", "en")
    known = set(english)
    print(f"English training set: {len(english)} mentions of {len(known)} entities")
    for lang in ["en", *args.languages]:
        test = mentions(args.data / f"{lang}/test.txt", lang)
        own = set(mentions(args.data / f"{lang}/train.txt", lang))
        seen = sum(mention in own for mention in test) / len(test)
        same = sum(mention in known for mention in test) / len(test)
        print(
            f"{lang}: {len(test)} test mentions; seen in its own training set {seen:.3f}; "
            f"identical to an English training mention {same:.3f}"
        )


if __name__ == "__main__":
    main()
