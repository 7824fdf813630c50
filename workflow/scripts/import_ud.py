"""Adapter: one UD treebank into the contract layout (validated while copied)."""

import _bootstrap

from xling.acquire.ud import import_treebank


def main(smk):
    outputs = dict(zip(("train", "dev", "test"), smk.output, strict=True))
    counts = import_treebank(smk.input[0], smk.params.treebank, outputs)
    print(f"{smk.params.treebank}: sentences {counts}")


_bootstrap.run(main, snakemake)
