# Paths, wildcard constraints and input functions shared by every stage, in pipeline order.
# Only functions and constants here: Snakemake's linter wants rules and functions apart. Functions
# that rules call with the job's wildcards are named get_<what they return>.

import os

from xling.config import pair_languages, selected, task_dataset
from xling.contracts import layout
from xling.finetune.grid import grid_points, hp_id

R = f"results/{config['study']}"
PAIRS = list(config["pairs"])
VARIANTS = selected(config, "variants")
TASKS = selected(config, "tasks")
LANGUAGES = sorted(config["languages"])
PAIR_LANGUAGES = sorted({lang for pair in PAIRS for lang in pair_languages(pair)})


def _alternatives(values):
    # A regex that matches nothing when nothing is configured, so that no rule matches by accident.
    return "|".join(sorted(values)) if values else "(?!x)x"


wildcard_constraints:
    lang=_alternatives(LANGUAGES),
    src=_alternatives(LANGUAGES),
    tgt=_alternatives(LANGUAGES),
    pair=_alternatives(PAIRS),
    domain="wiki|cc",
    domains="(wiki|cc)-(wiki|cc)",
    scheme=_alternatives(config["vocab"]["schemes"]),
    variant=_alternatives(VARIANTS),
    task=_alternatives(TASKS),
    split="train|valid|test",
    hp="[A-Za-z0-9_.+-]+",
    shard=r"\d+",


def get_pair_languages(wildcards):
    return list(pair_languages(wildcards.pair))


# --------------------------------------------------------------------------- 1. acquire
def data_path(relative):
    """A study input under R/data/; ``relative`` comes from xling.contracts.layout, the one
    definition of that layout (rule patterns pass wildcards, e.g. layout.corpus("{domain}", ...)).
    """
    return f"{R}/data/{relative}"


def _toyworld_spec():
    from xling.toyworld import resolve_spec

    return resolve_spec(config["data"]["toyworld"])


TOYWORLD_SPEC = _toyworld_spec() if config["data"]["source"] == "toyworld" else None
PARALLEL_LANGUAGES = PAIR_LANGUAGES


def toyworld_outputs():
    from xling.toyworld import output_paths

    return output_paths(TOYWORLD_SPEC)


def get_output_dir(wildcards, output):
    """The directory that holds every output of a job. Derived from the outputs rather than
    written as a second path: a param that repeats an output path goes stale when one changes
    (Snakemake's linter flags that too)."""
    return os.path.commonpath([str(path) for path in output])


def get_download_settings(wildcards):
    downloads = config["data"]["downloads"]
    if wildcards.resource not in downloads:
        raise ValueError(
            f"no download named {wildcards.resource!r} in config key 'data.downloads' "
            f"(known: {', '.join(sorted(downloads))})"
        )
    return downloads[wildcards.resource]


def get_wikipedia_dump(wildcards):
    return f"{R}/raw/downloads/{config['data']['wikipedia'][wildcards.lang]}"


def get_commoncrawl_source(wildcards):
    return {"url": config["data"]["commoncrawl"]["url"].format(lang=wildcards.lang)}


def get_muse_source(wildcards):
    """MUSE's file of a pair: train = the 0-5000 dictionary, test = 5000-6500."""
    span = {"train": "0-5000", "test": "5000-6500"}[wildcards.split]
    url = config["data"]["muse"]["url"].format(src=wildcards.src, tgt=wildcards.tgt, span=span)
    return {"url": url}


def get_segmenter(wildcards):
    return config["languages"][wildcards.lang]["segmenter"]


def get_ud_treebank(wildcards):
    return config["data"]["ud"]["treebanks"][wildcards.lang]


def task_files(task, pair, lang, splits):
    """Data files of ``task`` for one language of a pair, by split (the pair picks the dataset)."""
    dataset = None if task == "xnli" else task_dataset(config, task, pair, lang)
    try:
        files = layout.task_files(task, dataset, lang, splits)
    except ValueError as error:
        raise ValueError(f"pair {pair}, task {task}: {error}") from None
    return {split: data_path(path) for split, path in files.items()}


# --------------------------------------------------------------------------- 2. preprocess
SHARDS = config["preprocess"]["shards"]


def shard_names():
    return [f"{i:03d}" for i in range(SHARDS)]


def variant_corpora(pair, variant):
    """(domain, lang) of each side of a pair, e.g. wiki-cc -> (wiki, en), (cc, fr)."""
    source_domain, target_domain = config["variants"][variant]["domains"].split("-")
    source, target = pair_languages(pair)
    return [(source_domain, source), (target_domain, target)]


def needed_corpora():
    """Every (domain, lang) some configured model is trained on."""
    return sorted(
        {
            corpus
            for pair in PAIRS
            for variant in VARIANTS
            for corpus in variant_corpora(pair, variant)
        }
    )


def text_pipeline_settings(lang):
    """How text of ``lang`` is normalized and segmented (config languages.<lang> + preprocess)."""
    return {
        "lang": lang,
        "segmenter": config["languages"][lang]["segmenter"],
        "lowercase": config["preprocess"]["lowercase"],
        "remove_accents": config["preprocess"]["remove_accents"],
    }


def get_text_pipeline(wildcards):
    return text_pipeline_settings(wildcards.lang)


# --------------------------------------------------------------------------- 3. vocab
def vocab_dir(pair, domains, scheme):
    return f"{R}/vocab/{pair}/{domains}/{scheme}"


def get_vocab_inputs(wildcards):
    """Tokenized train/valid/test files of both languages, with the domains of the wildcard."""
    source_domain, target_domain = wildcards.domains.split("-")
    source, target = pair_languages(wildcards.pair)
    files = {
        f"{lang}_{split}": f"{R}/preprocess/{domain}/{lang}.{split}.txt"
        for domain, lang in ((source_domain, source), (target_domain, target))
        for split in ("train", "valid", "test")
    }
    if wildcards.scheme == "codeswitch":
        # Extra anchors come from the pair's bilingual dictionary (MUSE format, train split).
        files["dictionary"] = data_path(layout.muse(source, target, "train"))
    return files


def get_scheme_settings(wildcards):
    return config["vocab"]["schemes"][wildcards.scheme]


def get_pair_pipelines(wildcards):
    return {lang: text_pipeline_settings(lang) for lang in pair_languages(wildcards.pair)}


def needed_vocabularies():
    """What the variants train on, and every configured scheme of every pair on Wikipedia."""
    of_variants = {
        vocab_dir(pair, config["variants"][v]["domains"], config["variants"][v]["vocab"])
        for pair in PAIRS
        for v in VARIANTS
    }
    every_scheme = {
        vocab_dir(pair, "wiki-wiki", scheme)
        for pair in PAIRS
        for scheme in config["vocab"]["schemes"]
    }
    return sorted(of_variants | every_scheme)


# --------------------------------------------------------------------------- 4. pretrain
def model_dir(pair, variant):
    return f"{R}/pretrain/{pair}/{variant}/model"


def get_variant_vocab_dir(wildcards):
    settings = config["variants"][wildcards.variant]
    return vocab_dir(wildcards.pair, settings["domains"], settings["vocab"])


def get_model_settings(wildcards):
    """The encoder architecture of config ``model`` with the variant's sharing knobs."""
    settings = dict(config["model"])
    settings["sep_embeddings"] = config["variants"][wildcards.variant]["sep_embeddings"]
    settings["sep_layers"] = config["variants"][wildcards.variant]["sep_layers"]
    return settings


def get_pretrain_runtime(wildcards, attempt):
    return config["pretrain"]["runtime_minutes"] * attempt


# --------------------------------------------------------------------------- 5. finetune
def task_grid(task):
    """Grid point id -> hyperparameters (ids as xling.finetune writes them in metrics.json)."""
    return {hp_id(point): point for point in grid_points(task, config["tasks"][task]["grid"])}


def get_finetune_inputs(wildcards):
    source, target = pair_languages(wildcards.pair)
    files = {"model": model_dir(wildcards.pair, wildcards.variant)}
    for split, path in task_files(
        wildcards.task, wildcards.pair, source, layout.TASK_SPLITS
    ).items():
        files[f"{source}_{split}"] = path
    files[f"{target}_test"] = task_files(wildcards.task, wildcards.pair, target, ["test"])["test"]
    return files


def get_hp(wildcards):
    return task_grid(wildcards.task)[wildcards.hp]


def get_task_settings(wildcards):
    return config["tasks"][wildcards.task]


def get_best_k(wildcards):
    return config["tasks"][wildcards.task]["best_k"]


def get_finetune_metrics(wildcards):
    return [
        f"{R}/finetune/{wildcards.pair}/{wildcards.variant}/{wildcards.task}/{hp}/metrics.json"
        for hp in task_grid(wildcards.task)
    ]


def table1_cells():
    """Every (variant, pair, task) cell of Table 1 this study computes, in a fixed order."""
    return [
        {"variant": variant, "pair": pair, "task": task, "target": pair_languages(pair)[1]}
        for pair in PAIRS
        for variant in VARIANTS
        for task in TASKS
    ]


def selected_scores():
    """The selected.json behind each cell of :func:`table1_cells`, in the same order."""
    return [
        f"{R}/finetune/{cell['pair']}/{cell['variant']}/{cell['task']}/selected.json"
        for cell in table1_cells()
    ]


# --------------------------------------------------------------------------- 6. analysis
CKA_VARIANTS = [v for v in config["analysis"]["cka"]["variants"] if v in config["variants"]]


def cka_models():
    """(pair, variant) of every model whose CKA is measured, in a fixed order."""
    return [(pair, variant) for pair in PAIRS for variant in CKA_VARIANTS]


def cka_tables():
    return [f"{R}/analysis/cka/{pair}/{variant}.csv" for pair, variant in cka_models()]


def get_cka_inputs(wildcards):
    """The model and the tokenized parallel sentences of both languages of its pair."""
    source, target = pair_languages(wildcards.pair)
    return {
        "model": model_dir(wildcards.pair, wildcards.variant),
        "source": f"{R}/preprocess/parallel/{source}.txt",
        "target": f"{R}/preprocess/parallel/{target}.txt",
    }


# --------------------------------------------------------------------------- stage targets
def data_targets():
    """Every study input: the whole toy world, or what the configured models and tasks read."""
    if config["data"]["source"] == "toyworld":
        return [data_path(path) for path in toyworld_outputs()]
    files = [data_path(layout.corpus(domain, lang)) for domain, lang in needed_corpora()]
    files += [data_path(layout.parallel(lang)) for lang in PARALLEL_LANGUAGES]
    for task in TASKS:
        for pair in PAIRS:
            source, target = pair_languages(pair)
            files += task_files(task, pair, source, layout.TASK_SPLITS).values()
            files += task_files(task, pair, target, ["test"]).values()
    if "codeswitch" in config["vocab"]["schemes"]:
        files += [data_path(layout.muse(*pair_languages(pair), "train")) for pair in PAIRS]
    return sorted(set(files))


def preprocess_targets():
    corpora = [
        f"{R}/preprocess/{domain}/{lang}.{split}.txt"
        for domain, lang in needed_corpora()
        for split in ("train", "valid", "test")
    ]
    return corpora + [f"{R}/preprocess/parallel/{lang}.txt" for lang in PARALLEL_LANGUAGES]


def vocab_targets():
    return [*needed_vocabularies(), f"{R}/tables/anchors.csv"]


def pretrain_targets():
    return [model_dir(pair, variant) for pair in PAIRS for variant in VARIANTS]


def report_targets():
    return [
        f"{R}/tables/table1.csv",
        f"{R}/tables/table1.md",
        f"{R}/tables/anchors.csv",
        f"{R}/figures/cka_layers.png",
    ]
