"""Adapter: one UD treebank into the contract layout (validated while copied)."""

import _bootstrap

from xling.acquire.ud import import_treebank


def main(smk):
    outputs = dict(smk.output.items())  # split -> file, named in the rule
    counts = import_treebank(smk.input[0], smk.params.treebank, outputs)
    print(f"{smk.params.treebank}: sentences {counts}")


_bootstrap.run(main, snakemake)
