"""Adapter: CKA per layer of monolingual, bilingual and random encoders (Wu 5.2, Figure 7), with
the debiased and the length-controlled CKA beside it and the length-only control, and the CKA on
bootstrap resamples of the parallel sentences, for the claims check."""

import _bootstrap


def main(smk):
    import pandas as pd
    import torch

    from xling.analysis.cka import parallel_draws
    from xling.analysis.loading import load_model_and_tokenizer, write_rows_csv
    from xling.analysis.similarity import (
        FIGURE7_RESAMPLE_COLUMNS,
        figure7_resample_rows,
        figure7_rows,
        figure7_states,
    )
    from xling.base.bootstrap import write_resamples
    from xling.base.fileio import read_lines

    torch.set_num_threads(smk.threads)
    settings = smk.params.settings
    source_lang, target_lang = smk.params.languages
    states = figure7_states(
        (*load_model_and_tokenizer(smk.input.source_model), source_lang),
        (*load_model_and_tokenizer(smk.input.target_model), smk.params.target_model_language),
        (*load_model_and_tokenizer(smk.input.bilingual_model), (source_lang, target_lang)),
        read_lines(smk.input.source),
        read_lines(smk.input.target),
        sentences=settings["sentences"],
        seed=smk.params.seed,
    )
    # Figure 7's robustness row: the debiased CKA whatever analysis.cka.debiased says (that key
    # is the Table 1 variants' CKA's, the `cka` job's)
    rows = figure7_rows(states, debiased=True)
    write_rows_csv(smk.output.table, rows)
    for row in rows:
        print(f"{row['encoder']:11s} L{row['layer']}: CKA {row['cka']:.4f}")
    sentences = rows[0]["n_sentences"]
    draws = parallel_draws(
        smk.params.seed, f"{source_lang}-{target_lang}", smk.params.resamples, sentences
    )
    resamples = pd.DataFrame(figure7_resample_rows(states, draws), columns=FIGURE7_RESAMPLE_COLUMNS)
    write_resamples(smk.output.resamples, resamples)


_bootstrap.run(main, snakemake)
