"""Adapter: per-layer maps from the target model's states to the source model's (Wu 5.1.2)."""

import _bootstrap


def main(smk):
    import numpy as np
    import torch

    from xling.analysis.goldunits import gold_units
    from xling.analysis.loading import load_model_and_tokenizer
    from xling.analysis.mappings import contextual_mappings
    from xling.base.atomic import atomic_open
    from xling.base.fileio import read_lines
    from xling.contracts.alignment import read_alignments

    torch.set_num_threads(smk.threads)
    limit = smk.params.sentences

    def word_lines(path):
        return [line.split() for line in read_lines(path, limit)]

    source_lang, target_lang = smk.params.languages
    source = (*load_model_and_tokenizer(smk.input.source_model), source_lang)
    target = (*load_model_and_tokenizer(smk.input.target_model), target_lang)
    source_sentences = word_lines(smk.input.source)
    target_sentences = word_lines(smk.input.target)
    links = read_alignments(smk.input.alignment)[:limit]
    units = {}
    if hasattr(smk.input, "source_words"):  # gold links index gold words: carry them onto tokens
        source_words = word_lines(smk.input.source_words)
        target_words = word_lines(smk.input.target_words)
        source_units, target_units, links = gold_units(
            source_words, source_sentences, target_words, target_sentences, links
        )
        units = {"source_units": source_units, "target_units": target_units}
    maps, pairs = contextual_mappings(
        source, target, source_sentences, target_sentences, links, **units
    )
    with atomic_open(smk.output[0], "wb", encoding=None) as handle:
        np.savez(handle, maps=maps, word_pairs=pairs)
    print(f"{len(maps)} maps from {pairs} one-to-one aligned word pairs")


_bootstrap.run(main, snakemake)
