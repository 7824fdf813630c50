# Stage 4, pretrain: one masked-LM per (pair, variant); resumable, selected by English dev
# perplexity (docs/contracts.md, section 4). The resumable state in .work/ is never an output, so
# a killed or preempted job continues where it stopped when Snakemake reruns it.


rule pretrain_model:
    input:
        vocab_dir_of_variant,
    output:
        model=directory(f"{R}/pretrain/{{pair}}/{{variant}}/model"),
        curve=f"{R}/pretrain/{{pair}}/{{variant}}/curve.csv",
        summary=f"{R}/pretrain/{{pair}}/{{variant}}/summary.json",
        figure=f"{R}/figures/pretrain/{{pair}}_{{variant}}.png",
    log:
        f"{R}/logs/pretrain/{{pair}}_{{variant}}.log",
    conda:
        f"{ENVS}/torch.yaml"
    threads: 2
    resources:
        runtime=lambda wc, attempt: config["pretrain"]["runtime_minutes"] * attempt,
    params:
        languages=lambda wc: list(pair_languages(wc.pair)),
        model=lambda wc: model_settings(wc.variant),
        pretrain=config["pretrain"],
        seed=config["seed"],
        work_dir=lambda wc: f"{R}/pretrain/{wc.pair}/{wc.variant}/.work",
    script:
        "../scripts/pretrain.py"
