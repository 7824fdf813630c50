"""Adapter: Wu Figure 3 (png and pdf) from Table 1's csv, and the numbers drawn as csv."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.base.atomic import atomic_open
    from xling.report.wu_figures import figure3

    drawn = figure3(pd.read_csv(smk.input[0]), [smk.output.png, smk.output.pdf])
    with atomic_open(smk.output.csv) as out:
        drawn.to_csv(out, index=False)
    print(drawn.to_string(index=False))


_bootstrap.run(main, snakemake)
