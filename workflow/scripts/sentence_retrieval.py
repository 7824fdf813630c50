"""Adapter: sentence retrieval per layer after Procrustes, both directions (Wu 5.1.3, Fig. 6),
and with Figure 7's random encoder on the target side."""

import _bootstrap


def main(smk):
    import torch

    from xling.analysis.loading import load_model_and_tokenizer, write_rows_csv
    from xling.analysis.sentences import read_tatoeba_pair, sentence_retrieval_rows
    from xling.base.fileio import read_lines

    torch.set_num_threads(smk.threads)
    source_lang, target_lang = smk.params.languages
    tatoeba = read_tatoeba_pair(smk.input.source_tatoeba, smk.input.target_tatoeba)
    rows = sentence_retrieval_rows(
        (*load_model_and_tokenizer(smk.input.source_model), source_lang),
        (*load_model_and_tokenizer(smk.input.target_model), target_lang),
        (read_lines(smk.input.source_parallel), read_lines(smk.input.target_parallel)),
        tatoeba,
        parallel_sentences=smk.params.sentences,
        normalize_rounds=smk.params.normalize_rounds,
        seed=smk.params.seed,
    )
    write_rows_csv(smk.output[0], rows)
    for row in rows:
        print(
            f"L{row['layer']} {row['direction']}: P@1 {row['p_at_1']:.3f}, "
            f"random encoder {row['p_at_1_random']:.3f}"
        )


_bootstrap.run(main, snakemake)
