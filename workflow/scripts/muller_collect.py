"""Adapter: the selected runs' scores and similarities -> scores.csv, similarity.csv."""

import _bootstrap


def main(smk):
    from xling.analysis.loading import write_rows_csv
    from xling.muller.collect import score_rows, select_runs, similarity_rows

    selected = select_runs(smk.params.runs)
    scores = score_rows(selected, smk.params.evaluations)
    write_rows_csv(smk.output.scores, scores)
    write_rows_csv(smk.output.similarity, similarity_rows(selected, smk.input.pretrained))
    print(f"{len(selected)} selected runs, {len(scores)} scores")


_bootstrap.run(main, snakemake)
