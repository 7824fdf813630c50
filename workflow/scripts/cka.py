"""Adapter: linear CKA per layer of one model on the parallel sentences of its pair."""

import _bootstrap

from xling.analysis.loading import load_model_and_tokenizer, write_rows_csv
from xling.analysis.similarity import cka_rows
from xling.base.fileio import read_lines


def main(smk):
    import torch

    torch.set_num_threads(smk.threads)
    model, tokenizer = load_model_and_tokenizer(smk.input.model)
    source_lines, target_lines = read_lines(smk.input.source), read_lines(smk.input.target)
    settings = smk.params.settings
    rows = cka_rows(
        model,
        tokenizer,
        source_lines,
        target_lines,
        smk.params.languages,
        sentences=settings["sentences"],
        debiased=settings["debiased"],
        seed=smk.params.seed,
    )
    write_rows_csv(smk.output[0], rows)
    for row in rows:
        print(f"{row['encoder']:8s} L{row['layer']}: CKA {row['cka']:.4f}")


_bootstrap.run(main, snakemake)
