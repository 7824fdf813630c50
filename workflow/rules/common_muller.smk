# Input functions and constants of 8. Muller et al. (the rest: common.smk's header).

import functools

from xling.contracts import layout
from xling.finetune.grid import hp_id
from xling.muller.plan import plan as muller_plan, similarity_languages

# --------------------------------------------------------------------------- 8. Muller et al.
# (None when the config has no `muller` section.) Runs, jobs and setups: xling.muller.plan.
MULLER = muller_plan(config)
MULLER_SETUPS = {setup.key: setup for setup in MULLER.setups} if MULLER else {}


@functools.cache  # one file-system check for every job's inputs and params
def muller_model():
    """The multilingual model's directory: our own MLM's; a transformers model's own directory;
    or, for a hub id, the one its files are downloaded to (data.transformers)."""
    model = config["muller"]["model"]
    if model["source"] == "pretrain":
        return f"{R}/pretrain/multi/model"
    if Path(model["name"]).is_dir():
        return model["name"]
    if "transformers" not in config["data"]:
        raise ValueError(
            f"config key 'muller.model.name': {model['name']!r} is no directory, so it is taken "
            "for a hub id, whose files need config key 'data.transformers' (url, revision, files; "
            "see config/config.yaml); or save the model with save_pretrained and name its directory"
        )
    return f"{R}/raw/transformers/{model['name']}"


def muller_model_inputs():
    """``{"model": ...}``: the model's directory, or the files a hub id's download gives it, so
    that a changed or missing model reruns, or runs first, what reads it."""
    folder = muller_model()  # a hub id without data.transformers stops here, naming the key
    if not folder.startswith(f"{R}/raw/transformers/"):
        return {"model": folder}  # our own MLM's directory, or a saved model's
    return {"model": [f"{folder}/{file}" for file in config["data"]["transformers"]["files"]]}


def get_muller_model_inputs(wildcards):
    return muller_model_inputs()


def get_muller_model(wildcards, input):
    """The directory the job loads its model from."""
    return muller_model()


def get_transformers_source(wildcards):
    """One file of a transformers model of the hub (data.transformers)."""
    revision = config["data"]["transformers"]["revision"]
    return templated_source(
        "transformers", name=wildcards.model, revision=revision, file=wildcards.file
    )


def muller_layers():
    """Muller et al.'s model depth: config muller.model.layers (mBERT: 12), or the layers of the
    multilingual MLM this workflow trains; None without a `muller` section."""
    if not config.get("muller"):
        return None
    model = config["muller"]["model"]
    if model["source"] == "pretrain":
        return muller_multilingual_settings()["layers"]
    return model.get("layers")


def muller_multilingual_settings():
    """The multilingual MLM of the demo: config `model` with muller.model.architecture on top;
    nothing language-specific, as in mBERT: no separate parts, and no language embeddings unless
    the architecture asks for them."""
    architecture = config["muller"]["model"].get("architecture", {})
    return {
        **config["model"],
        "language_embeddings": False,
        **architecture,
        "sep_embeddings": False,
        "sep_layers": 0,
    }


def get_multilingual_pretrain_params(wildcards):
    """config `pretrain` with muller.model.pretrain on top (the multilingual MLM of the demo)."""
    return {**get_pretrain_params(wildcards), **config["muller"]["model"].get("pretrain", {})}


def get_multilingual_corpora(wildcards):
    corpora = {
        f"{lang}_{split}": f"{R}/preprocess/wiki/{lang}.{split}.txt"
        for lang in config["muller"]["languages"]
        for split in ("train", "valid", "test")
    }
    return corpora | user_dictionary_inputs(config["muller"]["languages"])


def muller_pipelines():
    return {lang: text_pipeline_settings(lang) for lang in config["muller"]["languages"]}


def muller_setup(wildcards):
    return MULLER_SETUPS[f"{wildcards.experiment}/{wildcards.mtask}/{wildcards.msource}"]


def muller_task_file(task, dataset, lang, split):
    return data_path(layout.task_files(task, dataset, lang, [split])[split])


def get_muller_setup_files(wildcards):
    """The setup's source train and dev files and the test file of each set its runs score."""
    setup = muller_setup(wildcards)
    files = {
        split: muller_task_file(setup.task, setup.train, setup.source, split)
        for split in ("train", "dev")
    }
    for evaluation in setup.scored_evaluations:
        files[f"test_{evaluation.name}"] = muller_task_file(
            setup.task, evaluation.dataset, evaluation.lang, "test"
        )
    return {**muller_model_inputs(), **files}


def get_muller_setup(wildcards):
    """The setup as plain data for the scripts: task, source, the sets its runs score."""
    setup = muller_setup(wildcards)
    evaluations = {e.name: e.lang for e in setup.scored_evaluations}
    return {"task": setup.task, "source": setup.source, "evaluations": evaluations}


def get_muller_settings(wildcards):
    from xling.muller.plan import finetune_fields

    return finetune_fields(config["muller"], wildcards.mtask)


def get_muller_parallel_files(wildcards):
    """Parallel sentences as words, per language: the toy world's, or a treebank's test set."""
    parallel = config["muller"]["similarity"]["parallel"]
    languages = similarity_languages(config["muller"])
    if parallel == "words":
        files = {lang: data_path(layout.parallel_words(lang)) for lang in languages}
    else:
        files = {
            lang: muller_task_file("parsing", parallel["ud"], lang, "test") for lang in languages
        }
    return {**files, **muller_model_inputs()}


def muller_job_file(setup, job):
    return f"{R}/muller/finetune/{setup.key}/{job}.json"


# The collector and the resampler read every job's runs (3,210 jobs in the paper plan): their input
# and params are these functions, called when their job is planned, not at parse time (every
# cluster job re-parses this file).
def muller_job_files(wildcards=None):
    return [muller_job_file(s, job) for s in MULLER.setups for job in MULLER.jobs(s)]


def get_muller_job_inputs(wildcards):
    setup = muller_setup(wildcards)
    inputs = {"encoded": f"{R}/muller/encoded/{setup.key}.pt", **muller_model_inputs()}
    if any(MULLER.measures_similarity(run) for run in muller_job_runs(setup, wildcards.job)):
        inputs["parallel"] = f"{R}/muller/encoded/parallel.pt"
    return inputs


@functools.cache
def muller_runs_by_path():
    """Every run by its path, built on first use (not at parse time: every cluster job re-parses
    this file); a paper plan looks up the runs of 3,210 jobs. Only the runs a setup trains: one
    that reads another's runs (xling.muller.plan.share_runs) has the same paths and no jobs."""
    return {
        run.path: run for setup in MULLER.setups if not setup.runs_of for run in MULLER.runs(setup)
    }


def muller_job_runs(setup, job):
    if job == "all":
        return MULLER.runs(setup)
    run = muller_runs_by_path().get(f"{setup.key}/{job}")
    return [run] if run is not None else []


def get_muller_runs(wildcards):
    """The job's runs as plain data: group, seed, grid point, output dir, similarity or not."""
    setup = muller_setup(wildcards)
    return [
        {
            "group": run.group,
            "seed": run.seed,
            "hp": MULLER.grids[setup.task][run.hp],
            "dir": f"{R}/muller/finetune/{run.path}",
            "similarity": MULLER.measures_similarity(run),
        }
        for run in muller_job_runs(setup, wildcards.job)
    ]


def muller_runs_table(wildcards=None):
    """Every run as a row for the collector: what each job file's runs are."""
    return [
        {
            "experiment": run.setup.experiment,
            "task": run.setup.task,
            "source": run.setup.source,
            "group": run.group,
            "seed": run.seed,
            "hp_id": run.hp,
            "dir": f"{R}/muller/finetune/{run.path}",
            "similarity": MULLER.measures_similarity(run),
        }
        for setup in MULLER.setups
        for run in MULLER.runs(setup)
    ]


def muller_evaluations(wildcards=None):
    """setup key -> evaluation name -> language, for the collector: each setup's own sets (a
    transfer setup's runs may score more, for a domain setup that reads them)."""
    return {key: {e.name: e.lang for e in s.evaluations} for key, s in MULLER_SETUPS.items()}


MULLER_TABLES = ["table1", "table2", "table4", "table5", "table6", "table7", "table8"]
MULLER_FIGURES = [f"figure{n}" for n in range(1, 9)]
MULLER_FORMATS = {"csv": "csv", "md": "markdown", "tex": "LaTeX", "png": "png", "pdf": "pdf"}


def muller_report_output(artefact, ext):
    """One Muller table or figure file, marked for the HTML report with its caption."""
    kind = "tables" if artefact.startswith("table") else "figures"
    label = f"{artefact[:-1].capitalize()} {artefact[-1]}"
    return report(
        f"{R}/muller/{kind}/{artefact}.{ext}",
        caption=f"../report/muller_{artefact}.rst",
        category=MULLER_REPORT,
        subcategory=label,
        labels={"artefact": label, "format": MULLER_FORMATS[ext]},
    )


def muller_targets():
    if not MULLER:
        return []
    tables = [f"{R}/muller/tables/{t}.{ext}" for t in MULLER_TABLES for ext in ("csv", "md", "tex")]
    figures = [f"{R}/muller/figures/{f}.{ext}" for f in MULLER_FIGURES for ext in ("png", "pdf")]
    return tables + figures
