"""Adapter: a Wikipedia dump -> one paragraph a line, with wikiextractor."""

import _bootstrap

from xling.preprocess import extract_wikipedia


def main(smk):
    paragraphs = extract_wikipedia(smk.input[0], smk.output[0], processes=smk.threads)
    print(f"{paragraphs} paragraphs")


_bootstrap.run(main, snakemake)
