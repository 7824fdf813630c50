# Stage 5, finetune: one job per (pair, variant, task, grid point); English dev selects the epoch
# and the grid points; the reported score is the mean over the best two (docs/contracts.md, 5).


rule finetune_run:
    input:
        unpack(finetune_inputs),
    output:
        metrics=f"{R}/finetune/{{pair}}/{{variant}}/{{task}}/{{hp}}/metrics.json",
    log:
        f"{R}/logs/finetune/{{pair}}_{{variant}}_{{task}}_{{hp}}.log",
    conda:
        f"{ENVS}/torch.yaml"
    threads: 1
    params:
        hp=lambda wc: task_grid(wc.task)[wc.hp],
        settings=lambda wc: config["tasks"][wc.task],
        languages=lambda wc: list(pair_languages(wc.pair)),
        seed=config["seed"],
        work_dir=lambda wc: f"{R}/finetune/{wc.pair}/{wc.variant}/{wc.task}/{wc.hp}/.work",
    script:
        "../scripts/finetune.py"


rule select_finetune:
    input:
        lambda wc: finetune_metrics(wc.pair, wc.variant, wc.task),
    output:
        f"{R}/finetune/{{pair}}/{{variant}}/{{task}}/selected.json",
    log:
        f"{R}/logs/finetune/{{pair}}_{{variant}}_{{task}}_select.log",
    conda:
        f"{ENVS}/torch.yaml"
    params:
        best_k=lambda wc: config["tasks"][wc.task]["best_k"],
    script:
        "../scripts/select_finetune.py"
