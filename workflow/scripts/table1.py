"""Adapter: Table 1 (csv, markdown, LaTeX) from the selected fine-tuning scores, and the same
cells on bootstrap resamples of the test sets (tables/table1_resamples.csv)."""

import _bootstrap

from xling.report.compare import write_compared
from xling.report.table1 import build_table1


def main(smk):
    import json
    from pathlib import Path

    from xling.atomic import atomic_open
    from xling.finetune.items import TEST_ITEMS, read_test_items
    from xling.report.resamples import REPLICATE, table1_resamples
    from xling.report.table1 import KEY

    scores, runs = {}, []
    for path, cell in zip(smk.input, smk.params.cells, strict=True):
        selected = json.loads(Path(path).read_text())
        scores[(cell["variant"], cell["pair"], cell["task"])] = selected["test"][cell["target"]]
        # The runs averaged in the cell sit beside selected.json, one folder per grid point.
        runs.append([Path(path).parent / hp / TEST_ITEMS for hp in selected["best_hp_ids"]])
    table = build_table1(
        smk.params.variants, smk.params.schemes, smk.params.pairs, scores, smk.params.study
    )
    write_compared(table, smk.output.csv, smk.output.md, smk.output.tex)

    resamples = None
    if smk.params.resamples:
        try:
            items = [
                [read_test_items(p)[c["target"]] for p in ps]
                for c, ps in zip(smk.params.cells, runs, strict=True)
            ]
        except FileNotFoundError as missing:
            print(f"no resamples of the test sets: {missing}")
        else:
            resamples = table1_resamples(
                smk.params.cells, items, smk.params.pairs, smk.params.resamples, smk.params.seed
            )
    with atomic_open(smk.output.resamples) as handle:
        if resamples is None:  # the claims check then compares point estimates only
            handle.write(f"{REPLICATE},{KEY}\n")
        else:
            resamples.to_csv(handle, index=False)
            print(f"{smk.params.resamples} resamples of the test sets")


_bootstrap.run(main, snakemake)
