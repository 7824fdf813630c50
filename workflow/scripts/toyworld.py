"""Adapter: generate the toy world (the demo study's data) under R/data/."""

import _bootstrap

from xling.toyworld import generate


def main(smk):
    written = generate(smk.params.spec, smk.params.out_dir)
    print(f"{len(written)} files written under {smk.params.out_dir}")


_bootstrap.run(main, snakemake)
