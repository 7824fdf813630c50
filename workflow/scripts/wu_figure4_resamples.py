"""Adapter: Wu Figure 4's P@1 on bootstrap resamples of the test words, for the claims check."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.base.bootstrap import write_resamples
    from xling.report.resamples import (
        FIGURE4_COLUMNS,
        figure4_resamples,
        missing_column,
        resamples_or_header,
    )

    tables = {
        pair: pd.read_csv(path, dtype={"hits": str})
        for pair, path in zip(smk.params.pairs, smk.input, strict=True)
    }
    frame = resamples_or_header(
        smk.params.resamples,
        missing_column(dict(zip(smk.input, tables.values(), strict=True)), "hits"),
        FIGURE4_COLUMNS,
        lambda: figure4_resamples(tables, smk.params.resamples, smk.params.seed),
    )
    write_resamples(smk.output[0], frame)


_bootstrap.run(main, snakemake)
