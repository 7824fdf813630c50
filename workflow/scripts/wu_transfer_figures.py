"""Adapter: Wu Figures 5 and 8 (png and pdf) from the transfer sweeps, and their numbers as csv."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.base.atomic import atomic_open
    from xling.report import wu_figures

    sweeps = [tuple(sweep) for sweep in smk.params.sweeps]
    data = wu_figures.transfer_table(
        {sweep: pd.read_csv(path) for sweep, path in zip(sweeps, smk.input, strict=True)}
    )
    for draw, figures, table in (
        (wu_figures.figure5, [smk.output.png5, smk.output.pdf5], smk.output.csv5),
        (wu_figures.figure8, [smk.output.png8, smk.output.pdf8], smk.output.csv8),
    ):
        with atomic_open(table) as out:
            draw(data, figures).to_csv(out, index=False)


_bootstrap.run(main, snakemake)
