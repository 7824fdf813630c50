"""Adapter: the XNLI files the study reads, from the unpacked XNLI-1.0 and XNLI-MT-1.0."""

import _bootstrap

from xling.acquire.xnli import import_xnli


def main(smk):
    import_xnli(
        smk.input.xnli, smk.input.xnli_mt, smk.output.dev, smk.output.test, smk.output.train
    )


_bootstrap.run(main, snakemake)
