"""Adapter: Table 1 (csv, markdown, LaTeX) from the selected fine-tuning scores, and the same
cells on bootstrap resamples of the test sets (tables/table1_resamples.csv)."""

import _bootstrap

from xling.report.compare import write_compared
from xling.report.table1 import build_table1


def main(smk):
    import json
    from pathlib import Path

    from xling.base.atomic import atomic_open
    from xling.base.bootstrap import REPLICATE
    from xling.report.resamples import cell_runs, table1_resamples
    from xling.report.table1 import KEY

    scores, best_k = {}, {}
    for path, cell in zip(smk.input, smk.params.cells, strict=True):
        selected = json.loads(Path(path).read_text())
        scores[(cell["variant"], cell["pair"], cell["task"])] = selected["test"][cell["target"]]
        best_k[cell["task"]] = len(selected["best_hp_ids"])
    table = build_table1(
        smk.params.variants, smk.params.schemes, smk.params.pairs, scores, smk.params.study, best_k
    )
    write_compared(table, smk.output.csv, smk.output.md, smk.output.tex)

    runs = cell_runs(list(smk.input), smk.params.cells) if smk.params.resamples else None
    with atomic_open(smk.output.resamples) as handle:
        if runs is None:  # the claims check then compares the point estimates only
            print("no resamples of the test sets (report.resamples 0, or runs without counts)")
            handle.write(f"{REPLICATE},{KEY}\n")
        else:
            resamples = table1_resamples(
                smk.params.cells, runs, smk.params.pairs, smk.params.resamples, smk.params.seed
            )
            resamples.to_csv(handle, index=False)
            print(f"{smk.params.resamples} resamples of the test sets")


_bootstrap.run(main, snakemake)
