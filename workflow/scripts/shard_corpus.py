"""Adapter: scatter one raw corpus into the configured number of shards."""

import _bootstrap

from xling.preprocess import split_into_shards


def main(smk):
    sizes = split_into_shards(smk.input[0], list(smk.output))
    print(f"{sum(sizes)} lines into {len(sizes)} shards: {sizes}")


_bootstrap.run(main, snakemake)
