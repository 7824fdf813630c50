"""Adapter: the CKA-per-layer figure from every CKA table."""

import _bootstrap

from xling.report.figures import plot_cka_layers


def main(smk):
    from pathlib import Path

    import pandas as pd

    tables = {}
    for path in smk.input:
        path = Path(path)
        tables[(path.parent.name, path.stem)] = pd.read_csv(path)
    plot_cka_layers(tables, smk.output[0])


_bootstrap.run(main, snakemake)
