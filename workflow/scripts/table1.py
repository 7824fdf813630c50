"""Adapter: Table 1 (csv, markdown, LaTeX) from the selected fine-tuning scores."""

import _bootstrap

from xling.report.compare import write_compared
from xling.report.table1 import build_table1


def main(smk):
    import json
    from pathlib import Path

    scores = {}
    for path, cell in zip(smk.input, smk.params.cells, strict=True):
        selected = json.loads(Path(path).read_text())
        scores[(cell["variant"], cell["pair"], cell["task"])] = selected["test"][cell["target"]]
    table = build_table1(
        smk.params.variants, smk.params.schemes, smk.params.pairs, scores, smk.params.study
    )
    write_compared(table, smk.output.csv, smk.output.md, smk.output.tex)


_bootstrap.run(main, snakemake)
