# Input functions and constants of 6. analysis (Wu section 5 included) and 7. report (the rest:
# common.smk's header).

from xling.config import pair_languages
from xling.contracts import layout
from xling.report.claims import input_paths as claims_input_paths

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
    figures = [
        f"{R}/figures/wu_figure{n}.{ext}" for n in (4, 5, 6, 7, 8) for ext in ("png", "pdf", "csv")
    ]
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


# --------------------------------------------------------------------------- 7. report
# Categories of Snakemake's HTML report: one per paper, and the claims check of both.
WU_REPORT = "Wu et al. 2020"
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
        f"{R}/figures/wu_figure3.csv",
        f"{R}/figures/cka_layers.png",
        *section5_figures(),
        f"{R}/report/claims.md",
        f"{R}/report/claims.json",
    ]
