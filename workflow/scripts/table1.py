"""Adapter: Table 1 (csv + markdown) from the selected fine-tuning scores."""

import _bootstrap

from xling.atomic import atomic_open
from xling.report.table1 import build_table1, to_csv_frame, to_markdown


def main(smk):
    import json
    from pathlib import Path

    scores = {}
    for path, cell in zip(smk.input, smk.params.cells, strict=True):
        selected = json.loads(Path(path).read_text())
        scores[(cell["variant"], cell["pair"], cell["task"])] = selected["test"][cell["target"]]
    table = build_table1(smk.params.variants, smk.params.schemes, smk.params.pairs, scores)
    with atomic_open(smk.output.csv) as out:
        to_csv_frame(table).to_csv(out, index=False)
    with atomic_open(smk.output.md) as out:
        out.write(to_markdown(table, smk.params.pairs, smk.params.study))


_bootstrap.run(main, snakemake)
