# Paths and input functions of stage 5, finetune (rules: finetune.smk): Table 1's fine-tuning
# runs under R/finetune/<pair>/<variant>/, one folder per (task, grid point) and the selection of
# each (pair, variant, task). A run is one job (finetune.runs_per_job: 1), one of a pack of N grid
# points of a task (N), or one of every run of a model (model).

from xling.contracts import layout
from xling.finetune.settings import run_settings


def finetune_run_dir(pair="{pair}", variant="{variant}", task="{task}", hp="{hp}"):
    return f"{R}/finetune/{pair}/{variant}/{task}/{hp}"


def finetune_job_file(pair="{pair}", variant="{variant}"):
    """What a one-process-per-model job writes last: the list of its runs' metrics files."""
    return f"{R}/finetune/{pair}/{variant}/runs.json"


def finetune_pack_file(
    pair="{pair}", variant="{variant}", task="{task}", pack="{pack}", runs="{runs}"
):
    """What a job of ``runs`` grid points of a task writes last (finetune.runs_per_job: N): the
    list of its runs' metrics files. The count is in the name for the profile, whose wall time
    for the job is that of its runs."""
    return f"{R}/finetune/{pair}/{variant}/{task}/pack{pack}_{runs}runs.json"


def finetune_pack_files(pair, variant, task):
    """The job files of every pack of a (pair, variant, task), numbered from 1."""
    return [
        finetune_pack_file(pair, variant, task, number, len(points))
        for number, points in enumerate(T1.packs(task), start=1)
    ]


def selected_file(pair="{pair}", variant="{variant}", task="{task}"):
    """The grid points selected on English dev, with the scores they average."""
    return f"{R}/finetune/{pair}/{variant}/{task}/selected.json"


def finetune_inputs(pair, variant, task):
    """The model and the task's files of a Table 1 fine-tuning run, keyed <lang>_<split>."""
    source, target = pair_languages(pair)
    files = {"model": model_dir(pair, variant)}
    for split, path in task_files(task, pair, source, layout.TASK_SPLITS).items():
        files[f"{source}_{split}"] = path
    files[f"{target}_test"] = task_files(task, pair, target, ["test"])["test"]
    return files


def get_finetune_inputs(wildcards):
    return finetune_inputs(wildcards.pair, wildcards.variant, wildcards.task)


def get_hp(wildcards):
    return T1.grids[wildcards.task][wildcards.hp]


def get_task_settings(wildcards):
    return run_settings(config["tasks"][wildcards.task])


def get_best_k(wildcards):
    return config["tasks"][wildcards.task]["best_k"]


def get_finetune_metric_files(wildcards):
    """The metrics.json of every grid point of a (pair, variant, task)."""
    pair, variant, task = wildcards.pair, wildcards.variant, wildcards.task
    return [f"{finetune_run_dir(pair, variant, task, hp)}/metrics.json" for hp in T1.grids[task]]


def get_finetune_metrics(wildcards):
    """select_finetune's input: the grid points' metrics, or the jobs that wrote them."""
    if T1.runs_per_job == "model":
        return finetune_job_file(wildcards.pair, wildcards.variant)
    if T1.packs_runs:
        return finetune_pack_files(wildcards.pair, wildcards.variant, wildcards.task)
    return get_finetune_metric_files(wildcards)


def get_finetune_model_inputs(wildcards):
    """Every configured task's files of a (pair, variant), keyed <task>_<lang>_<split>."""
    files = {"model": model_dir(wildcards.pair, wildcards.variant)}
    for task in TASKS:
        for key, path in finetune_inputs(wildcards.pair, wildcards.variant, task).items():
            if key != "model":
                files[f"{task}_{key}"] = path
    return files


def get_finetune_model_runs(wildcards):
    """Every (task, grid point) of a (pair, variant) as xling.finetune.bundle runs them."""
    pair, variant = wildcards.pair, wildcards.variant
    return [finetune_run_spec(pair, variant, task, hp) for task in TASKS for hp in T1.grids[task]]


def get_finetune_pack_runs(wildcards):
    """The grid points of one pack of a (pair, variant, task), as xling.finetune.bundle runs
    them."""
    pair, variant, task = wildcards.pair, wildcards.variant, wildcards.task
    packs = T1.packs(task)
    number, runs = int(wildcards.pack), int(wildcards.runs)
    if not 1 <= number <= len(packs) or len(packs[number - 1]) != runs:
        raise ValueError(
            f"no pack {number} of {runs} runs for {task} at finetune.runs_per_job "
            f"{T1.runs_per_job}: the packs are {finetune_pack_files(pair, variant, task)}"
        )
    return [finetune_run_spec(pair, variant, task, hp) for hp in packs[number - 1]]


def finetune_run_spec(pair, variant, task, hp):
    """One run as xling.finetune.bundle.run_model_job takes it."""
    source, target = pair_languages(pair)
    files = finetune_inputs(pair, variant, task)
    out_dir = finetune_run_dir(pair, variant, task, hp)
    return {
        "task": task,
        "hp": T1.grids[task][hp],
        "settings": run_settings(config["tasks"][task]),
        "seed": config["seed"],
        "source": source,
        "train": files[f"{source}_train"],
        "dev": {source: files[f"{source}_dev"]},
        "test": {lang: files[f"{lang}_test"] for lang in (source, target)},
        "out_dir": out_dir,
        "work_dir": f"{out_dir}/.work",
        "pair": pair,
        "variant": variant,
    }


def selected_scores():
    """The selected.json behind each cell of Table 1 (T1.cells()), in the same order."""
    return [selected_file(cell["pair"], cell["variant"], cell["task"]) for cell in T1.cells()]


def finetune_targets():
    """The selected.json of every configured task (Table 1's or not), pair and variant."""
    return [
        selected_file(pair, variant, task)
        for pair in PAIRS
        for variant in VARIANTS
        for task in TASKS
    ]
