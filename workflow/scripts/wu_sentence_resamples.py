"""Adapter: Wu Figure 6's retrieval P@1 and the CKA-retrieval correlation on bootstrap resamples
of the Tatoeba sentences, for the claims check."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.atomic import atomic_open
    from xling.report.resamples import (
        CKA_RETRIEVAL_COLUMNS,
        FIGURE6_COLUMNS,
        cka_retrieval_resamples,
        figure6_resamples,
    )

    pairs = smk.params.pairs
    retrieval = {p: pd.read_csv(f) for p, f in zip(pairs, smk.input.retrieval, strict=True)}
    similarity = {p: pd.read_csv(f) for p, f in zip(pairs, smk.input.similarity, strict=True)}
    old = [pair for pair, table in retrieval.items() if "hits" not in table]
    if smk.params.resamples and not old:
        figure6 = figure6_resamples(retrieval, smk.params.resamples, smk.params.seed)
        correlation = cka_retrieval_resamples(similarity, figure6)
    else:  # the claims check then compares the numbers alone
        if old:
            print(f"no resamples: the tables of {old} predate the per-sentence hits (rerun them)")
        figure6 = pd.DataFrame(columns=FIGURE6_COLUMNS)
        correlation = pd.DataFrame(columns=CKA_RETRIEVAL_COLUMNS)
    for frame, path in ((figure6, smk.output.figure6), (correlation, smk.output.correlation)):
        with atomic_open(path) as out:
            frame.to_csv(out, index=False)
        print(f"{path}: {len(frame)} rows")


_bootstrap.run(main, snakemake)
