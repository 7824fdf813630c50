"""Adapter: a random Common Crawl subset as large as the language's Wikipedia text (Wu §4.1)."""

import _bootstrap

from xling.acquire.commoncrawl import sample_to_size, text_bytes


def main(smk):
    target = text_bytes(smk.input.wikipedia)
    lines = sample_to_size(smk.input.commoncrawl, target, smk.output[0], seed=smk.params.seed)
    print(f"{lines} Common Crawl lines sampled to match {target} bytes of Wikipedia text")


_bootstrap.run(main, snakemake)
