"""Adapter: cross-lingual similarity per layer of the pretrained multilingual model."""

import _bootstrap


def main(smk):
    import torch

    from xling.analysis.loading import load_model_and_tokenizer, write_rows_csv
    from xling.muller.similarity import similarity_rows

    torch.set_num_threads(smk.threads)
    encoder, tokenizer = load_model_and_tokenizer(smk.params.model)
    ids = torch.load(smk.input.parallel, weights_only=True)
    rows = similarity_rows(encoder, tokenizer, ids, smk.params.sources, smk.params.debiased)
    write_rows_csv(smk.output[0], rows)
    for row in rows:
        print(f"{row['source']}-{row['target']} L{row['layer']}: CKA {row['cka']:.4f}")


_bootstrap.run(main, snakemake)
