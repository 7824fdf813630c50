# Stage 5, finetune: one job per (pair, variant, task, grid point), per N grid points of a task,
# or per pretrained model (`finetune.runs_per_job`: 1, N, model); English dev selects the epoch and
# the grid points; the reported score is the mean over the best `best_k` (docs/contracts.md, 5).


if T1.runs_per_job == "model":

    rule finetune_model:
        # Every task and grid point of one model in one process: torch starts once.
        input:
            unpack(get_finetune_model_inputs),
        output:
            finetune_job_file(),
        log:
            f"{R}/logs/finetune/{{pair}}_{{variant}}.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            runs=get_finetune_model_runs,
        script:
            "../scripts/finetune_model.py"

elif T1.packs_runs:

    rule finetune_pack:
        # N grid points of one task, one after the other in one process: runs too small to fill
        # a GPU share one job (a killed job reruns only its runs without done.json).
        input:
            unpack(get_finetune_inputs),
        output:
            finetune_pack_file(),
        log:
            f"{R}/logs/finetune/{{pair}}_{{variant}}_{{task}}_pack{{pack}}_{{runs}}runs.log",
        wildcard_constraints:
            pack=r"\d+",
            runs=r"\d+",
        conda:
            TORCH_ENV
        threads: 1
        params:
            runs=get_finetune_pack_runs,
        script:
            "../scripts/finetune_model.py"

else:

    rule finetune_run:
        input:
            unpack(get_finetune_inputs),
        output:
            metrics=f"{finetune_run_dir()}/metrics.json",
        log:
            f"{R}/logs/finetune/{{pair}}_{{variant}}_{{task}}_{{hp}}.log",
        conda:
            TORCH_ENV
        threads: 1
        params:
            hp=get_hp,
            settings=get_task_settings,
            languages=get_pair_languages,
            seed=config["seed"],
            work_dir=f"{finetune_run_dir()}/.work",
        script:
            "../scripts/finetune.py"


rule select_finetune:
    input:
        get_finetune_metrics,
    output:
        selected_file(),
    log:
        f"{R}/logs/finetune/{{pair}}_{{variant}}_{{task}}_select.log",
    conda:
        TORCH_ENV
    params:
        best_k=get_best_k,
        metrics=get_finetune_metric_files,
    script:
        "../scripts/select_finetune.py"
