"""Adapter: Muller et al.'s scores on bootstrap resamples of the test sets, and their similarity
on bootstrap resamples of the parallel sentences, for the claims check."""

import _bootstrap


def main(smk):
    from pathlib import Path

    from xling.base.bootstrap import REPLICATE, write_resamples
    from xling.contracts.items import TEST_ITEMS
    from xling.muller.collect import (
        RESAMPLE_COLUMNS,
        SCORE_COLUMNS,
        select_runs,
        similarity_resamples,
        stale_similarity,
    )
    from xling.report.resamples import muller_score_resamples, resamples_or_header

    selected = select_runs(smk.params.runs)
    stale = [run["dir"] for run, _ in selected if not (Path(run["dir"]) / TEST_ITEMS).is_file()]
    frame = resamples_or_header(
        smk.params.resamples,
        stale,
        [REPLICATE, *SCORE_COLUMNS],
        lambda: muller_score_resamples(
            selected, smk.params.evaluations, smk.params.resamples, smk.params.seed
        ),
    )
    write_resamples(smk.output.scores, frame)
    pretrained = smk.input.pretrained
    similarity = resamples_or_header(
        smk.params.resamples,
        stale_similarity(selected),
        RESAMPLE_COLUMNS,
        lambda: similarity_resamples(selected, pretrained),
    )
    write_resamples(smk.output.similarity, similarity)


_bootstrap.run(main, snakemake)
