"""Adapter: the mean over the best k grid points by English dev (Wu §3.2: k = 2)."""

import _bootstrap

from xling.base.atomic import write_json
from xling.finetune import select_best


def main(smk):
    source = smk.wildcards.pair.split("-")[0]
    selected = select_best(smk.params.metrics, k=smk.params.best_k, source_lang=source)
    write_json(smk.output[0], selected)
    print(f"best {selected['best_hp_ids']}: test {selected['test']}")


_bootstrap.run(main, snakemake)
