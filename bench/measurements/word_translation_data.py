"""How much text word translation needs in the toy world: fastText vectors of two toy languages,
aligned by Procrustes on the MUSE train dictionary, CSLS P@1 on its test dictionary (Wu §5.1.1),
as the demo's corpus grows.

The demo's Wikipedia corpus has 10,000 sentences a language (9,000 for training). Its masked LMs map
the train dictionary well (P@1 0.6-0.8 on the training pairs themselves) but translate the test
words at 0.00-0.07, and its fastText baseline (5 epochs) no better. For fastText this bench shows it
is the amount of text; the masked LMs stay near zero with 8x the text as well
(bench/measurements/word_translation_more_text.yaml). This bench regenerates the demo world with
larger corpora (same seed, same lexicons and dictionaries), tokenizes them with the demo's own
pipeline, trains fastText as the demo does, with 5 and 20 epochs, and prints P@1, with and without
the map (every setting but the epochs read from config/demo.yaml). The ratio is P@1 at the largest
corpus over P@1 at the demo's size. fastText trains with 2 threads and is not deterministic: two
runs differ by up to 0.07.

    python bench/measurements/word_translation_data.py                  # 10k and 80k sentences
    python bench/measurements/word_translation_data.py --sentences 10000 40000 --targets fr
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from pathlib import Path

from xling.analysis.alignment import translation_p_at_1
from xling.analysis.fasttext_training import train_fasttext
from xling.analysis.fasttext_vectors import read_vec
from xling.base import yamlfile
from xling.contracts.muse import read_muse
from xling.preprocess import pipeline_for_language, tokenize_file
from xling.toyworld import DEMO_SPEC, generate

DEMO = yamlfile.load(Path(__file__).resolve().parents[2] / "config/demo.yaml")
WORDS = DEMO["analysis"]["word_alignment"]


def world_with_corpus(sentences: int, targets: list[str], out: Path) -> Path:
    """The demo world with `sentences` Wikipedia sentences a language (only en and `targets`)."""
    spec = copy.deepcopy(DEMO_SPEC)
    spec["languages"] = ["en", *targets]
    spec["profiles"] = {lang: spec["profiles"][lang] for lang in spec["languages"]}
    spec["sizes"]["corpus"] = {"wiki": sentences, "cc": 1}
    generate(spec, out)
    return out


def vectors(world: Path, lang: str, epochs: int, scratch: Path):
    corpus = next(world.rglob(f"corpus/wiki/{lang}.txt"))
    tokens = scratch / f"{lang}.tok"
    if not tokens.exists():  # the demo's text pipeline, from its config as the workflow builds it
        pipeline = pipeline_for_language(
            lang,
            segmenters={name: entry["segmenter"] for name, entry in DEMO["languages"].items()},
            lowercase=DEMO["preprocess"]["lowercase"],
            remove_accents=DEMO["preprocess"]["remove_accents"],
        )
        tokenize_file(corpus, tokens, pipeline)
    vec = scratch / f"{lang}.{epochs}.vec"
    fasttext = WORDS["fasttext"]
    train_fasttext(
        tokens, vec, dim=fasttext["dim"], epochs=epochs, min_count=fasttext["min_count"],
        seed=DEMO["seed"], threads=2, max_words=WORDS["vocabulary"],
    )  # fmt: skip
    return read_vec(vec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, nargs="+", default=[10_000, 80_000])
    parser.add_argument("--targets", nargs="+", default=["fr", "de", "ru"])
    parser.add_argument("--epochs", type=int, nargs="+", default=[5, 20])
    args = parser.parse_args()

    print("sentences  epochs  pair   mapped P@1  unmapped P@1  test words  seconds")
    first: dict[tuple[int, str], float] = {}
    last: dict[tuple[int, str], float] = {}
    for sentences in args.sentences:
        with tempfile.TemporaryDirectory() as tmp:
            world = world_with_corpus(sentences, args.targets, Path(tmp) / "world")
            for epochs in args.epochs:
                start = time.perf_counter()
                english = vectors(world, "en", epochs, Path(tmp))
                for target in args.targets:
                    other = vectors(world, target, epochs, Path(tmp))
                    muse = next(world.rglob(f"muse/en-{target}.train.txt"))
                    train = read_muse(muse)
                    test = read_muse(muse.with_name(f"en-{target}.test.txt"))
                    mapped, unmapped = (
                        translation_p_at_1(
                            english,
                            other,
                            train,
                            test,
                            k=WORDS["csls_k"],
                            normalize_rounds=WORDS["normalize_rounds"],
                            map_spaces=flag,
                        )
                        for flag in (True, False)
                    )
                    seconds = time.perf_counter() - start
                    print(
                        f"{sentences:>9}  {epochs:>6}  en-{target}  {mapped['p_at_1']:>10.3f}"
                        f"  {unmapped['p_at_1']:>12.3f}  {mapped['n_test_words']:>10}"
                        f"  {seconds:>7.0f}",
                        flush=True,
                    )
                    first.setdefault((epochs, target), mapped["p_at_1"])
                    last[(epochs, target)] = mapped["p_at_1"]
    for (epochs, target), p_at_1 in last.items():
        base = first[(epochs, target)]
        ratio = f"{p_at_1 / base:.1f}" if base > 0 else "inf (0 at the smallest corpus)"
        print(f"ratio P@1 {args.sentences[-1]} / {args.sentences[0]} sentences, en-{target}, "
              f"{epochs} epochs: {ratio}")  # fmt: skip


if __name__ == "__main__":
    main()
