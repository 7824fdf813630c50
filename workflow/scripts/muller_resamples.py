"""Adapter: Muller et al.'s scores on bootstrap resamples of the test sets, for the claims check."""

import _bootstrap


def main(smk):
    from pathlib import Path

    import pandas as pd

    from xling.atomic import atomic_open
    from xling.finetune.items import TEST_ITEMS
    from xling.muller.collect import SCORE_COLUMNS, select_runs
    from xling.report.resamples import REPLICATE, muller_score_resamples

    selected = select_runs(smk.params.runs)
    old = [run["dir"] for run, _ in selected if not (Path(run["dir"]) / TEST_ITEMS).is_file()]
    if smk.params.resamples and not old:
        frame = muller_score_resamples(
            selected, smk.params.evaluations, smk.params.resamples, smk.params.seed
        )
    else:  # the claims check then compares the numbers alone
        if old:
            print(f"no resamples: {len(old)} runs predate {TEST_ITEMS}, e.g. {old[0]}")
        frame = pd.DataFrame(columns=[REPLICATE, *SCORE_COLUMNS])
    with atomic_open(smk.output[0]) as out:
        frame.to_csv(out, index=False)
    print(f"{smk.output[0]}: {len(frame)} rows")


_bootstrap.run(main, snakemake)
