"""Adapter: cross-lingual similarity per layer of the pretrained multilingual model, with the
length control, and the same on bootstrap resamples of the parallel sentences."""

import _bootstrap


def main(smk):
    import torch

    from xling.analysis.loading import load_model_and_tokenizer
    from xling.muller.similarity import SimilaritySettings, pooled_parallel, write_similarity

    torch.set_num_threads(smk.threads)
    settings = SimilaritySettings.from_config(smk.params.measure)
    encoder, tokenizer = load_model_and_tokenizer(smk.params.model)
    ids = torch.load(smk.input.parallel, weights_only=True)
    pooled = pooled_parallel(encoder, tokenizer, ids, settings.pooling)
    rows = write_similarity(
        smk.output.table,
        smk.output.resamples,
        pooled,
        smk.params.sources,
        smk.params.debiased,
        smk.params.resamples,
        smk.params.seed,
        settings,
        control=True,  # the length control: one for every model, written with the pretrained's
    )
    for row in rows:
        control = f"{row['model']} " if "model" in row else ""
        print(f"{control}{row['source']}-{row['target']} L{row['layer']}: CKA {row['cka']:.4f}")


_bootstrap.run(main, snakemake)
