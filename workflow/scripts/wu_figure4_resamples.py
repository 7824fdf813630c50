"""Adapter: Wu Figure 4's P@1 on bootstrap resamples of the test words, for the claims check."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.atomic import atomic_open
    from xling.report.resamples import FIGURE4_COLUMNS, figure4_resamples

    tables = {
        pair: pd.read_csv(path, dtype={"hits": str})
        for pair, path in zip(smk.params.pairs, smk.input, strict=True)
    }
    old = [pair for pair, table in tables.items() if "hits" not in table]
    if smk.params.resamples and not old:
        frame = figure4_resamples(tables, smk.params.resamples, smk.params.seed)
    else:  # the claims check then compares the numbers alone
        if old:
            print(f"no resamples: the tables of {old} predate the per-word hits (rerun them)")
        frame = pd.DataFrame(columns=FIGURE4_COLUMNS)
    with atomic_open(smk.output[0]) as out:
        frame.to_csv(out, index=False)
    print(f"{smk.output[0]}: {len(frame)} rows")


_bootstrap.run(main, snakemake)
