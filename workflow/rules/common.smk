# Paths, wildcard constraints and input functions shared by every stage, in pipeline order: this
# file (study-wide constants, 1. acquire, 2. preprocess, 3. vocab), common_training.smk (4. pretrain,
# 5. finetune, the stage targets), common_analysis.smk (6. analysis, 7. report) and
# common_muller.smk (8. Muller et al.), included in that order before any rule.
# Only functions and constants here: Snakemake's linter wants rules and functions apart. Functions
# that rules call with the job's wildcards are named get_<what they return>.

import os

from xling.acquire import manual

from xling.config import (
    MUSE_SPANS,
    commoncrawl_code,
    pair_languages,
    selected,
    task_dataset,
    ud_source,
    ud_splits,
    wikipedia_code,
)
from xling.contracts import layout
from xling.monolingual import plan as section5_plan

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
    return {"url": downloads[wildcards.resource]["url"], "pin": ["downloads", wildcards.resource]}


def get_wikipedia_dump(wildcards):
    """The language's dump under the file name Wikimedia gives it (the one its pin is keyed by):
    a new date is a new file."""
    name = get_wikipedia_source(wildcards)["pin"][-1]
    return f"{R}/raw/wikipedia/{wildcards.lang}/{name}"


def get_wikipedia_source(wildcards):
    return templated_source("wikipedia", lang=wikipedia_code(config, wildcards.lang))


def templated_source(section, **fields):
    """A download of config ``data.<section>``: its url template filled in, and where its sha256
    may be pinned (``data.<section>.sha256``, by file name; xling.acquire.download.pinned_sha256).
    The job reads the pin itself: as a param, pinning a checksum after the first download would
    rerun the download and every job after it."""
    url = config["data"][section]["url"].format(**fields)
    return {"url": url, "pin": [section, url.rsplit("/", 1)[-1]]}


def get_commoncrawl_source(wildcards):
    return templated_source("commoncrawl", lang=commoncrawl_code(config, wildcards.lang))


def get_muse_source(wildcards):
    """MUSE's file of a pair and split (xling.config.MUSE_SPANS)."""
    span = MUSE_SPANS[wildcards.split]
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
