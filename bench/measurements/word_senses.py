"""How much of the toy world's word meaning a masked LM learns, against fastText on the same text.

The toy world gives every content word a sense vector and every sentence a scene; a document's
sentences share one (docs/toyworld.md, "Senses"). Two words' pointwise mutual information grows
with the dot product of their sense vectors, so vectors learned from the text should put words
of similar sense close together. This bench scores a set of word vectors by the Spearman
correlation between the cosine of two words' vectors and the dot product of their sense vectors,
over every pair of dictionary words of one kind (verb, adjective, adverb; nouns of one category). It
scores the demo run's fastText vectors (what Figure 4 compares with) and then pretrains the
demo's monolingual English MLM (config/demo.yaml's architecture and settings, one thread) for
more and more steps, and a wider one, and scores its contextual word vectors per layer (each word
the average of its subword vectors over its occurrences, as Figure 4b), printing for each the
best layer's correlation and its ratio to fastText's.

    python bench/measurements/word_senses.py                   # after toyworld_senses.yaml's run
    python bench/measurements/word_senses.py --runs demo 1500  # only some of the runs

docs/toyworld.md records a run and what it showed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from snakemake.utils import update_config

from xling.analysis.contextual import contextual_word_vectors
from xling.analysis.fasttext_vectors import read_vec
from xling.analysis.wordvectors import corpus_sentences
from xling.base import yamlfile
from xling.model import load_pretrained
from xling.pretrain.engine import pretrain_in_folder
from xling.pretrain.settings import PretrainSettings
from xling.study.keys import PRETRAIN_JOB_KEYS
from xling.toyworld import build, resolve_spec
from xling.vocab import SubwordTokenizer

REPO = Path(__file__).resolve().parents[2]
SENSES = Path(__file__).resolve().with_name("toyworld_senses.yaml")  # the study this reads
# name -> (changes to the demo's pretraining settings, changes to its architecture)
RUNS = {
    "demo": ({}, {}),
    "1500": ({"total_steps": 1500}, {}),
    "3000": ({"total_steps": 3000}, {}),
    "3000, 4 layers x 128": ({"total_steps": 3000}, {"layers": 4, "dim": 128, "ffn_dim": 512}),
}


def sense_correlation(world, forms: dict[int, str], words: list[str], vectors: np.ndarray) -> float:
    """Spearman correlation of cosine and sense dot product over pairs of words of one kind (of
    one category, for nouns)."""
    row = {w: i for i, w in enumerate(words)}
    kept = [lex for lex, form in forms.items() if form in row and any(world.sense[lex])]
    matrix = np.stack([vectors[row[forms[lex]]] for lex in kept]).astype(np.float64)
    matrix -= matrix.mean(axis=0)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    senses = np.array([world.sense[lex] for lex in kept])
    # A noun's category decides its contexts before its sense does: compare within categories.
    groups = np.array([f"{world.lexemes[lex].kind}.{world.lexemes[lex].category}" for lex in kept])
    upper = np.triu_indices(len(kept), 1)
    same_group = (groups[:, None] == groups[None, :])[upper]
    cosine, dot = (matrix @ matrix.T)[upper], (senses @ senses.T)[upper]
    return float(spearmanr(cosine[same_group], dot[same_group]).statistic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--configs",
        type=Path,
        nargs="+",
        default=[REPO / "config/demo.yaml", SENSES],
        help="config files, merged in order as Snakemake merges them",
    )
    parser.add_argument("--results", type=Path, help="default: results/<the config's study>")
    parser.add_argument("--runs", nargs="+", default=list(RUNS), help=f"of {list(RUNS)}")
    parser.add_argument("--sentences", type=int, default=2000, help="for the contextual vectors")
    args = parser.parse_args()
    demo: dict = {}
    for path in args.configs:
        update_config(demo, yamlfile.load(path))
    results = args.results or REPO / "results" / demo["study"]
    toy = build(resolve_spec(demo["data"]["toyworld"]))
    if not toy.world.sense:
        raise SystemExit(f"{args.configs}: the toy world has no senses (lexicon.senses.strength 0)")
    # The citation form is what the corpus writes for singular nouns, adjectives and adverbs.
    forms = {lex: toy.lexicons["en"].stems[lex] for lex in toy.world.sense}
    vocab_dir = results / "vocab/mono/en"
    corpus = results / "preprocess/wiki/en.train.txt"
    fasttext = results / "analysis/words/en/fasttext.vec"
    for path in (vocab_dir / "en.train.npy", corpus, fasttext):
        if not path.exists():
            print(f"{path} is missing: run the study of {SENSES.relative_to(REPO)} first")
            return

    baseline = sense_correlation(toy.world, forms, *read_vec(fasttext))
    print(f"fastText (the demo's Figure 4 baseline): {baseline:.3f}")
    print(f"{'masked LM':<24}{'dev acc':>8}  per layer L0..Ln{'':>30}best  ratio to fastText")
    for name in args.runs:
        changes, architecture = RUNS[name]
        # The demo's pretraining settings as the workflow passes them, one thread.
        fields = {k: v for k, v in demo["pretrain"].items() if k not in PRETRAIN_JOB_KEYS}
        settings = PretrainSettings(
            architecture={**demo["model"], **architecture},
            seed=demo["seed"],
            **{**fields, **changes, "threads": 1},
        )
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            started = time.perf_counter()
            summary = pretrain_in_folder(
                out, vocab_dir, ["en"], settings, tokenizer_dir=vocab_dir / "tokenizer"
            )
            model = load_pretrained(out / "model")
            tokenizer = SubwordTokenizer.load(out / "model/tokenizer")
            words, layers = contextual_word_vectors(
                model, tokenizer, corpus_sentences(corpus, args.sentences, demo["seed"]), "en",
                words=set(forms.values()),
            )  # fmt: skip
        scores = [sense_correlation(toy.world, forms, words, layer) for layer in layers]
        best = max(scores)
        print(
            f"{name:<24}{summary['dev_acc']:>8.3f}  "
            + " ".join(f"{s:.2f}" for s in scores)
            + f"  {best:.3f}  {best / baseline:.2f}  ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
