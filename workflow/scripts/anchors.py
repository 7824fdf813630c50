"""Adapter: anchors.csv from the stats.json of every vocabulary."""

import _bootstrap

from xling.vocab import write_anchor_table


def main(smk):
    rows = write_anchor_table([f"{vocab}/stats.json" for vocab in smk.input], smk.output[0])
    for row in rows:
        print(row)


_bootstrap.run(main, snakemake)
