"""Adapter: download one configured resource (resume, retries, sha256)."""

import _bootstrap

from xling.acquire.download import fetch


def main(smk):
    source = smk.params.source
    fetch(source["url"], smk.output[0], sha256=source.get("sha256"))


_bootstrap.run(main, snakemake)
