"""Adapter: the first N words of the published fastText vectors (Wu 5.1.1: the first 200k)."""

import _bootstrap

from xling.analysis.fasttext_vectors import keep_first_words


def main(smk):
    kept = keep_first_words(smk.input[0], smk.output[0], smk.params.vocabulary)
    print(f"{kept} word vectors kept")


_bootstrap.run(main, snakemake)
