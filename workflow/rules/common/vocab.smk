# Paths and input functions of stage 3, vocab (rules: vocab.smk): BPE vocabularies and the
# binarized corpora under R/vocab/.


def vocab_dir(pair="{pair}", domains="{domains}", scheme="{scheme}"):
    return f"{R}/vocab/{pair}/{domains}/{scheme}"


def monolingual_vocab_dir(lang="{lang}"):
    return f"{R}/vocab/mono/{lang}"


def multilingual_vocab_dir():
    """Muller et al.'s multilingual MLM's vocabulary (muller.smk)."""
    return f"{R}/vocab/multi"


def get_vocab_inputs(wildcards):
    """Tokenized train/valid/test files of both languages, with the domains of the wildcard."""
    source_domain, target_domain = wildcards.domains.split("-")
    source, target = pair_languages(wildcards.pair)
    files = {}
    for domain, lang in ((source_domain, source), (target_domain, target)):
        files |= corpus_splits(domain, corpus_language(lang), key=lang)
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
    of_variants = {variant_vocab_dir(pair, variant) for pair, variant in T1.models}
    every_scheme = {
        vocab_dir(pair, "wiki-wiki", scheme)
        for pair in PAIRS
        for scheme in config["vocab"]["schemes"]
    }
    return sorted(of_variants | every_scheme)


def needed_vocabularies():
    """Table 1's vocabularies, those of section 5's bilingual models, one per language."""
    bilingual = {variant_vocab_dir(pair, variant) for pair, variant in BILINGUAL_MODELS}
    monolingual = (
        {monolingual_vocab_dir(model.lang) for model in S5.models.values()} if S5 else set()
    )
    return sorted(set(table1_vocabularies()) | bilingual | monolingual)


def get_monolingual_corpora(wildcards):
    corpora = corpus_splits("wiki", wildcards.lang)
    return corpora | user_dictionary_inputs([wildcards.lang])


def get_single_language(wildcards):
    return [wildcards.lang]


def get_monolingual_pipeline(wildcards):
    return {wildcards.lang: text_pipeline_settings(wildcards.lang)}


def vocab_targets():
    return [*needed_vocabularies(), table_file("anchors", "csv")]
