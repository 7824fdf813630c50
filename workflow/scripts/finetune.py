"""Adapter: one fine-tuning grid point (model x task x hyperparameters), zero-shot evaluated."""

import _bootstrap

# Optional per-task config keys and the run_finetune arguments they set.
OPTIONAL = {
    "epoch_size": "epoch_size",
    "head_dropout": "head_dropout",
    "labels": "ner_labels",
    "arc_dim": "parser_arc_dim",
    "label_dim": "parser_label_dim",
    "exclude_punct": "exclude_punct",
}


def main(smk):
    import logging
    import sys
    from pathlib import Path

    from xling.finetune import TaskData, run_finetune

    logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(asctime)s %(message)s")
    source, target = smk.params.languages
    settings = smk.params.settings
    data = TaskData(
        train=Path(smk.input[f"{source}_train"]),
        dev={source: Path(smk.input[f"{source}_dev"])},
        test={lang: Path(smk.input[f"{lang}_test"]) for lang in (source, target)},
    )
    extra = {arg: settings[key] for key, arg in OPTIONAL.items() if key in settings}
    metrics = run_finetune(
        smk.wildcards.task,
        smk.input.model,
        data,
        smk.params.hp,
        Path(smk.output.metrics).parent,
        smk.params.work_dir,
        epochs=settings["epochs"],
        seed=smk.params.seed,
        max_length=settings["max_length"],
        source_lang=source,
        threads=smk.threads,
        pair=smk.wildcards.pair,
        variant=smk.wildcards.variant,
        **extra,
    )
    print(f"dev {metrics['dev']} test {metrics['test']} (epoch {metrics['selected_epoch']})")


_bootstrap.run(main, snakemake)
