"""Adapter: several Table 1 fine-tuning runs in one process: every run of one pretrained model
(`finetune.runs_per_job: model`), or a pack of N grid points of one task (an integer N)."""

import _bootstrap


def main(smk):
    import logging
    import sys

    from xling.finetune.bundle import run_model_job

    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(asctime)s %(message)s")
    results = run_model_job(smk.input.model, smk.params.runs, smk.output[0], threads=smk.threads)
    for run, metrics in zip(smk.params.runs, results, strict=True):
        print(f"{run['task']} {metrics['hp_id']}: dev {metrics['dev']} test {metrics['test']}")


_bootstrap.run(main, snakemake)
