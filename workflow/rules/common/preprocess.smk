# Paths and input functions of stage 2, preprocess (rules: preprocess.smk): tokenized text under
# R/preprocess/, and how each language's text is normalized and segmented.

SHARDS = config["preprocess"]["shards"]
CORPUS_SPLITS = ("train", "valid", "test")


def shard_names():
    return [f"{i:03d}" for i in range(SHARDS)]


def shard_file(domain="{domain}", lang="{lang}", shard="{shard}", stage="raw"):
    """One shard of a corpus, as cut (``raw``) or tokenized (``tok``); both are temporary."""
    return f"{R}/preprocess/shards/{domain}/{lang}/{shard}.{stage}.txt"


def corpus_split(domain="{domain}", lang="{lang}", split="{split}"):
    """A tokenized corpus split: train, valid or test."""
    return f"{R}/preprocess/{domain}/{lang}.{split}.txt"


def tokenized_parallel(lang="{lang}"):
    return f"{R}/preprocess/parallel/{lang}.txt"


def tokenized_tatoeba(tgt="{tgt}", lang="{lang}"):
    """One side (``lang``: en or ``tgt``) of the Tatoeba sentences of the pair en-``tgt``."""
    return f"{R}/preprocess/tatoeba/en-{tgt}.{lang}.txt"


def corpus_splits(domain, lang, key=None):
    """The three splits of a tokenized corpus, keyed ``<key>_<split>`` (default: the language)."""
    return {f"{key or lang}_{split}": corpus_split(domain, lang, split) for split in CORPUS_SPLITS}


def corpus_language(lang):
    """Whose text a model reads for ``lang``: en' (Wu section 5.2) models read English."""
    return S5.corpus_language(lang) if S5 else lang


def needed_corpora():
    """Every (domain, lang of the text) some configured model is trained on."""
    return list(PLAN.corpora)


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


def preprocess_targets():
    corpora = [
        corpus_split(domain, lang, split)
        for domain, lang in needed_corpora()
        for split in CORPUS_SPLITS
    ]
    return corpora + [tokenized_parallel(lang) for lang in PAIR_LANGUAGES]
