"""Adapter: one language of one UD dataset into the contract layout (validated while copied)."""

import _bootstrap

from xling.acquire.ud import import_ud


def main(smk):
    outputs = dict(smk.output.items())  # split -> file, named in the rule
    release = list(smk.input.release)
    release_dir = release[0] if release else None  # none for a manual dataset
    counts = import_ud(smk.params.source, outputs, release_dir)
    print(f"{smk.params.source}: sentences {counts}")


_bootstrap.run(main, snakemake)
