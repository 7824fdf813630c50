"""Adapter: the anchors table (csv, markdown, LaTeX) from the stats.json of every vocabulary."""

import _bootstrap

from xling.vocab import write_anchor_table


def main(smk):
    import pandas as pd

    from xling.report.tables import anchors_table, write_md_tex

    rows = write_anchor_table([f"{vocab}/stats.json" for vocab in smk.input], smk.output.csv)
    for row in rows:
        print(row)
    table = anchors_table(pd.read_csv(smk.output.csv), smk.params.study)
    write_md_tex(table, smk.output.md, smk.output.tex)


_bootstrap.run(main, snakemake)
