"""Adapter: multi-way parallel sentences from XNLI dev + test (Wu §5.2)."""

import _bootstrap

from xling.acquire.xnli import write_parallel


def main(smk):
    outputs = dict(zip(smk.params.languages, smk.output, strict=True))
    lines = write_parallel([smk.input.dev, smk.input.test], outputs)
    print(f"{lines} parallel sentences in {len(outputs)} languages")


_bootstrap.run(main, snakemake)
