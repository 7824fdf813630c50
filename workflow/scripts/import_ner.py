"""Adapter: one language of one NER dataset into the WikiAnn format (from data.manual_dir)."""

import _bootstrap

from xling.acquire.ner_import import import_ner


def main(smk):
    outputs = dict(zip(("train", "dev", "test"), smk.output, strict=True))
    counts = import_ner(smk.wildcards.dataset, smk.wildcards.lang, smk.params.manual_dir, outputs)
    print(f"sentences: {counts}")


_bootstrap.run(main, snakemake)
