"""Table 1 of Wu, Conneau et al. (2020): how its ten models were built, and their scores.

The single definition of the paper's rows: config ``variants`` names a row by writing ``paper``
(``xling.study`` expands it from here and checks a full mapping against it), and the report lays
out Table 1 and prints the paper's numbers from here.

A row differs from ``default`` in the domains of its corpora (section 4.1), its vocabulary scheme
(section 4.2) or what it shares (section 4.3). Vocabulary schemes (``docs/contracts.md`` section 3):
``joint`` = one BPE over both languages (80k merges); ``per_language`` = one BPE per language (40k
each), union of the vocabularies; ``per_language_prefixed`` = the same with a language prefix on
every entry (no anchors); ``codeswitch`` = joint BPE over code-switched corpora (extra anchors). The
Sep rows use ``per_language`` (the table's "40k/40k"); with separate embeddings a string shared by
both vocabularies still gets one embedding per language, which is why the paper marks their anchors
``0*``. Scores are percentages, as printed in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

# The settings that decide how a row's model is built: the keys of a config ``variants`` entry.
BUILD_KEYS = ("domains", "vocab", "sep_embeddings", "sep_layers")


@dataclass(frozen=True)
class Table1Row:
    """One row of Table 1: its name in config ``variants``, its place in the table, its build."""

    name: str  # the variant name this workflow uses in config
    label: str  # the row label of the paper's Table 1
    group: str  # the row group ("" for the Default row)
    domains: str  # corpora of the source and the target language
    vocab: str  # vocabulary scheme
    sep_embeddings: bool  # separate embeddings and softmax per language
    sep_layers: int  # bottom Transformer layers that are language-specific

    def settings(self) -> dict:
        """The row as a config ``variants`` entry, keys in ``BUILD_KEYS`` order."""
        return {key: getattr(self, key) for key in BUILD_KEYS}


DOMAIN = "Domain Similarity (§4.1)"
ANCHORS = "Anchor Points (§4.2)"
SHARING = "Parameter Sharing (§4.3)"

_ROWS = (
    Table1Row("default", "Default", "", "wiki-wiki", "joint", False, 0),
    Table1Row("wiki_cc", "Wiki-CC", DOMAIN, "wiki-cc", "joint", False, 0),
    Table1Row("default_anchors", "Default anchors", ANCHORS, "wiki-wiki", "per_language", False, 0),
    Table1Row("no_anchors", "No anchors", ANCHORS, "wiki-wiki", "per_language_prefixed", False, 0),
    Table1Row("extra_anchors", "Extra anchors", ANCHORS, "wiki-wiki", "codeswitch", False, 0),
    Table1Row("sep_emb", "Sep Emb", SHARING, "wiki-wiki", "per_language", True, 0),
    Table1Row("sep_emb_l1_3", "Sep Emb + L1-3", SHARING, "wiki-wiki", "per_language", True, 3),
    Table1Row("sep_emb_l1_6", "Sep Emb + L1-6", SHARING, "wiki-wiki", "per_language", True, 6),
    Table1Row("sep_l1_3", "Sep L1-3", SHARING, "wiki-wiki", "per_language", False, 3),
    Table1Row("sep_l1_6", "Sep L1-6", SHARING, "wiki-wiki", "per_language", False, 6),
)
TABLE1_ROWS: dict[str, Table1Row] = {row.name: row for row in _ROWS}  # the paper's order

# Table 1's tasks: the one list of them (the fine-tuning registry, xling.finetune.tasks, has more).
WU_TASKS = ("xnli", "ner", "parsing")
TASK_HEADINGS = {"xnli": "XNLI (Acc)", "ner": "NER (F1)", "parsing": "Parsing (LAS)"}
TABLE1_TARGETS = ("fr", "ru", "zh")  # the target languages of the score columns

# Table 1: (fr, ru, zh, average) per task.
TABLE1_SCORES = {
    "default": {"xnli": (73.6, 68.7, 68.3, 70.2), "ner": (79.8, 60.9, 63.6, 68.1),
                "parsing": (73.2, 56.6, 28.8, 52.9)},
    "wiki_cc": {"xnli": (74.2, 65.8, 66.5, 68.8), "ner": (74.0, 49.6, 61.9, 61.8),
                "parsing": (71.3, 54.8, 25.2, 50.4)},
    "default_anchors": {"xnli": (74.0, 68.1, 68.9, 70.3), "ner": (79.8, 60.9, 63.6, 68.1),
                        "parsing": (73.2, 56.6, 28.8, 52.9)},
    "no_anchors": {"xnli": (72.1, 67.5, 67.7, 69.1), "ner": (74.0, 57.9, 65.0, 65.6),
                   "parsing": (72.3, 56.2, 27.4, 52.0)},
    "extra_anchors": {"xnli": (74.0, 69.8, 72.1, 72.0), "ner": (76.1, 59.7, 66.8, 67.5),
                      "parsing": (73.3, 56.9, 29.2, 53.1)},
    "sep_emb": {"xnli": (72.7, 63.6, 60.8, 65.7), "ner": (75.5, 57.5, 59.0, 64.0),
                "parsing": (71.7, 54.0, 27.5, 51.1)},
    "sep_emb_l1_3": {"xnli": (69.2, 61.7, 56.4, 62.4), "ner": (73.8, 46.8, 53.5, 58.0),
                     "parsing": (68.2, 53.6, 23.9, 48.6)},
    "sep_emb_l1_6": {"xnli": (51.6, 35.8, 34.4, 40.6), "ner": (56.5, 5.4, 1.0, 21.0),
                     "parsing": (50.9, 6.4, 1.5, 19.6)},
    "sep_l1_3": {"xnli": (72.4, 65.0, 63.1, 66.8), "ner": (74.0, 53.3, 60.8, 62.7),
                 "parsing": (69.7, 54.1, 26.4, 50.1)},
    "sep_l1_6": {"xnli": (61.9, 43.6, 37.4, 47.6), "ner": (61.2, 23.7, 3.1, 29.3),
                 "parsing": (61.7, 31.6, 12.0, 35.1)},
}  # fmt: skip

# Descriptor columns exactly as the paper prints them ("-" = same as the Default row).
DESCRIPTOR_HEADINGS = ("Domain", "BPE Merges", "Anchors Pts", "Share Param.", "Softmax")
TABLE1_DESCRIPTORS = {
    "default": ("Wiki-Wiki", "80k", "all", "all", "shared"),
    "wiki_cc": ("Wiki-CC", "-", "-", "-", "-"),
    "default_anchors": ("-", "40k/40k", "-", "-", "-"),
    "no_anchors": ("-", "40k/40k", "0", "-", "-"),
    "extra_anchors": ("-", "-", "extra", "-", "-"),
    "sep_emb": ("-", "40k/40k", "0*", "sep. emb", "lang-specific"),
    "sep_emb_l1_3": ("-", "40k/40k", "0*", "sep. emb + L1-3", "lang-specific"),
    "sep_emb_l1_6": ("-", "40k/40k", "0*", "sep. emb + L1-6", "lang-specific"),
    "sep_l1_3": ("-", "40k/40k", "-", "sep. L1-3", "-"),
    "sep_l1_6": ("-", "40k/40k", "-", "sep. L1-6", "-"),
}

# Table 1's score columns by name: the task, then the target language (or Δ, the average).
TASK_COLUMNS = {"xnli": "XNLI", "ner": "NER", "parsing": "Parsing"}
TASK_METRICS = {"xnli": "accuracy", "ner": "span F1", "parsing": "LAS"}
TABLE1_PAIRS = tuple(f"en-{target}" for target in TABLE1_TARGETS)

# Cells of the paper's Table 1 that are suspect: the Default anchors row repeats the Default row's
# NER (79.8 / 60.9 / 63.6 / 68.1) and parsing (73.2 / 56.6 / 28.8 / 52.9) numbers exactly, which two
# differently built models are unlikely to score; its XNLI numbers differ from Default's.
TABLE1_SUSPECT = {"default_anchors": ("ner", "parsing")}
TABLE1_SUSPECT_NOTE = (
    "the paper prints the Default row's NER and parsing numbers again in the Default anchors row, "
    "digit for digit: those paper cells are probably copied, not measured"
)

# Figure 3: "Cross-lingual transfer of bilingual MLM on three tasks and language pairs under
# different settings" (Table 1: "See Figure 3 for visualization of three columns"): one column per
# task, each on another pair, in the table's order: XNLI en-fr, NER en-ru, parsing en-zh.
FIGURE3_COLUMNS = (("xnli", "fr"), ("ner", "ru"), ("parsing", "zh"))

# Chance level of each task's score in percent: XNLI has three balanced classes; span F1 and LAS
# of a model that has learnt nothing are near zero. "Drops to random" (section 4.3) is measured
# against these.
CHANCE = {"xnli": 100.0 / 3.0, "ner": 0.0, "parsing": 0.0}

# Targets from the closest to English to the most distant, as the paper orders them (section 4.4,
# "performance drops as language pairs become more distantly related"; Figure 7 lists en', fr, de,
# ru, zh). en' is written with the code config `monolingual.english_prime.lang` gives it.
DISTANCE_ORDER = ("enp", "fr", "de", "ru", "zh")
