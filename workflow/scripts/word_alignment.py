"""Adapter: word translation retrieval after Procrustes, Figure 4 rows of one pair (Wu 5.1.1)."""

import _bootstrap


def main(smk):
    import torch

    from xling.analysis.loading import load_model_and_tokenizer, write_rows_csv
    from xling.analysis.words import word_alignment_rows

    torch.set_num_threads(smk.threads)
    source_lang, target_lang = smk.params.languages
    rows = word_alignment_rows(
        (
            (*load_model_and_tokenizer(smk.input.source_model), source_lang),
            (*load_model_and_tokenizer(smk.input.target_model), target_lang),
        ),
        (smk.input.source_contextual, smk.input.target_contextual),
        (smk.input.source_fasttext, smk.input.target_fasttext),
        (smk.input.train, smk.input.test),
        smk.params.settings,
    )
    write_rows_csv(smk.output[0], rows)
    for row in rows:
        print(row)


_bootstrap.run(main, snakemake)
