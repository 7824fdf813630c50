"""Adapter: one vocabulary scheme of one pair -> tokenizer/, binarized corpora, stats.json."""

import os

import _bootstrap

# HF tokenizers sizes its thread pool from the machine, not from the job's share of it.
os.environ.setdefault("RAYON_NUM_THREADS", str(snakemake.threads))

from xling.preprocess import TextPipeline
from xling.vocab import CodeSwitchSettings, build_vocabulary


def main(smk):
    pair, domains, scheme = smk.wildcards.pair, smk.wildcards.domains, smk.wildcards.scheme
    languages = pair.split("-")
    corpora = {
        lang: {split: smk.input[f"{lang}_{split}"] for split in ("train", "valid", "test")}
        for lang in languages
    }
    settings = smk.params.scheme_settings
    codeswitch = None
    if scheme == "codeswitch":
        codeswitch = CodeSwitchSettings(
            dictionaries={pair: smk.input.dictionary},
            batch_words=settings["batch_words"],
            replace_prob=settings["replace_prob"],
            max_changed_share=settings["max_changed_share"],
        )
    stats = build_vocabulary(
        scheme,
        smk.output[0],
        corpora=corpora,
        pipelines={lang: TextPipeline.from_dict(smk.params.pipelines[lang]) for lang in languages},
        merges=settings["merges"],
        bpe_sentences=smk.params.bpe_sentences_per_language,
        seed=smk.params.seed,
        bpe_backend=smk.params.backend,
        codeswitch=codeswitch,
        pair=pair,
        domains=domains,
    )
    print(f"vocabulary of {pair} {domains} {scheme}: {stats.get('vocab_size')} types")


_bootstrap.run(main, snakemake)
