"""Adapter: one Muller fine-tuning job (one run, or every run of a setup)."""

import _bootstrap


def main(smk):
    import logging
    import sys

    from xling.muller.runner import MullerJob, run_job

    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(asctime)s %(message)s")
    setup = smk.params.setup
    job = MullerJob(
        smk.params.model,
        setup["task"],
        setup["source"],
        smk.params.settings,
        smk.params.runs,
        smk.input.encoded,
        smk.output[0],
        parallel_path=smk.input.get("parallel"),
        debiased=smk.params.debiased,
        resamples=smk.params.resamples,
        measure=smk.params.measure,
        random_init_scheme=smk.params.random_init_scheme,
    )
    results = run_job(job, threads=smk.threads)
    for metrics in results:
        print(metrics.get("random_init"), metrics["hp_id"], "test", metrics["test"])


_bootstrap.run(main, snakemake)
