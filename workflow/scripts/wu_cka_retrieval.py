"""Adapter: Pearson correlation of CKA and sentence retrieval per pair (Wu 5.2), as csv, markdown
and LaTeX."""

import _bootstrap


def main(smk):
    import pandas as pd

    from xling.base.atomic import atomic_open
    from xling.report.tables import cka_retrieval_table, write_md_tex
    from xling.report.wu_figures import cka_retrieval_correlation

    pairs = smk.params.pairs
    similarity = {p: pd.read_csv(f) for p, f in zip(pairs, smk.input.similarity, strict=True)}
    retrieval = {p: pd.read_csv(f) for p, f in zip(pairs, smk.input.retrieval, strict=True)}
    table = cka_retrieval_correlation(similarity, retrieval)
    with atomic_open(smk.output.csv) as out:
        table.to_csv(out, index=False)
    write_md_tex(cka_retrieval_table(table, smk.params.study), smk.output.md, smk.output.tex)
    print(table.to_string(index=False))


_bootstrap.run(main, snakemake)
