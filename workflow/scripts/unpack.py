"""Adapter: unpack a downloaded archive safely."""

import _bootstrap

from xling.acquire.archive import safe_extract


def main(smk):
    safe_extract(smk.input[0], smk.output[0])


_bootstrap.run(main, snakemake)
