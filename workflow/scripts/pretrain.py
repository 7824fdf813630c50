"""Adapter: pretrain one masked LM (pair x variant); resumes from its work directory."""

import _bootstrap

# Config keys of `pretrain` that are not PretrainSettings fields (cluster resources).
RESOURCE_KEYS = {"runtime_minutes"}


def main(smk):
    from pathlib import Path

    from xling.pretrain import PretrainSettings, plot_curve, pretrain

    fields = {k: v for k, v in smk.params.pretrain.items() if k not in RESOURCE_KEYS}
    settings = PretrainSettings(
        architecture=smk.params.model, seed=smk.params.seed, threads=smk.threads, **fields
    )
    summary = pretrain(
        smk.input[0],
        smk.params.languages,
        smk.output.model,
        smk.params.work_dir,
        smk.output.curve,
        smk.output.summary,
        settings,
        tokenizer_dir=Path(smk.input[0]) / "tokenizer",
    )
    plot_curve(
        smk.output.curve, smk.output.figure, title=f"{smk.wildcards.pair} {smk.wildcards.variant}"
    )
    print({k: summary[k] for k in sorted(summary) if not isinstance(summary[k], dict | list)})


_bootstrap.run(main, snakemake)
