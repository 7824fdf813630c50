# Paths and input functions of stage 1, acquire (rules: acquire.smk): the study's inputs under
# R/data/ (their layout is xling.contracts.layout's) and the raw downloads under R/raw/.

from xling.acquire import manual
from xling.contracts import layout
from xling.study.keys import (
    MUSE_SPANS,
    commoncrawl_code,
    task_dataset,
    ud_source,
    ud_splits,
    wikipedia_code,
)


def data_path(relative):
    """A study input under R/data/; ``relative`` comes from xling.contracts.layout, the one
    definition of that layout (rule patterns pass wildcards, e.g. layout.corpus("{domain}", ...)).
    """
    return f"{R}/data/{relative}"


def download_file(resource="{resource}"):
    """A download of config ``data.downloads``, as fetched."""
    return f"{R}/raw/downloads/{resource}"


def unpacked_dir(resource="{resource}"):
    return f"{R}/raw/unpacked/{resource}"


def wikipedia_dump(lang="{lang}", dump="{dump}"):
    return f"{R}/raw/wikipedia/{lang}/{dump}"


def commoncrawl_file(lang="{lang}"):
    return f"{R}/raw/commoncrawl/{lang}.txt.xz"


def fasttext_download(lang="{lang}"):
    return f"{R}/raw/fasttext/{lang}.vec"


def transformers_dir(model="{model}"):
    """Where the files of a transformers model named by a hub id are downloaded to."""
    return f"{R}/raw/transformers/{model}"


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
    return wikipedia_dump(wildcards.lang, get_wikipedia_source(wildcards)["pin"][-1])


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
    """MUSE's file of a pair and split (xling.study.keys.MUSE_SPANS)."""
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


def get_transformers_source(wildcards):
    """One file of a transformers model of the hub (data.transformers)."""
    revision = config["data"]["transformers"]["revision"]
    return templated_source(
        "transformers", name=wildcards.model, revision=revision, file=wildcards.file
    )


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
    return [] if "manual_dir" in source else [unpacked_dir(source["download"])]


def task_files(task, pair, lang, splits):
    """Data files of ``task`` for one language of a pair, by split (the pair picks the dataset)."""
    dataset = None if task == "xnli" else task_dataset(config, task, pair, lang)
    try:
        files = layout.task_files(task, dataset, lang, splits)
    except ValueError as error:
        raise ValueError(f"pair {pair}, task {task}: {error}") from None
    return {split: data_path(path) for split, path in files.items()}


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
