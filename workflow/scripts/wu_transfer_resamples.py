"""Adapter: Wu Figures 5 and 8 on bootstrap resamples of the NER and parsing test sets, for the
claims check."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.base.bootstrap import write_resamples
    from xling.report.resamples import (
        TRANSFER_COLUMNS,
        missing_column,
        resamples_or_header,
        transfer_resamples,
    )
    from xling.report.wu_figures import FIGURE5_LINES, FIGURE8_LINES

    sweeps = [tuple(sweep) for sweep in smk.params.sweeps]
    tables = {sweep: pd.read_csv(path) for sweep, path in zip(sweeps, smk.input, strict=True)}
    data = resamples_or_header(
        smk.params.resamples,
        missing_column(dict(zip(smk.input, tables.values(), strict=True)), "test_items"),
        TRANSFER_COLUMNS,
        lambda: transfer_resamples(tables, smk.params.resamples, smk.params.seed),
    )
    for lines, path in ((FIGURE5_LINES, smk.output.figure5), (FIGURE8_LINES, smk.output.figure8)):
        write_resamples(path, data[data["line"].isin(list(lines))])


_bootstrap.run(main, snakemake)
