# Stage 5, finetune: one job per (pair, variant, task, grid point); English dev selects the epoch
# and the grid points; the reported score is the mean over the best two (docs/contracts.md, 5).


rule finetune_run:
    input:
        unpack(get_finetune_inputs),
    output:
        metrics=f"{R}/finetune/{{pair}}/{{variant}}/{{task}}/{{hp}}/metrics.json",
    log:
        f"{R}/logs/finetune/{{pair}}_{{variant}}_{{task}}_{{hp}}.log",
    conda:
        "../../envs/torch.yaml"
    threads: 1
    params:
        hp=get_hp,
        settings=get_task_settings,
        languages=get_pair_languages,
        seed=config["seed"],
        work_dir=f"{R}/finetune/{{pair}}/{{variant}}/{{task}}/{{hp}}/.work",
    script:
        "../scripts/finetune.py"


rule select_finetune:
    input:
        get_finetune_metrics,
    output:
        f"{R}/finetune/{{pair}}/{{variant}}/{{task}}/selected.json",
    log:
        f"{R}/logs/finetune/{{pair}}_{{variant}}_{{task}}_select.log",
    conda:
        "../../envs/torch.yaml"
    params:
        best_k=get_best_k,
    script:
        "../scripts/select_finetune.py"
