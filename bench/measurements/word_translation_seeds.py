"""How far a map can carry the demo's word vectors: two English models against English and French.

Figure 4 maps the monolingual en model's contextual word vectors onto the fr model's and
translates the MUSE test words at P@1 0.00-0.05. This bench asks what the same recipe reaches when
nothing is foreign: it pretrains a second English model on the same text and vocabulary with
another seed (the demo's settings, one thread), averages its contextual vectors over the same
sentences as the demo's rule, and maps English onto English on the English side of the MUSE
dictionaries (each word its own translation). Per layer it prints P@1 mapped and unmapped for
en -> en (other seed), beside the demo's own en -> fr, and their ratio: the share of the
same-language ceiling the cross-lingual map reaches. With ``--steps`` all three models (en,
en with the other seed, the target) are pretrained anew for that many steps (about 30 s a 500
steps each). docs/toyworld.md records runs and what they showed.

    python bench/measurements/word_translation_seeds.py       # needs results/demo (make demo)
    python bench/measurements/word_translation_seeds.py --target ru --seed 7
    python bench/measurements/word_translation_seeds.py --steps 3000
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from pathlib import Path

import torch
import yaml
from position_table import REPO, train

from xling.analysis.alignment import translation_p_at_1
from xling.analysis.contextual import contextual_word_vectors
from xling.analysis.words import dictionary_pairs
from xling.analysis.wordvectors import corpus_sentences, frequent_words, load_word_vectors
from xling.model import load_pretrained
from xling.vocab import SubwordTokenizer


def trained_vectors(results: Path, demo: dict, lang: str, seed: int, scratch: Path):
    """Words and per-layer vectors of a ``lang`` model pretrained with ``seed``, averaged over
    the sentences the demo's rule uses."""
    accuracy = train(results, demo, lang, scratch, seed=seed)
    print(f"{lang}, seed {seed}: masked-token accuracy {accuracy:.3f}")
    model = load_pretrained(scratch / "model")
    tokenizer = SubwordTokenizer.load(scratch / "model/tokenizer")
    settings = demo["analysis"]["word_alignment"]
    corpus = results / f"preprocess/wiki/{lang}.train.txt"
    sentences = settings["contextual_sentences"]
    vocabulary = frequent_words(corpus, sentences, settings["vocabulary"], demo["seed"])
    drawn = corpus_sentences(corpus, sentences, demo["seed"])
    return contextual_word_vectors(model, tokenizer, drawn, lang, words=vocabulary)


def p_at_1(source, target, train_pairs, test_pairs, map_spaces: bool) -> float:
    result = translation_p_at_1(source, target, train_pairs, test_pairs, map_spaces=map_spaces)
    return result["p_at_1"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results/demo"))
    parser.add_argument("--target", default="fr")
    parser.add_argument("--seed", type=int, default=4321)
    parser.add_argument("--steps", type=int, help="pretrain all three models anew this long")
    args = parser.parse_args()
    words = args.results / "analysis/words"
    if not (words / args.target / "contextual.npz").is_file():
        print(f"No {words}/{args.target}/contextual.npz: run `make demo` first, or name --results.")
        return
    torch.set_num_threads(1)
    demo = yaml.safe_load((REPO / "config/demo.yaml").open())
    muse = args.results / f"data/muse/en-{args.target}"
    train_pairs = dictionary_pairs(f"{muse}.train.txt")
    test_pairs = dictionary_pairs(f"{muse}.test.txt")
    same = [[(word, word) for word, _ in pairs] for pairs in (train_pairs, test_pairs)]
    with tempfile.TemporaryDirectory() as scratch:
        if args.steps:
            demo = copy.deepcopy(demo)
            demo["pretrain"]["total_steps"] = args.steps
            en_words, en_layers = trained_vectors(
                args.results, demo, "en", demo["seed"], Path(scratch) / "en"
            )
            target_words, target_layers = trained_vectors(
                args.results, demo, args.target, demo["seed"], Path(scratch) / args.target
            )
        else:
            en_words, en_layers = load_word_vectors(words / "en/contextual.npz")
            target_words, target_layers = load_word_vectors(words / args.target / "contextual.npz")
        other_words, other_layers = trained_vectors(
            args.results, demo, "en", args.seed, Path(scratch) / "en_other"
        )
    print(f"P@1 mapped / unmapped; ratio: en -> {args.target} over en -> en, mapped")
    print(f"{'layer':<6}{'en -> en (seed ' + str(args.seed) + ')':>24}{'en -> ' + args.target:>16}"
          f"{'ratio':>8}")  # fmt: skip
    for layer, (en, other, target) in enumerate(
        zip(en_layers, other_layers, target_layers, strict=True)
    ):
        english = (en_words, en.astype("float64"))
        second = (other_words, other.astype("float64"))
        foreign = (target_words, target.astype("float64"))
        ceiling = [p_at_1(english, second, *same, mapped) for mapped in (True, False)]
        cross = [p_at_1(english, foreign, train_pairs, test_pairs, m) for m in (True, False)]
        ratio = cross[0] / ceiling[0] if ceiling[0] else float("nan")
        print(
            f"{'L' + str(layer):<6}{ceiling[0]:>17.2f} / {ceiling[1]:.2f}"
            f"{cross[0]:>9.2f} / {cross[1]:.2f}{ratio:>8.2f}"
        )


if __name__ == "__main__":
    main()
