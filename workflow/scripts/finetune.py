"""Adapter: one fine-tuning grid point (model x task x hyperparameters), zero-shot evaluated."""

import _bootstrap


def main(smk):
    import logging
    import sys
    from pathlib import Path

    from xling.finetune import FinetuneJob, FinetuneSettings, TaskData, run_finetune

    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(asctime)s %(message)s")
    task = smk.wildcards.task
    source, target = smk.params.languages
    settings = FinetuneSettings.from_config(
        task, smk.params.settings, seed=smk.params.seed, source_lang=source
    )
    data = TaskData(
        train=Path(smk.input[f"{source}_train"]),
        dev={source: Path(smk.input[f"{source}_dev"])},
        test={lang: Path(smk.input[f"{lang}_test"]) for lang in (source, target)},
    )
    job = FinetuneJob(
        task,
        smk.input.model,
        data,
        smk.params.hp,
        Path(smk.output.metrics).parent,
        smk.params.work_dir,
        settings,
        pair=smk.wildcards.pair,
        variant=smk.wildcards.variant,
    )
    metrics = run_finetune(job, threads=smk.threads)
    print(f"dev {metrics['dev']} test {metrics['test']} (epoch {metrics['selected_epoch']})")


_bootstrap.run(main, snakemake)
