"""What the demo's word vectors know: part of speech, or the meaning a translation needs.

Every dictionary word of the toy world is the citation form of a lexeme with a kind (noun, verb,
adjective, adverb), and nouns a category, and every lexeme a topic; words of one class (kind,
category, topic) are what a sentence can swap for one another. For each layer of the monolingual
models' contextual vectors (Figure 4b) and for the fastText baseline:

* within a language: does a dictionary word's nearest dictionary word (cosine, after iterative
  normalization) have its kind, and its class?
* across the pair: after the Procrustes map on the MUSE train dictionary (as Figure 4 learns it),
  the CSLS top-1 of each test word among the dictionary's target words: same class as the query?
  and the rank of its gold translation among them, mapped and unmapped.

Chance levels are printed beside. docs/toyworld.md records a run and what it showed.

    python bench/measurements/word_classes.py                              # results/demo, en-fr
    python bench/measurements/word_classes.py --results results/demo --target ru
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np

from xling.analysis.alignment import csls_top1, iterative_normalization, procrustes
from xling.analysis.fasttext_vectors import read_vec
from xling.analysis.words import dictionary_pairs
from xling.analysis.wordvectors import load_word_vectors
from xling.study import load_yaml
from xling.toyworld import resolve_spec
from xling.toyworld.api import build

VOCABULARY = 5000  # analysis.word_alignment.vocabulary of the demo


def lexeme_classes(target: str) -> dict[str, dict[str, tuple]]:
    """Per language, citation form -> (kind, category, topic) of the demo world's content words."""
    spec = load_yaml(Path(__file__).resolve().parents[2] / "config/demo.yaml")["data"]["toyworld"]
    toy = build(resolve_spec(spec))
    world = toy.world

    def of(i):
        lexeme = world.lexemes[i]
        return lexeme.kind, lexeme.category, lexeme.topic

    return {
        lang: {toy.lexicons[lang].citation(i): of(i) for i in world.content_lexemes()}
        for lang in ("en", target)
    }


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def within(words: list[str], vectors: np.ndarray, classes: dict[str, tuple]) -> str:
    """Nearest-neighbour kind and class agreement among the dictionary words, with chance."""
    rows = [n for n, word in enumerate(words) if word in classes]
    labels = [classes[words[n]] for n in rows]
    kinds = [label[0] for label in labels]
    space = unit_rows(iterative_normalization(vectors[rows].astype(np.float64), 5))
    similarity = space @ space.T
    np.fill_diagonal(similarity, -np.inf)
    nearest = similarity.argmax(axis=1)
    same_class = np.mean([labels[i] == labels[j] for i, j in enumerate(nearest)])
    same_kind = np.mean([kinds[i] == kinds[j] for i, j in enumerate(nearest)])

    def chance(values):
        counts = Counter(values)
        return np.mean([(counts[v] - 1) / (len(values) - 1) for v in values])

    return (
        f"kind {same_kind:.3f} (chance {chance(kinds):.3f}), "
        f"class {same_class:.3f} (chance {chance(labels):.3f})"
    )


def across(source, target, train, test, classes, target_lang: str) -> str:
    """After the map: same class as the query among the dictionary's target words, and the gold
    translation's median rank, mapped and unmapped."""
    (source_words, source_vectors), (target_words, target_vectors) = source, target
    source_space = iterative_normalization(source_vectors.astype(np.float64), 5)
    target_space = iterative_normalization(target_vectors.astype(np.float64), 5)
    source_row = {word: n for n, word in enumerate(source_words)}
    target_row = {word: n for n, word in enumerate(target_words)}

    def known(pairs):
        return [
            (source_row[s], target_row[t]) for s, t in pairs if s in source_row and t in target_row
        ]

    train_rows, test_rows = np.array(known(train)), known(test)
    candidates = sorted({t for _, t in train_rows} | {t for _, t in test_rows})
    queries = [s for s, _ in test_rows]
    gold = [candidates.index(t) for _, t in test_rows]
    parts = []
    for mapped in (True, False):
        mapping = np.eye(source_space.shape[1])
        if mapped:
            mapping = procrustes(source_space[train_rows[:, 0]], target_space[train_rows[:, 1]])
        moved = source_space @ mapping
        top = csls_top1(moved[queries], target_space[candidates], k=10, sources=moved)
        same = np.mean(
            [
                classes["en"].get(source_words[q])
                == classes[target_lang].get(target_words[candidates[int(b)]])
                for q, b in zip(queries, top, strict=True)
            ]
        )
        similarity = unit_rows(moved[queries]) @ unit_rows(target_space[candidates]).T
        ranks = [int((row > row[g]).sum()) + 1 for row, g in zip(similarity, gold, strict=True)]
        name = "mapped" if mapped else "unmapped"
        parts.append(f"{name}: class {same:.3f}, gold rank {np.median(ranks):.0f}")
    labels = [classes[target_lang].get(target_words[c]) for c in candidates]
    chance = np.mean(
        [labels.count(classes["en"].get(source_words[q])) / len(labels) for q in queries]
    )
    return f"{'; '.join(parts)} (of {len(candidates)}; chance class {chance:.3f}, n={len(queries)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results/demo"))
    parser.add_argument("--target", default="fr")
    args = parser.parse_args()
    words = args.results / "analysis/words"
    if not (words / args.target / "contextual.npz").is_file():
        print(f"No {words / args.target}/contextual.npz: run `make demo` first, or name --results.")
        return
    classes = lexeme_classes(args.target)
    train, test = (
        dictionary_pairs(args.results / f"data/muse/en-{args.target}.{split}.txt")
        for split in ("train", "test")
    )
    contextual = {
        lang: load_word_vectors(words / lang / "contextual.npz") for lang in ("en", args.target)
    }
    fasttext = {lang: read_vec(words / lang / "fasttext.vec", None) for lang in ("en", args.target)}
    for name, vectors in [
        *(
            (
                f"L{layer}",
                {
                    lang: (w[:VOCABULARY], x[layer][:VOCABULARY])
                    for lang, (w, x) in contextual.items()
                },
            )
            for layer in range(len(contextual["en"][1]))
        ),
        (
            "fastText",
            {
                lang: (w[:VOCABULARY], np.asarray(x)[:VOCABULARY])
                for lang, (w, x) in fasttext.items()
            },
        ),
    ]:
        for lang in ("en", args.target):
            print(f"{name} {lang} nearest neighbour: {within(*vectors[lang], classes[lang])}")
        result = across(vectors["en"], vectors[args.target], train, test, classes, args.target)
        print(f"{name} en-{args.target} {result}")


if __name__ == "__main__":
    main()
