"""Adapter: cross-lingual similarity per layer of the pretrained multilingual model, and the same
on bootstrap resamples of the parallel sentences."""

import _bootstrap


def main(smk):
    import torch

    from xling.analysis.loading import load_model_and_tokenizer
    from xling.muller.similarity import pooled_parallel, write_similarity

    torch.set_num_threads(smk.threads)
    encoder, tokenizer = load_model_and_tokenizer(smk.params.model)
    ids = torch.load(smk.input.parallel, weights_only=True)
    pooled = pooled_parallel(encoder, tokenizer, ids)
    rows = write_similarity(
        smk.output.table,
        smk.output.resamples,
        pooled,
        smk.params.sources,
        smk.params.debiased,
        smk.params.resamples,
        smk.params.seed,
    )
    for row in rows:
        print(f"{row['source']}-{row['target']} L{row['layer']}: CKA {row['cka']:.4f}")


_bootstrap.run(main, snakemake)
