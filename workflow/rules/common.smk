# Paths, wildcard constraints and input functions shared by every stage.
# Only functions and constants here (Snakemake's linter wants rules and functions apart).

import os

from xling.config import pair_languages, selected, task_dataset
from xling.finetune.grid import grid_points, hp_id

R = f"results/{config['study']}"
PAIRS = list(config["pairs"])
VARIANTS = selected(config, "variants")
TASKS = selected(config, "tasks")
LANGUAGES = sorted(config["languages"])
PAIR_LANGUAGES = sorted({lang for pair in PAIRS for lang in pair_languages(pair)})
ENVS = f"{workflow.basedir}/envs"


def _alternatives(values):
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


def variant_settings(variant):
    return config["variants"][variant]


def variant_corpora(pair, variant):
    """(domain, lang) of each side of a pair, e.g. wiki-cc -> (wiki, en), (cc, fr)."""
    source_domain, target_domain = variant_settings(variant)["domains"].split("-")
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


def vocab_dir(pair, domains, scheme):
    return f"{R}/vocab/{pair}/{domains}/{scheme}"


def vocab_dir_of_variant(wildcards):
    settings = variant_settings(wildcards.variant)
    return vocab_dir(wildcards.pair, settings["domains"], settings["vocab"])


def vocab_inputs(wildcards):
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
        files["dictionary"] = f"{R}/data/muse/{source}-{target}.train.txt"
    return files


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


def model_dir(pair, variant):
    return f"{R}/pretrain/{pair}/{variant}/model"


# --------------------------------------------------------------------------- fine-tuning
def task_grid(task):
    """Grid point id -> hyperparameters (ids as xling.finetune writes them in metrics.json)."""
    return {hp_id(point): point for point in grid_points(task, config["tasks"][task]["grid"])}


def task_files(task, pair, lang, splits):
    """Data files of ``task`` for one language of a pair, by split (contracts, section 1)."""
    if task == "xnli":
        # XNLI-1.0 holds dev/test of every language in one file; the train set is English only.
        files = {"dev": f"{R}/data/xnli/xnli.dev.tsv", "test": f"{R}/data/xnli/xnli.test.tsv"}
        if "train" in splits and lang != "en":
            raise ValueError(f"XNLI has English training data only; {pair} trains on {lang}")
        files["train"] = f"{R}/data/xnli/multinli.train.en.tsv"
        return {split: files[split] for split in splits}
    dataset = task_dataset(config, task, pair, lang)
    if task == "ner":
        return {split: f"{R}/data/ner/{dataset}/{lang}/{split}.txt" for split in splits}
    if task == "parsing":
        return {split: f"{R}/data/ud/{dataset}/{lang}/{split}.conllu" for split in splits}
    raise ValueError(f"task {task!r} has no data layout")


def finetune_inputs(wildcards):
    source, target = pair_languages(wildcards.pair)
    files = {"model": model_dir(wildcards.pair, wildcards.variant)}
    for split, path in task_files(
        wildcards.task, wildcards.pair, source, ["train", "dev", "test"]
    ).items():
        files[f"{source}_{split}"] = path
    files[f"{target}_test"] = task_files(wildcards.task, wildcards.pair, target, ["test"])["test"]
    return files


def finetune_metrics(pair, variant, task):
    return [f"{R}/finetune/{pair}/{variant}/{task}/{hp}/metrics.json" for hp in task_grid(task)]


def selected_scores():
    return [
        f"{R}/finetune/{pair}/{variant}/{task}/selected.json"
        for pair in PAIRS
        for variant in VARIANTS
        for task in TASKS
    ]


# --------------------------------------------------------------------------- analysis
CKA_VARIANTS = [v for v in config["analysis"]["cka"]["variants"] if v in config["variants"]]


def cka_tables():
    return [f"{R}/analysis/cka/{pair}/{variant}.csv" for pair in PAIRS for variant in CKA_VARIANTS]


# --------------------------------------------------------------------------- acquire
PARALLEL_LANGUAGES = PAIR_LANGUAGES


def _toyworld_spec():
    from xling.toyworld import resolve_spec

    return resolve_spec(config["data"]["toyworld"])


TOYWORLD_SPEC = _toyworld_spec() if config["data"]["source"] == "toyworld" else None


def common_output_dir(wildcards, output):
    """The directory that holds every output of a job (derived, not hardcoded, for the linter)."""
    return os.path.commonpath([str(path) for path in output])


def toyworld_outputs():
    from xling.toyworld import output_paths

    return output_paths(TOYWORLD_SPEC)


def muse_url(src, tgt, split):
    """MUSE's file of a pair: train = the 0-5000 dictionary, test = 5000-6500."""
    span = {"train": "0-5000", "test": "5000-6500"}[split]
    return config["data"]["muse"]["url"].format(src=src, tgt=tgt, span=span)


def download_settings(resource):
    downloads = config["data"]["downloads"]
    if resource not in downloads:
        raise ValueError(
            f"no download named {resource!r} in config key 'data.downloads' "
            f"(known: {', '.join(sorted(downloads))})"
        )
    return downloads[resource]


# --------------------------------------------------------------------------- preprocess
SHARDS = config["preprocess"]["shards"]


def shard_names():
    return [f"{i:03d}" for i in range(SHARDS)]


def text_pipeline_settings(lang):
    """How text of ``lang`` is normalized and segmented (config languages.<lang> + preprocess)."""
    return {
        "lang": lang,
        "segmenter": config["languages"][lang]["segmenter"],
        "lowercase": config["preprocess"]["lowercase"],
        "remove_accents": config["preprocess"]["remove_accents"],
    }


# --------------------------------------------------------------------------- pretrain
def model_settings(variant):
    """The encoder architecture of config ``model`` with the variant's sharing knobs."""
    settings = dict(config["model"])
    settings["sep_embeddings"] = config["variants"][variant]["sep_embeddings"]
    settings["sep_layers"] = config["variants"][variant]["sep_layers"]
    return settings


# --------------------------------------------------------------------------- targets
def data_targets():
    """Every study input: the whole toy world, or what the configured models and tasks read."""
    if config["data"]["source"] == "toyworld":
        return [f"{R}/data/{path}" for path in toyworld_outputs()]
    files = [f"{R}/data/corpus/{domain}/{lang}.txt" for domain, lang in needed_corpora()]
    files += [f"{R}/data/parallel/{lang}.txt" for lang in PARALLEL_LANGUAGES]
    for task in TASKS:
        for pair in PAIRS:
            source, target = pair_languages(pair)
            files += task_files(task, pair, source, ["train", "dev", "test"]).values()
            files += task_files(task, pair, target, ["test"]).values()
    if "codeswitch" in config["vocab"]["schemes"]:
        files += [f"{R}/data/muse/{pair}.train.txt" for pair in PAIRS]
    return sorted(set(files))


def preprocess_targets():
    corpora = [
        f"{R}/preprocess/{domain}/{lang}.{split}.txt"
        for domain, lang in needed_corpora()
        for split in ("train", "valid", "test")
    ]
    return corpora + [f"{R}/preprocess/parallel/{lang}.txt" for lang in PARALLEL_LANGUAGES]


def pretrain_targets():
    return [model_dir(pair, variant) for pair in PAIRS for variant in VARIANTS]


def report_targets():
    return [
        f"{R}/tables/table1.csv",
        f"{R}/tables/table1.md",
        f"{R}/tables/anchors.csv",
        f"{R}/figures/cka_layers.png",
    ]


STAGE_TARGETS = {
    "data": data_targets,
    "preprocess": preprocess_targets,
    "vocab": lambda: [*needed_vocabularies(), f"{R}/tables/anchors.csv"],
    "pretrain": pretrain_targets,
    "finetune": selected_scores,
    "analysis": cka_tables,
    "report": report_targets,
}


def requested_targets(names):
    """What `all` builds: the report, or the stages named after --configfile (see ./all)."""
    names = [name for name in names if name != "all"] or ["report"]
    return sorted({path for name in names for path in STAGE_TARGETS[name]()})
