# Input functions and constants of 4. pretrain and 5. finetune, and the targets of stages 1-5 (the
# rest: common.smk's header).

from xling.config import PRETRAIN_JOB_KEYS, pair_languages, selected
from xling.contracts import layout
from xling.finetune.grid import grid_points, hp_id
from xling.finetune.settings import run_settings
from xling.papers.wu2020 import WU_TASKS


# --------------------------------------------------------------------------- 4. pretrain
def model_dir(pair, variant):
    return f"{R}/pretrain/{pair}/{variant}/model"


def get_variant_vocab_dir(wildcards):
    return variant_vocab_dir(wildcards.pair, wildcards.variant)


def monolingual_model_dir(name):
    return f"{R}/pretrain/mono/{name}/model"


def get_monolingual_vocab_dir(wildcards):
    return monolingual_vocab_dir(S5.models[wildcards.mono].lang)


def get_monolingual_language(wildcards):
    return [S5.models[wildcards.mono].lang]


def get_monolingual_seed(wildcards):
    return S5.models[wildcards.mono].seed


def get_model_settings(wildcards):
    """The encoder architecture of config ``model`` with the variant's sharing knobs."""
    settings = dict(config["model"])
    settings["sep_embeddings"] = config["variants"][wildcards.variant]["sep_embeddings"]
    settings["sep_layers"] = config["variants"][wildcards.variant]["sep_layers"]
    return settings


def get_monolingual_model_settings(wildcards):
    """The architecture of config ``model``; one language, so nothing is language-specific."""
    return {**config["model"], "sep_embeddings": False, "sep_layers": 0}


def get_pretrain_runtime(wildcards):
    # The same wall time at every attempt: a retry resumes from the checkpoint, so it needs no
    # more, and more would exceed the partition's limit (docs/cluster.md, "Long jobs").
    return config["pretrain"]["runtime_minutes"]


# Retries are the submitting Snakemake's: inside a cluster job (remote mode) a failed attempt must
# end the job, so that the next attempt is a new job with a fresh time limit, not a rerun in the
# minutes the old one has left.
PRETRAIN_RETRIES = 0 if workflow.remote_exec else config["pretrain"]["attempts"] - 1


def get_pretrain_params(wildcards):
    """config ``pretrain`` without the keys that only say how a job runs (xling.config
    PRETRAIN_JOB_KEYS): changing those must not rerun a finished model."""
    return {k: v for k, v in config["pretrain"].items() if k not in PRETRAIN_JOB_KEYS}


# --------------------------------------------------------------------------- 5. finetune
def task_grid(task):
    """Grid point id -> hyperparameters (ids as xling.finetune writes them in metrics.json)."""
    return {hp_id(point): point for point in grid_points(task, config["tasks"][task]["grid"])}


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
    return task_grid(wildcards.task)[wildcards.hp]


def get_task_settings(wildcards):
    return run_settings(config["tasks"][wildcards.task])


def get_best_k(wildcards):
    return config["tasks"][wildcards.task]["best_k"]


# `finetune.runs_per_job`: 1 = one job per (pair, variant, task, grid point), as a cluster wants;
# "model" = every task and grid point of one pretrained model in one process (the demo).
FINETUNE_RUNS_PER_JOB = config["finetune"]["runs_per_job"]  # the schema fills in 1


def finetune_run_dir(pair, variant, task, hp):
    return f"{R}/finetune/{pair}/{variant}/{task}/{hp}"


def finetune_job_file(pair, variant):
    """What a one-process-per-model job writes last: the list of its runs' metrics files."""
    return f"{R}/finetune/{pair}/{variant}/runs.json"


def get_finetune_metric_files(wildcards):
    """The metrics.json of every grid point of a (pair, variant, task)."""
    return [
        f"{finetune_run_dir(wildcards.pair, wildcards.variant, wildcards.task, hp)}/metrics.json"
        for hp in task_grid(wildcards.task)
    ]


def get_finetune_metrics(wildcards):
    """select_finetune's input: the grid points' metrics, or the job that wrote them all."""
    if FINETUNE_RUNS_PER_JOB == "model":
        return finetune_job_file(wildcards.pair, wildcards.variant)
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
    source, target = pair_languages(pair)
    runs = []
    for task in TASKS:
        files = finetune_inputs(pair, variant, task)
        for hp, point in task_grid(task).items():
            out_dir = finetune_run_dir(pair, variant, task, hp)
            runs.append(
                {
                    "task": task,
                    "hp": point,
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
            )
    return runs


def table1_cells():
    """Every (variant, pair, task) cell of Table 1 this study computes, in a fixed order: the
    configured tasks that are Table 1's (a configured POS task is fine-tuned, not put there)."""
    return [
        {"variant": variant, "pair": pair, "task": task, "target": pair_languages(pair)[1]}
        for pair in PAIRS
        for variant in VARIANTS
        for task in TASKS
        if task in WU_TASKS
    ]


def selected_scores():
    """The selected.json behind each cell of :func:`table1_cells`, in the same order."""
    return [
        f"{R}/finetune/{cell['pair']}/{cell['variant']}/{cell['task']}/selected.json"
        for cell in table1_cells()
    ]


def finetune_targets():
    """The selected.json of every configured task (Table 1's or not), pair and variant."""
    return [
        f"{R}/finetune/{pair}/{variant}/{task}/selected.json"
        for pair in PAIRS
        for variant in VARIANTS
        for task in TASKS
    ]


# --------------------------------------------------------------------------- stage targets
def data_targets():
    """Every study input: the whole toy world, or what the configured models and tasks read."""
    if config["data"]["source"] == "toyworld":
        return [data_path(path) for path in toyworld_outputs()]
    files = [data_path(layout.corpus(domain, lang)) for domain, lang in needed_corpora()]
    files += [data_path(layout.parallel(lang)) for lang in PAIR_LANGUAGES]
    for task in TASKS:
        for pair in PAIRS:
            source, target = pair_languages(pair)
            files += task_files(task, pair, source, layout.TASK_SPLITS).values()
            files += task_files(task, pair, target, ["test"]).values()
    if "codeswitch" in config["vocab"]["schemes"]:
        files += [data_path(layout.muse(*pair_languages(pair), "train")) for pair in PAIRS]
    for pair in S5.pairs if S5 else []:
        source, target = pair_languages(pair)
        files += [data_path(layout.muse(source, target, split)) for split in ("train", "test")]
        files += [data_path(layout.tatoeba(source, target, lang)) for lang in (source, target)]
    return sorted(set(files))


def preprocess_targets():
    corpora = [
        f"{R}/preprocess/{domain}/{lang}.{split}.txt"
        for domain, lang in needed_corpora()
        for split in ("train", "valid", "test")
    ]
    return corpora + [f"{R}/preprocess/parallel/{lang}.txt" for lang in PAIR_LANGUAGES]


def vocab_targets():
    return [*needed_vocabularies(), f"{R}/tables/anchors.csv"]


def pretrain_targets():
    bilingual = [model_dir(pair, variant) for pair, variant in BILINGUAL_MODELS]
    return bilingual + [monolingual_model_dir(name) for name in MONOLINGUAL_MODELS]
