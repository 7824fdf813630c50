"""Adapter: task layers over the frozen first i layers, for every i (Wu 5.1.2, Figures 5 and 8)."""

import _bootstrap


def main(smk):
    import logging
    import sys

    from xling.analysis.transfer_sweep import TransferSweepJob, transfer_sweep

    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(asctime)s %(message)s")
    target = smk.wildcards.pair.split("-")[1]
    job = TransferSweepJob(
        smk.wildcards.task,
        source_model=smk.input.source_model,
        source_files={split: smk.input[f"en_{split}"] for split in ("train", "dev", "test")},
        target_model=smk.input.target_model,
        target_lang=target,
        target_test=smk.input[f"{target}_test"],
        mappings=smk.input.mapping,
        evaluations=smk.params.evaluations,
        settings=smk.params.settings,
        out_csv=smk.output[0],
        work_dir=smk.params.work_dir,
    )
    rows = transfer_sweep(job, threads=smk.threads)
    for row in rows:
        print(row)


_bootstrap.run(main, snakemake)
