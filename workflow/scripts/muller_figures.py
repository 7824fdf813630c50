"""Adapter: Muller et al. Figures 1-8 (png, pdf, and the numbers behind each as csv) from the
study's ``similarity.csv`` and ``scores.csv`` (Figure 3's cross-lang gap).

Outputs are named ``figure<N>_png``, ``figure<N>_pdf``, ``figure<N>_csv`` for N in 1..8; a figure
whose outputs the rule does not name is not drawn. Params: all optional, the fields of
:class:`xling.report.muller_figures.FigureSettings`: ``figure2_group`` (RANDOM-INIT group of
Figure 2, default 1-2), ``random_init_groups`` (groups of Figures 6-8, default every group in the
file), ``source`` (default en), ``target`` (Figures 1-2, default ru), ``languages`` (targets of
Figures 4-8, in order), ``measure`` (default cka), ``include_source`` (Figure 3).
"""

import _bootstrap


def main(smk):
    from xling.report.muller_figures import FigureSettings, write_figures
    from xling.report.muller_scores import read_inputs

    settings = FigureSettings(**dict(smk.params.items()))
    inputs = read_inputs(smk.input.scores, smk.input.similarity)
    write_figures(*inputs, dict(smk.output.items()), settings)


_bootstrap.run(main, snakemake)
