# Paths and input functions of Muller et al. (rules: muller.smk), everything under R/muller/: the
# setups' encoded data, the fine-tuning runs, the similarity of the pretrained model, and the
# paper's tables and figures. Setups, runs and jobs come from the plan (MULLER,
# xling.study.plan.muller).

import functools

from xling.contracts import layout
from xling.study.plan.muller import finetune_fields, similarity_languages

MULLER_SETUPS = {setup.key: setup for setup in MULLER.setups} if MULLER else {}
SETUP_PATTERN = "{experiment}/{mtask}/{msource}"  # a setup's key as wildcards
MULLER_TABLES = ["table1", "table2", "table4", "table5", "table6", "table7", "table8"]
MULLER_FIGURES = [f"figure{n}" for n in range(1, 9)]


def muller_encoded(key=SETUP_PATTERN):
    """A setup's files, read, checked and encoded once for all its runs."""
    return f"{R}/muller/encoded/{key}.pt"


def muller_parallel():
    """The parallel sentences of the similarity analysis, as subword ids per language."""
    return f"{R}/muller/encoded/parallel.pt"


def muller_run_dir(path):
    """A run's folder; ``path`` is the run's (xling.study.plan.muller.Run.path)."""
    return f"{R}/muller/finetune/{path}"


def muller_job_file(key=SETUP_PATTERN, job="{job}"):
    """What a job of a setup writes last: its runs' records."""
    return f"{muller_run_dir(key)}/{job}.json"


def muller_file(name):
    """The collected results (``scores.csv``, ``similarity.csv``) and their resamples."""
    return f"{R}/muller/{name}"


def muller_pretrained_similarity(name="pretrained"):
    """The pretrained model's similarity (``pretrained``) and its resamples."""
    return f"{R}/muller/similarity/{name}.csv"


def muller_artefact(artefact, ext):
    """One of Muller et al.'s tables or figures."""
    kind = "tables" if artefact.startswith("table") else "figures"
    return f"{R}/muller/{kind}/{artefact}.{ext}"


def muller_report_output(artefact, ext):
    """One Muller table or figure file, marked for the HTML report with its caption."""
    label = f"{artefact[:-1].capitalize()} {artefact[-1]}"
    path = muller_artefact(artefact, ext)
    return captioned(path, f"muller_{artefact}", MULLER_REPORT, label, subcategory=label)


@functools.cache  # one file-system check for every job's inputs and params
def muller_model():
    """The multilingual model's directory: our own MLM's; a transformers model's own directory;
    or, for a hub id, the one its files are downloaded to (data.transformers)."""
    model = config["muller"]["model"]
    if model["source"] == "pretrain":
        return f"{multilingual_model_folder()}/model"
    if Path(model["name"]).is_dir():
        return model["name"]
    if "transformers" not in config["data"]:
        raise ValueError(
            f"config key 'muller.model.name': {model['name']!r} is no directory, so it is taken "
            "for a hub id, whose files need config key 'data.transformers' (url, revision, files; "
            "see config/config.yaml); or save the model with save_pretrained and name its directory"
        )
    return transformers_dir(model["name"])


def muller_model_inputs():
    """``{"model": ...}``: the model's directory, or the files a hub id's download gives it, so
    that a changed or missing model reruns, or runs first, what reads it."""
    folder = muller_model()  # a hub id without data.transformers stops here, naming the key
    if not folder.startswith(transformers_dir("")):
        return {"model": folder}  # our own MLM's directory, or a saved model's
    return {"model": [f"{folder}/{file}" for file in config["data"]["transformers"]["files"]]}


def get_muller_model_inputs(wildcards):
    return muller_model_inputs()


def get_muller_model(wildcards, input):
    """The directory the job loads its model from."""
    return muller_model()


def muller_layers():
    """Muller et al.'s model depth: config muller.model.layers (mBERT: 12), or the layers of the
    multilingual MLM this workflow trains; None without a `muller` section."""
    if not MULLER:
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
    languages = config["muller"]["languages"]
    corpora = {}
    for lang in languages:
        corpora |= corpus_splits("wiki", lang)
    return corpora | user_dictionary_inputs(languages)


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


# The collector and the resampler read every job's runs (3,210 jobs in the paper plan): their input
# and params are these functions, called when their job is planned, not at parse time (every
# cluster job re-parses this file).
def muller_job_files(wildcards=None):
    return [muller_job_file(s.key, job) for s in MULLER.setups for job in MULLER.jobs(s)]


def get_muller_job_inputs(wildcards):
    setup = muller_setup(wildcards)
    inputs = {"encoded": muller_encoded(setup.key), **muller_model_inputs()}
    if any(MULLER.measures_similarity(run) for run in muller_job_runs(setup, wildcards.job)):
        inputs["parallel"] = muller_parallel()
    return inputs


@functools.cache
def muller_runs_by_path():
    """Every run by its path, built on first use (not at parse time: every cluster job re-parses
    this file); a paper plan looks up the runs of 3,210 jobs. Only the runs a setup trains: one
    that reads another's runs (xling.study.plan.muller.share_runs) has the same paths and no jobs.
    """
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
            "dir": muller_run_dir(run.path),
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
            "dir": muller_run_dir(run.path),
            "similarity": MULLER.measures_similarity(run),
        }
        for setup in MULLER.setups
        for run in MULLER.runs(setup)
    ]


def muller_evaluations(wildcards=None):
    """setup key -> evaluation name -> language, for the collector: each setup's own sets (a
    transfer setup's runs may score more, for a domain setup that reads them)."""
    return {key: {e.name: e.lang for e in s.evaluations} for key, s in MULLER_SETUPS.items()}


def muller_targets():
    if not MULLER:
        return []
    tables = [muller_artefact(t, ext) for t in MULLER_TABLES for ext in TABLE_FORMATS]
    figures = [muller_artefact(f, ext) for f in MULLER_FIGURES for ext in ("png", "pdf")]
    return tables + figures
