"""Adapter: linear CKA per layer of one model on the parallel sentences of its pair."""

import _bootstrap

from xling.analysis.similarity import cka_rows
from xling.atomic import atomic_open
from xling.model import load_pretrained
from xling.vocab import SubwordTokenizer


def main(smk):
    import pandas as pd
    import torch

    torch.set_num_threads(smk.threads)
    model = load_pretrained(smk.input.model)
    tokenizer = SubwordTokenizer.load(f"{smk.input.model}/tokenizer")
    with open(smk.input.source, encoding="utf-8") as f:
        source_lines = f.read().splitlines()
    with open(smk.input.target, encoding="utf-8") as f:
        target_lines = f.read().splitlines()
    settings = smk.params.settings
    rows = cka_rows(
        model,
        tokenizer,
        source_lines,
        target_lines,
        smk.params.languages,
        sentences=settings["sentences"],
        debiased=settings["debiased"],
        seed=smk.params.seed,
    )
    with atomic_open(smk.output[0]) as out:
        pd.DataFrame(rows).to_csv(out, index=False)
    for row in rows:
        print(f"{row['encoder']:8s} L{row['layer']}: CKA {row['cka']:.4f}")


_bootstrap.run(main, snakemake)
