"""Adapter: Muller et al. Tables 1, 2, 4, 5 and 6-8 (csv, markdown, LaTeX) from the study's
``scores.csv`` and ``similarity.csv``.

Outputs are named ``table<N>_csv``, ``table<N>_md``, ``table<N>_tex`` for N in 1, 2, 4, 5, 6, 7, 8;
a table whose outputs the rule does not name is not written. Params: the fields of
:class:`xling.report.muller_tables.TableSettings`: ``study``; optional ``sources``, ``languages``
(restrict and order ours), ``table2_aliases`` (our evaluation set -> the paper's Table 2 row),
``correlation_source`` (Table 4, default en), ``include_source`` (Table 4 counts the source
itself, default false).
"""

import _bootstrap


def main(smk):
    from xling.report.muller_scores import read_inputs
    from xling.report.muller_tables import TableSettings, write_tables

    settings = TableSettings(**dict(smk.params.items()))
    inputs = read_inputs(smk.input.scores, smk.input.similarity)
    write_tables(*inputs, dict(smk.output.items()), settings)


_bootstrap.run(main, snakemake)
