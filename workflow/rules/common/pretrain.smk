# Paths and input functions of stage 4, pretrain (rules: pretrain.smk, and muller.smk's
# multilingual MLM): each model's folder under R/pretrain/ holds the model, its training curve and
# summary, and the resumable state in .work/ (never an output).

from xling.study.keys import PRETRAIN_JOB_KEYS


def model_folder(pair="{pair}", variant="{variant}"):
    """A bilingual model's folder: Table 1's (pair, variant), and Wu section 5's en-en'."""
    return f"{R}/pretrain/{pair}/{variant}"


def monolingual_model_folder(mono="{mono}"):
    """A monolingual model's folder (Wu section 5): one per language, and en'."""
    return f"{R}/pretrain/mono/{mono}"


def multilingual_model_folder():
    """Muller et al.'s multilingual MLM, where the study trains its own (muller.smk)."""
    return f"{R}/pretrain/multi"


def model_dir(pair, variant):
    return f"{model_folder(pair, variant)}/model"


def monolingual_model_dir(name):
    return f"{monolingual_model_folder(name)}/model"


def pretrain_curve_figure(name):
    """The training curve's figure of the model ``name`` (``{pair}_{variant}``, ``mono_{mono}``,
    ``multi``)."""
    return f"{R}/figures/pretrain/{name}.png"


def pretrain_outputs(folder, figure):
    """What a pretraining job writes: the model, its curve, its summary and the curve's figure."""
    return {
        "model": directory(f"{folder}/model"),
        "curve": f"{folder}/curve.csv",
        "summary": f"{folder}/summary.json",
        "figure": figure,
    }


def get_variant_vocab_dir(wildcards):
    return variant_vocab_dir(wildcards.pair, wildcards.variant)


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
    """config ``pretrain`` without the keys that only say how a job runs (xling.study.keys
    PRETRAIN_JOB_KEYS): changing those must not rerun a finished model."""
    return {k: v for k, v in config["pretrain"].items() if k not in PRETRAIN_JOB_KEYS}


def pretrain_targets():
    bilingual = [model_dir(pair, variant) for pair, variant in BILINGUAL_MODELS]
    return bilingual + [monolingual_model_dir(name) for name in MONOLINGUAL_MODELS]
