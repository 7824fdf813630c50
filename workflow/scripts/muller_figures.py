"""Adapter: Muller et al. Figures 1-8 (png, pdf, and the numbers behind each as csv) from the
study's ``similarity.csv`` and ``scores.csv`` (Figure 3's cross-lang gap).

Outputs are named ``figure<N>_png``, ``figure<N>_pdf``, ``figure<N>_csv`` for N in 1..8; a figure
whose outputs the rule does not name is not drawn. Params: all optional: ``figure2_group``
(RANDOM-INIT group of Figure 2, default 1-2), ``random_init_groups`` (groups of Figures 6-8,
default every group in the file), ``source`` (default en), ``target`` (Figures 1-2, default ru),
``languages`` (targets of Figures 4-8, in order), ``include_source`` (Figure 3).
"""

import _bootstrap


def main(smk):
    from xling.report.muller_figures import DEFAULT_GROUP, write_figures
    from xling.report.muller_scores import read_scores, read_similarity

    params = smk.params
    write_figures(
        read_scores(smk.input.scores),
        read_similarity(smk.input.similarity),
        dict(smk.output.items()),
        source=params.get("source", "en"),
        target=params.get("target", "ru"),
        figure2_group=str(params.get("figure2_group", DEFAULT_GROUP)),
        random_init_groups=params.get("random_init_groups"),
        languages=params.get("languages"),
        include_source=bool(params.get("include_source", False)),
    )


_bootstrap.run(main, snakemake)
