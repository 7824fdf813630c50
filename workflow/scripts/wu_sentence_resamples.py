"""Adapter: Wu Figure 6's retrieval P@1 and the CKA-retrieval correlation on bootstrap resamples
of the Tatoeba sentences, for the claims check."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.report.resamples import (
        FIGURE6_COLUMNS,
        cka_retrieval_resamples,
        figure6_resamples,
        resamples_or_header,
        write_resamples,
    )

    pairs = smk.params.pairs
    retrieval = {p: pd.read_csv(f) for p, f in zip(pairs, smk.input.retrieval, strict=True)}
    similarity = {p: pd.read_csv(f) for p, f in zip(pairs, smk.input.similarity, strict=True)}
    stale = [
        f
        for f, table in zip(smk.input.retrieval, retrieval.values(), strict=True)
        if "hits" not in table
    ]
    figure6 = resamples_or_header(
        smk.params.resamples,
        stale,
        FIGURE6_COLUMNS,
        lambda: figure6_resamples(retrieval, smk.params.resamples, smk.params.seed),
    )
    write_resamples(smk.output.figure6, figure6)
    # no resamples of Figure 6 (header only): none of the correlation either
    write_resamples(smk.output.correlation, cka_retrieval_resamples(similarity, figure6))


_bootstrap.run(main, snakemake)
