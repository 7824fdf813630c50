"""Adapter: Wu Figures 5 and 8 on bootstrap resamples of the NER and parsing test sets, for the
claims check."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.atomic import atomic_open
    from xling.report.resamples import TRANSFER_COLUMNS, transfer_resamples
    from xling.report.wu_figures import FIGURE5_LINES, FIGURE8_LINES

    sweeps = [tuple(sweep) for sweep in smk.params.sweeps]
    tables = {sweep: pd.read_csv(path) for sweep, path in zip(sweeps, smk.input, strict=True)}
    old = [" ".join(sweep) for sweep, table in tables.items() if "test_items" not in table]
    if smk.params.resamples and not old:
        data = transfer_resamples(tables, smk.params.resamples, smk.params.seed)
    else:  # the claims check then compares the numbers alone
        if old:
            print(f"no resamples: the sweeps {old} predate the per-sentence counts (rerun them)")
        data = pd.DataFrame(columns=TRANSFER_COLUMNS)
    for lines, path in ((FIGURE5_LINES, smk.output.figure5), (FIGURE8_LINES, smk.output.figure8)):
        frame = data[data["line"].isin(list(lines))]
        with atomic_open(path) as out:
            frame.to_csv(out, index=False)
        print(f"{path}: {len(frame)} rows")


_bootstrap.run(main, snakemake)
