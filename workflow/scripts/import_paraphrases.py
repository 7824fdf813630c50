"""Adapter: en''s paraphrases of the parallel sentences from data.manual_dir (Wu 5.2)."""

import _bootstrap

from xling.acquire.paraphrases import import_paraphrases


def main(smk):
    lines = import_paraphrases(
        smk.params.manual_dir, smk.wildcards.lang, smk.input.english, smk.output[0]
    )
    print(f"{lines} paraphrases of the English parallel sentences")


_bootstrap.run(main, snakemake)
