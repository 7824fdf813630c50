# Paths, wildcard constraints and input functions shared by every stage, in pipeline order.
# Only functions and constants here: Snakemake's linter wants rules and functions apart. Functions
# that rules call with the job's wildcards are named get_<what they return>.

import functools
import os

from xling.acquire import manual

from xling.config import (
    PRETRAIN_JOB_KEYS,
    pair_languages,
    selected,
    task_dataset,
    ud_source,
    ud_splits,
)
from xling.contracts import layout
from xling.finetune.grid import grid_points, hp_id
from xling.monolingual import plan as section5_plan
from xling.papers.wu2020 import WU_TASKS
from xling.report.claims import input_paths as claims_input_paths
from xling.muller.plan import plan as muller_plan, similarity_languages

R = f"results/{config['study']}"
PAIRS = list(config["pairs"])  # Table 1's pairs
VARIANTS = selected(config, "variants")
TASKS = selected(config, "tasks")
LANGUAGES = sorted(config["languages"])
# Wu section 5 (None when the config has no `monolingual` section): its monolingual models, and
# the bilingual models it compares them with besides Table 1's.
S5 = section5_plan(config)
BILINGUAL_MODELS = sorted(
    {(pair, variant) for pair in PAIRS for variant in VARIANTS}
    | (set(S5.bilingual.items()) if S5 else set())
)
MONOLINGUAL_MODELS = sorted(S5.models) if S5 else []
# Wu 5.1.2's word alignments: the toy world's gold ones, or eflomal's (rule align_parallel)
GOLD_ALIGNMENTS = S5 is not None and config["analysis"]["word_aligner"] == "gold"
# Figure 4's settings as its jobs' params, without its list of pairs: adding a pair must not rerun
# the word vectors of the others.
WORD_SETTINGS = {
    k: v for k, v in config["analysis"].get("word_alignment", {}).items() if k != "pairs"
}
PAIR_LANGUAGES = sorted({lang for pair, _ in BILINGUAL_MODELS for lang in pair_languages(pair)})


def _alternatives(values):
    # A regex that matches nothing when nothing is configured, so that no rule matches by accident.
    return "|".join(sorted(values)) if values else "(?!x)x"


wildcard_constraints:
    lang=_alternatives(LANGUAGES),
    src=_alternatives(LANGUAGES),
    tgt=_alternatives(LANGUAGES),
    pair=_alternatives({pair for pair, _ in BILINGUAL_MODELS}),
    mono=_alternatives(MONOLINGUAL_MODELS),
    kind="mono|bilingual",
    layer=r"\d+",
    domain="wiki|cc",
    domains="(wiki|cc)-(wiki|cc)",
    scheme=_alternatives(config["vocab"]["schemes"]),
    variant=_alternatives({variant for _, variant in BILINGUAL_MODELS}),
    task=_alternatives(
        set(TASKS) | set(config["analysis"]["contextual_transfer"]["tasks"] if S5 else [])
    ),
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
# Languages of the multi-way parallel sentences (XNLI in the paper study); en''s paraphrases are
# not an XNLI language: the paper study takes them from the manual folder.
PARALLEL_LANGUAGES = [lang for lang in PAIR_LANGUAGES if not S5 or lang != S5.english_prime]


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


def templated_source(section, **fields):
    """A download of config ``data.<section>``: its url template filled in, and the sha256 pinned
    for that file name under ``data.<section>.sha256`` if any."""
    settings = config["data"][section]
    url = settings["url"].format(**fields)
    source = {"url": url}
    pinned = (settings.get("sha256") or {}).get(url.rsplit("/", 1)[-1])
    if pinned:
        source["sha256"] = pinned
    return source


def get_commoncrawl_source(wildcards):
    # CC-100 names some languages its own way (Chinese: zh-Hans): data.commoncrawl.codes
    code = config["data"]["commoncrawl"].get("codes", {}).get(wildcards.lang, wildcards.lang)
    return templated_source("commoncrawl", lang=code)


def get_muse_source(wildcards):
    """MUSE's file of a pair: train = the 0-5000 dictionary, test = 5000-6500."""
    span = {"train": "0-5000", "test": "5000-6500"}[wildcards.split]
    return templated_source("muse", src=wildcards.src, tgt=wildcards.tgt, span=span)


def get_tatoeba_source(wildcards):
    """LASER's file of one side of an English-X pair (``tatoeba.fra-eng.fra`` / ``.eng``)."""
    codes = config["data"]["tatoeba"]["codes"]
    if wildcards.tgt not in codes or wildcards.lang not in ("en", wildcards.tgt):
        raise ValueError(
            f"no Tatoeba file for en-{wildcards.tgt}.{wildcards.lang}: a pair's sides are en and "
            f"its target, and the target needs LASER's code under config key data.tatoeba.codes "
            f"(configured: {', '.join(sorted(codes))})"
        )
    code = codes[wildcards.tgt]
    side = "eng" if wildcards.lang == "en" else code
    return templated_source("tatoeba", code=code, side=side)


def get_fasttext_source(wildcards):
    return templated_source("fasttext", lang=wildcards.lang)


def ud_import_groups():
    """Splits -> the UD datasets of config data.ud that have exactly these splits (PUD: test
    only). Each group has its own import rule, since outputs cannot depend on wildcards."""
    groups = {}
    for name, dataset in config["data"].get("ud", {}).items():
        groups.setdefault(tuple(ud_splits(dataset)), []).append(name)
    return groups


def ud_import_rule(splits):
    """import_ud for datasets with train, dev and test; import_ud_test for test-only ones."""
    return "import_ud" if splits == layout.TASK_SPLITS else "_".join(("import_ud", *splits))


def get_ud_source(wildcards):
    """Where the dataset's language comes from: a release's treebank, or the manual folder."""
    return ud_source(config, wildcards.dataset, wildcards.lang)


# Hand-provided files: the import rules take those present as inputs and name the missing ones
# while Snakemake plans (xling.acquire.manual).
MANUAL_DIR = config["data"].get("manual_dir", "")  # required by the studies that import
MISSING_MANUAL = manual.MissingFiles()


def get_manual_ner_files(wildcards):
    files = manual.ner_files(wildcards.dataset, wildcards.lang, MANUAL_DIR)
    what = f"NER dataset {wildcards.dataset}, {wildcards.lang}"
    howto = manual.NER_HOWTO[wildcards.dataset].format(lang=wildcards.lang)
    return MISSING_MANUAL.present(files.values(), what, howto)


def get_manual_ud_files(wildcards, splits):
    if "manual_dir" not in get_ud_source(wildcards):
        return []
    files = manual.ud_files(wildcards.dataset, wildcards.lang, splits, MANUAL_DIR)
    what = f"UD dataset {wildcards.dataset}, {wildcards.lang}"
    return MISSING_MANUAL.present(files, what, "CoNLL-U, UD v2; docs/contracts.md")


def get_manual_paraphrases(wildcards):
    file = manual.paraphrase_file(wildcards.lang, MANUAL_DIR)
    what = f"paraphrases {wildcards.lang}, Wu section 5.2"
    howto = "English paraphrases of the parallel sentences, line-aligned with their English side"
    return MISSING_MANUAL.present([file], what, howto)


def get_ud_release(wildcards):
    """The unpacked UD release of the dataset; nothing for a manual dataset."""
    source = get_ud_source(wildcards)
    return [] if "manual_dir" in source else [f"{R}/raw/unpacked/{source['download']}"]


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


def corpus_language(lang):
    """Whose text a model reads for ``lang``: en' (Wu section 5.2) models read English."""
    return S5.corpus_language(lang) if S5 else lang


def variant_corpora(pair, variant):
    """(domain, lang) of each side of a pair, e.g. wiki-cc -> (wiki, en), (cc, fr)."""
    source_domain, target_domain = config["variants"][variant]["domains"].split("-")
    source, target = pair_languages(pair)
    return [(source_domain, source), (target_domain, target)]


def needed_corpora():
    """Every (domain, lang of the text) some configured model is trained on."""
    bilingual = {
        (domain, corpus_language(lang))
        for pair, variant in BILINGUAL_MODELS
        for domain, lang in variant_corpora(pair, variant)
    }
    monolingual = {("wiki", model.lang) for model in S5.models.values()} if S5 else set()
    return sorted(bilingual | monolingual)


def text_pipeline_settings(lang):
    """How text of ``lang`` is normalized and segmented (config languages.<lang> + preprocess).

    A user dictionary travels as its path; the job reads it (TextPipeline.from_dict), and every
    job given these settings has the file as an input (user_dictionary_inputs).
    """
    settings = {
        "lang": lang,
        "segmenter": config["languages"][lang]["segmenter"],
        "lowercase": config["preprocess"]["lowercase"],
        "remove_accents": config["preprocess"]["remove_accents"],
    }
    if dictionary := user_dictionary_path(lang):
        settings["user_dictionary"] = dictionary
    return settings


def user_dictionary_path(lang):
    """Config languages.<lang>.user_dictionary, ``{data}`` standing for the study's R/data."""
    path = config["languages"][lang].get("user_dictionary")
    return path.replace("{data}", f"{R}/data") if path else None


def user_dictionary_inputs(langs):
    """The user dictionaries of ``langs``' segmenters, as named inputs."""
    paths = {lang: user_dictionary_path(lang) for lang in langs}
    return {f"user_dictionary_{lang}": path for lang, path in paths.items() if path}


def get_text_pipeline(wildcards):
    return text_pipeline_settings(wildcards.lang)


def get_user_dictionary(wildcards):
    dictionary = user_dictionary_path(wildcards.lang)
    return [dictionary] if dictionary else []


# --------------------------------------------------------------------------- 3. vocab
def vocab_dir(pair, domains, scheme):
    return f"{R}/vocab/{pair}/{domains}/{scheme}"


def get_vocab_inputs(wildcards):
    """Tokenized train/valid/test files of both languages, with the domains of the wildcard."""
    source_domain, target_domain = wildcards.domains.split("-")
    source, target = pair_languages(wildcards.pair)
    files = {
        f"{lang}_{split}": f"{R}/preprocess/{domain}/{corpus_language(lang)}.{split}.txt"
        for domain, lang in ((source_domain, source), (target_domain, target))
        for split in ("train", "valid", "test")
    }
    if wildcards.scheme == "codeswitch":
        # Extra anchors come from the pair's bilingual dictionary (MUSE format, train split).
        files["dictionary"] = data_path(layout.muse(source, target, "train"))
    return files | user_dictionary_inputs((source, target))


def get_vocab_labels(wildcards):
    """What stats.json records about a vocabulary (the anchors table reads it)."""
    return {"pair": wildcards.pair, "domains": wildcards.domains}


def get_monolingual_vocab_labels(wildcards):
    return {"pair": wildcards.lang, "domains": "wiki"}


def get_scheme_settings(wildcards):
    return config["vocab"]["schemes"][wildcards.scheme]


def get_pair_pipelines(wildcards):
    return {lang: text_pipeline_settings(lang) for lang in pair_languages(wildcards.pair)}


def variant_vocab_dir(pair, variant):
    settings = config["variants"][variant]
    return vocab_dir(pair, settings["domains"], settings["vocab"])


def table1_vocabularies():
    """What Table 1's models train on, and every configured scheme of its pairs on Wikipedia
    (the anchors table compares every scheme)."""
    of_variants = {variant_vocab_dir(pair, v) for pair in PAIRS for v in VARIANTS}
    every_scheme = {
        vocab_dir(pair, "wiki-wiki", scheme)
        for pair in PAIRS
        for scheme in config["vocab"]["schemes"]
    }
    return sorted(of_variants | every_scheme)


def monolingual_vocab_dir(lang):
    return f"{R}/vocab/mono/{lang}"


def needed_vocabularies():
    """Table 1's vocabularies, those of section 5's bilingual models, one per language."""
    bilingual = {variant_vocab_dir(pair, variant) for pair, variant in BILINGUAL_MODELS}
    monolingual = (
        {monolingual_vocab_dir(model.lang) for model in S5.models.values()} if S5 else set()
    )
    return sorted(set(table1_vocabularies()) | bilingual | monolingual)


def get_monolingual_corpora(wildcards):
    corpora = {
        f"{wildcards.lang}_{split}": f"{R}/preprocess/wiki/{wildcards.lang}.{split}.txt"
        for split in ("train", "valid", "test")
    }
    return corpora | user_dictionary_inputs([wildcards.lang])


def get_single_language(wildcards):
    return [wildcards.lang]


def get_monolingual_pipeline(wildcards):
    return {wildcards.lang: text_pipeline_settings(wildcards.lang)}


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
    return config["tasks"][wildcards.task]


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
                    "settings": config["tasks"][task],
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


# --------------------------------------------------------------------------- 6b. Wu section 5
def get_monolingual_model_of_lang(wildcards):
    return monolingual_model_dir(wildcards.lang)


def get_section5_languages(wildcards):
    return ["en", wildcards.tgt]


def get_target_model_language(wildcards):
    """The language the target's monolingual model reads: en' sentences go to the en' model,
    an English model."""
    return S5.models[wildcards.tgt].lang


def fasttext_vectors(lang):
    return f"{R}/analysis/words/{lang}/fasttext.vec"


def get_word_alignment_inputs(wildcards):
    """Both monolingual models, their contextual and fastText word vectors, the dictionaries."""
    files = {}
    for side, lang in (("source", "en"), ("target", wildcards.tgt)):
        files[f"{side}_model"] = monolingual_model_dir(lang)
        files[f"{side}_contextual"] = f"{R}/analysis/words/{lang}/contextual.npz"
        files[f"{side}_fasttext"] = fasttext_vectors(lang)
    for split in ("train", "test"):
        files[split] = data_path(layout.muse("en", wildcards.tgt, split))
    return files


def section5_models(kind, tgt):
    """The (source, target) models whose layers are aligned: the two monolingual models, or the
    pair's bilingual model on both sides."""
    if kind == "mono":
        return monolingual_model_dir("en"), monolingual_model_dir(tgt)
    pair = f"en-{tgt}"
    bilingual = model_dir(pair, S5.bilingual[pair])
    return bilingual, bilingual


def get_mapping_inputs(wildcards):
    """The models, the tokenized parallel sentences and their word alignments: eflomal's, or the
    toy world's gold alignments with the gold words they index (analysis.word_aligner)."""
    source_model, target_model = section5_models(wildcards.kind, wildcards.tgt)
    files = {
        "source_model": source_model,
        "target_model": target_model,
        "source": f"{R}/preprocess/parallel/en.txt",
        "target": f"{R}/preprocess/parallel/{wildcards.tgt}.txt",
    }
    if GOLD_ALIGNMENTS:
        return files | {
            "alignment": data_path(layout.alignment("en", wildcards.tgt)),
            "source_words": data_path(layout.parallel_words("en")),
            "target_words": data_path(layout.parallel_words(wildcards.tgt)),
        }
    return files | {"alignment": f"{R}/analysis/alignments/en-{wildcards.tgt}.txt"}


def get_transfer_inputs(wildcards):
    """The model whose first layers are frozen, the source task files, the target test file, and
    (kind mono) the target's monolingual model and the mappings."""
    target = pair_languages(wildcards.pair)[1]
    source_model, target_model = section5_models(wildcards.kind, target)
    files = {"source_model": source_model, "target_model": target_model}
    english = task_files(wildcards.task, wildcards.pair, "en", layout.TASK_SPLITS)
    files |= {f"en_{split}": path for split, path in english.items()}
    files[f"{target}_test"] = task_files(wildcards.task, wildcards.pair, target, ["test"])["test"]
    files["mapping"] = f"{R}/analysis/mappings/{wildcards.kind}/{wildcards.pair}.npz"
    return files


def get_transfer_evaluations(wildcards):
    """Name -> whether the evaluation maps the target's layer into the source space: monolingual
    models always (MLM align); the bilingual model without (biMLM) and with it (Figure 8)."""
    if wildcards.kind == "mono":
        return {"mlm_align": True}
    return {"bimlm": False, "bimlm_align": True}


def get_transfer_settings(wildcards):
    return {
        **config["analysis"]["contextual_transfer"],
        "task_settings": config["tasks"][wildcards.task],
        "seed": config["seed"],
    }


def get_sentence_retrieval_inputs(wildcards):
    tgt = wildcards.tgt
    return {
        "source_model": monolingual_model_dir("en"),
        "target_model": monolingual_model_dir(tgt),
        "source_parallel": f"{R}/preprocess/parallel/en.txt",
        "target_parallel": f"{R}/preprocess/parallel/{tgt}.txt",
        "source_tatoeba": f"{R}/preprocess/tatoeba/en-{tgt}.en.txt",
        "target_tatoeba": f"{R}/preprocess/tatoeba/en-{tgt}.{tgt}.txt",
    }


def get_similarity_inputs(wildcards):
    pair = f"en-{wildcards.tgt}"
    return {
        "source_model": monolingual_model_dir("en"),
        "target_model": monolingual_model_dir(wildcards.tgt),
        "bilingual_model": model_dir(pair, S5.bilingual[pair]),
        "source": f"{R}/preprocess/parallel/en.txt",
        "target": f"{R}/preprocess/parallel/{wildcards.tgt}.txt",
    }


FIGURE_TABLES = {"4": "words", "6": "sentences", "7": "similarity"}


def get_figure_pairs(wildcards):
    pairs = {"4": S5.word_pairs, "7": S5.similarity_pairs}
    return pairs.get(wildcards.figure, S5.pairs)


def get_figure_tables(wildcards):
    folder = FIGURE_TABLES[wildcards.figure]
    return [f"{R}/analysis/{folder}/{pair}.csv" for pair in get_figure_pairs(wildcards)]


def transfer_sweeps():
    """(kind, pair, task) of every transfer sweep of Figures 5 and 8."""
    return [
        (kind, pair, task)
        for kind in ("mono", "bilingual")
        for pair in S5.transfer_pairs
        for task in config["analysis"]["contextual_transfer"]["tasks"]
    ]


def transfer_tables():
    return [f"{R}/analysis/transfer/{k}/{p}/{t}.csv" for k, p, t in transfer_sweeps()]


def section5_figures():
    if not S5:
        return []
    figures = [f"{R}/figures/wu_figure{n}.{ext}" for n in (4, 5, 6, 7, 8) for ext in ("png", "csv")]
    tables = [f"{R}/tables/wu_cka_retrieval_pearson.{ext}" for ext in ("csv", "md", "tex")]
    return [*figures, *tables]


def section5_targets():
    """Every table behind Wu's Figures 4 to 8."""
    if not S5:
        return []
    targets = [f"{R}/analysis/words/{pair}.csv" for pair in S5.word_pairs]
    targets += [f"{R}/analysis/sentences/{pair}.csv" for pair in S5.pairs]
    targets += [f"{R}/analysis/similarity/{pair}.csv" for pair in S5.similarity_pairs]
    return targets + transfer_tables()


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


# --------------------------------------------------------------------------- 7. report
# Categories of Snakemake's HTML report: one per paper, and the claims check of both.
WU_REPORT = "Wu et al. 2020"
MULLER_REPORT = "Muller et al. 2021"
MULLER_REPORT = "Muller et al. 2021"
CLAIMS_REPORT = "Claims checked against this run"
TABLE_FORMATS = ("csv", "md", "tex")  # every table of the report comes in all three


def claims_inputs():
    """Name -> path of what the claims check reads: Table 1, and only the parts of the papers this
    study's config computes (Wu section 5 with `monolingual`, Muller et al. with `muller`)."""
    parts = ["table1"]
    if S5:
        parts.append("section5")
    if config.get("muller"):
        parts.append("muller")  # f"{R}/muller/scores.csv", f"{R}/muller/similarity.csv"
    return claims_input_paths(R, parts)


def report_targets():
    tables = [f"{R}/tables/{name}.{ext}" for name in ("table1", "anchors") for ext in TABLE_FORMATS]
    return [
        *tables,
        f"{R}/figures/wu_figure3.png",
        f"{R}/figures/wu_figure3.pdf",
        f"{R}/figures/cka_layers.png",
        *section5_figures(),
        f"{R}/report/claims.md",
        f"{R}/report/claims.json",
    ]


# --------------------------------------------------------------------------- 8. Muller et al.
# (None when the config has no `muller` section.) Runs, jobs and setups: xling.muller.plan.
MULLER = muller_plan(config)
MULLER_SETUPS = {setup.key: setup for setup in MULLER.setups} if MULLER else {}


def muller_model():
    """The multilingual model: our own MLM's directory, or a transformers hub id / directory."""
    model = config["muller"]["model"]
    return f"{R}/pretrain/multi/model" if model["source"] == "pretrain" else model["name"]


def muller_model_inputs():
    """``{"model": dir}`` when this workflow builds the model; a hub id is not a file: {}."""
    return {"model": muller_model()} if config["muller"]["model"]["source"] == "pretrain" else {}


def get_muller_model_inputs(wildcards):
    return muller_model_inputs()


def get_muller_model(wildcards, input):
    """What the job loads: its model input, or the transformers hub id or directory."""
    return input.model if "model" in input.keys() else config["muller"]["model"]["name"]


def muller_multilingual_settings():
    """The multilingual MLM of the demo: config `model` with muller.model.architecture on top;
    nothing language-specific, as in mBERT."""
    architecture = config["muller"]["model"].get("architecture", {})
    return {**config["model"], **architecture, "sep_embeddings": False, "sep_layers": 0}


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
