"""Adapter: Muller et al. Tables 1, 2, 4, 5 and 6-8 (csv, markdown, LaTeX) from the study's
``scores.csv`` and ``similarity.csv``.

Outputs are named ``table<N>_csv``, ``table<N>_md``, ``table<N>_tex`` for N in 1, 2, 4, 5, 6, 7, 8;
a table whose outputs the rule does not name is not written. Params: ``study`` (required);
optional ``sources``, ``languages`` (restrict and order ours), ``table2_aliases`` (our evaluation
set -> the paper's Table 2 row), ``correlation_source`` (Table 4, default en),
``include_source`` (Table 4 counts the source itself, default false).
"""

import _bootstrap


def main(smk):
    from xling.report.muller_scores import read_scores, read_similarity
    from xling.report.muller_tables import write_tables

    params = smk.params
    write_tables(
        read_scores(smk.input.scores),
        read_similarity(smk.input.similarity),
        dict(smk.output.items()),
        study=params.study,
        sources=params.get("sources"),
        languages=params.get("languages"),
        table2_aliases=params.get("table2_aliases"),
        correlation_source=params.get("correlation_source", "en"),
        include_source=bool(params.get("include_source", False)),
    )


_bootstrap.run(main, snakemake)
