# Paths and input functions of stage 6, analysis (rules: analysis.smk): the CKA of Table 1's
# models, and Wu section 5's monolingual models aligned post hoc, under R/analysis/.

from xling.contracts import layout

CKA_VARIANTS = [v for v in config["analysis"]["cka"]["variants"] if v in config["variants"]]
# Figure 4's settings as its jobs' params, without its list of pairs: adding a pair must not rerun
# the word vectors of the others.
WORD_SETTINGS = {
    k: v for k, v in config["analysis"].get("word_alignment", {}).items() if k != "pairs"
}
# Wu 5.1.2's word alignments: the toy world's gold ones, or eflomal's (rule align_parallel)
GOLD_ALIGNMENTS = S5 is not None and config["analysis"]["word_aligner"] == "gold"


def cka_table(pair="{pair}", variant="{variant}"):
    return f"{R}/analysis/cka/{pair}/{variant}.csv"


def fasttext_vectors(lang="{lang}"):
    return f"{R}/analysis/words/{lang}/fasttext.vec"


def contextual_vectors(lang="{lang}"):
    return f"{R}/analysis/words/{lang}/contextual.npz"


def word_table(pair="en-{tgt}"):
    """Figure 4's table of an English-X pair: word translation per layer."""
    return f"{R}/analysis/words/{pair}.csv"


def alignment_file(pair="en-{tgt}"):
    """eflomal's word alignments of the parallel sentences of an English-X pair."""
    return f"{R}/analysis/alignments/{pair}.txt"


def mapping_file(kind="{kind}", pair="en-{tgt}"):
    """The per-layer maps of an English-X pair's target model into the source model's space."""
    return f"{R}/analysis/mappings/{kind}/{pair}.npz"


def transfer_table(kind="{kind}", pair="{pair}", task="{task}"):
    """Figures 5 and 8: one contextual transfer sweep over the layers."""
    return f"{R}/analysis/transfer/{kind}/{pair}/{task}.csv"


def transfer_work_dir(kind="{kind}", pair="{pair}", task="{task}"):
    return f"{R}/analysis/transfer/{kind}/{pair}/.work_{task}"


def sentence_table(pair="en-{tgt}"):
    """Figure 6's table of an English-X pair: sentence retrieval per layer."""
    return f"{R}/analysis/sentences/{pair}.csv"


def similarity_table(pair="en-{tgt}"):
    """Figure 7's table of an English-X pair: CKA per layer."""
    return f"{R}/analysis/similarity/{pair}.csv"


def similarity_resamples(pair="en-{tgt}"):
    return f"{R}/analysis/similarity/resamples/{pair}.csv"


def cka_models():
    """(pair, variant) of every model whose CKA is measured, in a fixed order."""
    return [(pair, variant) for pair in PAIRS for variant in CKA_VARIANTS]


def cka_tables():
    return [cka_table(pair, variant) for pair, variant in cka_models()]


def get_cka_inputs(wildcards):
    """The model and the tokenized parallel sentences of both languages of its pair."""
    source, target = pair_languages(wildcards.pair)
    return {
        "model": model_dir(wildcards.pair, wildcards.variant),
        "source": tokenized_parallel(source),
        "target": tokenized_parallel(target),
    }


# --------------------------------------------------------------------------- Wu section 5
def get_monolingual_model_of_lang(wildcards):
    return monolingual_model_dir(wildcards.lang)


def get_section5_languages(wildcards):
    return ["en", wildcards.tgt]


def get_target_model_language(wildcards):
    """The language the target's monolingual model reads: en' sentences go to the en' model,
    an English model."""
    return S5.models[wildcards.tgt].lang


def get_word_alignment_inputs(wildcards):
    """Both monolingual models, their contextual and fastText word vectors, the dictionaries."""
    files = {}
    for side, lang in (("source", "en"), ("target", wildcards.tgt)):
        files[f"{side}_model"] = monolingual_model_dir(lang)
        files[f"{side}_contextual"] = contextual_vectors(lang)
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
        "source": tokenized_parallel("en"),
        "target": tokenized_parallel(wildcards.tgt),
    }
    if GOLD_ALIGNMENTS:
        return files | {
            "alignment": data_path(layout.alignment("en", wildcards.tgt)),
            "source_words": data_path(layout.parallel_words("en")),
            "target_words": data_path(layout.parallel_words(wildcards.tgt)),
        }
    return files | {"alignment": alignment_file(f"en-{wildcards.tgt}")}


def get_transfer_inputs(wildcards):
    """The model whose first layers are frozen, the source task files, the target test file, and
    (kind mono) the target's monolingual model and the mappings."""
    target = pair_languages(wildcards.pair)[1]
    source_model, target_model = section5_models(wildcards.kind, target)
    files = {"source_model": source_model, "target_model": target_model}
    english = task_files(wildcards.task, wildcards.pair, "en", layout.TASK_SPLITS)
    files |= {f"en_{split}": path for split, path in english.items()}
    files[f"{target}_test"] = task_files(wildcards.task, wildcards.pair, target, ["test"])["test"]
    files["mapping"] = mapping_file(wildcards.kind, wildcards.pair)
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
        "source_parallel": tokenized_parallel("en"),
        "target_parallel": tokenized_parallel(tgt),
        "source_tatoeba": tokenized_tatoeba(tgt, "en"),
        "target_tatoeba": tokenized_tatoeba(tgt, tgt),
    }


def get_similarity_inputs(wildcards):
    pair = f"en-{wildcards.tgt}"
    return {
        "source_model": monolingual_model_dir("en"),
        "target_model": monolingual_model_dir(wildcards.tgt),
        "bilingual_model": model_dir(pair, S5.bilingual[pair]),
        "source": tokenized_parallel("en"),
        "target": tokenized_parallel(wildcards.tgt),
    }


def transfer_sweeps():
    """(kind, pair, task) of every transfer sweep of Figures 5 and 8."""
    return [
        (kind, pair, task)
        for kind in ("mono", "bilingual")
        for pair in S5.transfer_pairs
        for task in config["analysis"]["contextual_transfer"]["tasks"]
    ]


def transfer_tables():
    return [transfer_table(kind, pair, task) for kind, pair, task in transfer_sweeps()]


def section5_targets():
    """Every table behind Wu's Figures 4 to 8."""
    if not S5:
        return []
    targets = [word_table(pair) for pair in S5.word_pairs]
    targets += [sentence_table(pair) for pair in S5.pairs]
    targets += [similarity_table(pair) for pair in S5.similarity_pairs]
    return targets + transfer_tables()
