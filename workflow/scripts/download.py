"""Adapter: download one configured resource (resume, retries, sha256; a Wikipedia dump also
against the sha1 that Wikimedia publishes beside it)."""

import _bootstrap

from xling.acquire.download import fetch, pinned_sha256
from xling.acquire.wikimedia import published_sha1, sha1_list_url


def main(smk):
    source = smk.params.source
    url = source["url"]
    sha1 = published_sha1(url) if sha1_list_url(url) else None
    fetch(url, smk.output[0], sha256=pinned_sha256(smk.config["data"], *source["pin"]), sha1=sha1)


_bootstrap.run(main, snakemake)
