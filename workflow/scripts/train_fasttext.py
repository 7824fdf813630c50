"""Adapter: the demo's fastText baseline vectors (Wu 5.1.1) on one language's training text."""

import _bootstrap

from xling.analysis.fasttext_training import train_fasttext


def main(smk):
    settings = smk.params.settings
    words = train_fasttext(
        smk.input[0],
        smk.output[0],
        **settings["fasttext"],
        seed=smk.params.seed,
        threads=smk.threads,  # one thread: bit-identical reruns
        max_words=settings["vocabulary"],
    )
    print(f"{words} word vectors")


_bootstrap.run(main, snakemake)
