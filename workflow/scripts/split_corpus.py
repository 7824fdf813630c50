"""Adapter: gather the tokenized shards in order and split them into train / valid / test."""

import _bootstrap

from xling.preprocess import split_corpus


def main(smk):
    sizes = split_corpus(
        list(smk.input),
        smk.output.train,
        smk.output.valid,
        smk.output.test,
        valid_size=smk.params.valid_sentences,
        test_size=smk.params.test_sentences,
        seed=smk.params.seed,
    )
    print(f"split: {sizes}")


_bootstrap.run(main, snakemake)
