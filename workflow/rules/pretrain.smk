# Stage 4, pretrain: one masked-LM per (pair, variant); resumable, selected by English dev
# perplexity (docs/contracts.md, section 4). The resumable state in .work/ is never an output, so
# a killed or preempted job continues where it stopped when Snakemake reruns it.


rule pretrain_model:
    input:
        get_variant_vocab_dir,
    output:
        **pretrain_outputs(
            model_folder(),
            captioned(
                pretrain_curve_figure("{pair}_{variant}"),
                "pretrain_curve",
                WU_REPORT,
                subcategory="Pretraining curves",
                labels={"model": "{pair} {variant}"},
            ),
        ),
    log:
        f"{R}/logs/pretrain/{{pair}}_{{variant}}.log",
    retries: PRETRAIN_RETRIES
    conda:
        TORCH_ENV
    threads: config["pretrain"]["threads"]
    resources:
        runtime=get_pretrain_runtime,
    params:
        languages=get_pair_languages,
        model=get_model_settings,
        pretrain=get_pretrain_params,
        seed=config["seed"],
        work_dir=f"{model_folder()}/.work",
        title="{pair} {variant}",
    script:
        "../scripts/pretrain.py"


rule pretrain_monolingual:
    # Wu section 5: one MLM per language on its Wikipedia text; en' is the English model trained
    # with another seed.
    input:
        get_monolingual_vocab_dir,
    output:
        **pretrain_outputs(
            monolingual_model_folder(),
            captioned(
                pretrain_curve_figure("mono_{mono}"),
                "pretrain_curve",
                WU_REPORT,
                subcategory="Pretraining curves",
                labels={"model": "monolingual {mono}"},
            ),
        ),
    log:
        f"{R}/logs/pretrain/mono_{{mono}}.log",
    retries: PRETRAIN_RETRIES
    conda:
        TORCH_ENV
    threads: config["pretrain"]["threads"]
    resources:
        runtime=get_pretrain_runtime,
    params:
        languages=get_monolingual_language,
        model=get_monolingual_model_settings,
        pretrain=get_pretrain_params,
        seed=get_monolingual_seed,
        work_dir=f"{monolingual_model_folder()}/.work",
        title="monolingual {mono}",
    script:
        "../scripts/pretrain.py"
