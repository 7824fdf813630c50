"""Adapter: Wu Figure 4, 6 or 7 (png and pdf) from the per-pair analysis tables, and its
numbers as csv."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.base.atomic import atomic_open
    from xling.report import wu_figures

    tables = {
        pair: pd.read_csv(path) for pair, path in zip(smk.params.pairs, smk.input, strict=True)
    }
    draw = {"4": wu_figures.figure4, "6": wu_figures.figure6, "7": wu_figures.figure7}
    names = {smk.params.english_prime: "en'"}  # the pairs as the paper writes them
    figures = [smk.output.png, smk.output.pdf]
    data = draw[smk.wildcards.figure](tables, figures, names)
    with atomic_open(smk.output.csv) as out:
        data.to_csv(out, index=False)


_bootstrap.run(main, snakemake)
