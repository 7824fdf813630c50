"""Adapter: Wu Figure 6's retrieval P@1 on bootstrap resamples of the Tatoeba sentences, Figure 7's
CKA on those of the parallel sentences (the similarity jobs draw them), and the CKA-retrieval
correlation on both, for the claims check."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.base.bootstrap import write_resamples
    from xling.report.resamples import (
        FIGURE6_COLUMNS,
        cka_retrieval_resamples,
        figure6_resamples,
        figure7_resamples,
        missing_column,
        resamples_or_header,
    )

    pairs = smk.params.pairs
    retrieval = {p: pd.read_csv(f) for p, f in zip(pairs, smk.input.retrieval, strict=True)}
    similarity = {p: pd.read_csv(f) for p, f in zip(pairs, smk.input.similarity, strict=True)}
    figure6 = resamples_or_header(
        smk.params.resamples,
        missing_column(dict(zip(smk.input.retrieval, retrieval.values(), strict=True)), "hits"),
        FIGURE6_COLUMNS,
        lambda: figure6_resamples(retrieval, smk.params.resamples, smk.params.seed),
    )
    write_resamples(smk.output.figure6, figure6)
    cka_resamples = {
        pair: pd.read_csv(path)
        for pair, path in zip(
            smk.params.similarity_pairs, smk.input.similarity_resamples, strict=True
        )
    }
    write_resamples(smk.output.figure7, figure7_resamples(cka_resamples))
    # no resamples of Figure 6 (header only): none of the correlation either
    write_resamples(
        smk.output.correlation, cka_retrieval_resamples(similarity, figure6, cka_resamples)
    )


_bootstrap.run(main, snakemake)
