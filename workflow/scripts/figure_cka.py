"""Adapter: the CKA-per-layer figure from every CKA table."""

import _bootstrap

from xling.report.figures import plot_cka_layers


def main(smk):
    import pandas as pd

    tables = {
        tuple(model): pd.read_csv(path)
        for path, model in zip(smk.input, smk.params.models, strict=True)
    }
    plot_cka_layers(tables, smk.output[0])


_bootstrap.run(main, snakemake)
