"""Adapter: CKA per layer of monolingual, bilingual and random encoders (Wu 5.2, Figure 7)."""

import _bootstrap


def main(smk):
    import torch

    from xling.analysis.loading import load_model_and_tokenizer, write_rows_csv
    from xling.analysis.similarity import figure7_rows
    from xling.fileio import read_lines

    torch.set_num_threads(smk.threads)
    settings = smk.params.settings
    source_lang, target_lang = smk.params.languages
    rows = figure7_rows(
        (*load_model_and_tokenizer(smk.input.source_model), source_lang),
        (*load_model_and_tokenizer(smk.input.target_model), smk.params.target_model_language),
        (*load_model_and_tokenizer(smk.input.bilingual_model), (source_lang, target_lang)),
        read_lines(smk.input.source),
        read_lines(smk.input.target),
        sentences=settings["sentences"],
        debiased=settings["debiased"],
        seed=smk.params.seed,
    )
    write_rows_csv(smk.output[0], rows)
    for row in rows:
        print(f"{row['encoder']:11s} L{row['layer']}: CKA {row['cka']:.4f}")


_bootstrap.run(main, snakemake)
