"""Adapter: one vocabulary (a scheme over the languages of a pair, or one language's own BPE)
-> tokenizer/, binarized corpora, stats.json."""

import os

import _bootstrap

# HF tokenizers sizes its thread pool from the machine, not from the job's share of it.
os.environ.setdefault("RAYON_NUM_THREADS", str(snakemake.threads))

from xling.vocab import VocabSettings, build_vocabulary


def main(smk):
    languages, scheme, labels = smk.params.languages, smk.params.scheme, smk.params.labels
    corpora = {
        lang: {split: smk.input[f"{lang}_{split}"] for split in ("train", "valid", "test")}
        for lang in languages
    }
    settings = VocabSettings.from_scheme_section(
        scheme,
        smk.params.scheme_settings,
        backend=smk.params.backend,
        bpe_sentences_per_language=smk.params.bpe_sentences_per_language,
        seed=smk.params.seed,
    )
    stats = build_vocabulary(
        scheme,
        smk.output[0],
        corpora=corpora,
        pipelines={lang: smk.params.pipelines[lang] for lang in languages},
        settings=settings,
        # The pair's bilingual dictionary is an input of the codeswitch scheme only.
        dictionaries={labels["pair"]: smk.input.dictionary} if scheme == "codeswitch" else None,
        **labels,
    )
    print(f"vocabulary of {labels} {scheme}: {stats.get('vocab_size')} types")


_bootstrap.run(main, snakemake)
