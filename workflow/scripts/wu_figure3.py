"""Adapter: Wu Figure 3 (png and pdf) from Table 1's csv."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.report.wu_figures import figure3

    drawn = figure3(pd.read_csv(smk.input[0]), [smk.output.png, smk.output.pdf])
    print(drawn.to_string(index=False))


_bootstrap.run(main, snakemake)
