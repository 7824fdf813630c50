"""What Wu, Conneau et al. (2020) report: Table 1's rows (how each model was built) and numbers.

These are facts from the paper, used to lay out our Table 1 like theirs and to print their numbers
beside ours. Scores are percentages, as printed in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperRow:
    name: str  # the variant name this workflow uses in config
    label: str  # the row label of the paper's Table 1
    group: str  # the row group ("" for the Default row)
    domains: str
    vocab: str
    sep_embeddings: bool
    sep_layers: int


DOMAIN = "Domain Similarity (§4.1)"
ANCHORS = "Anchor Points (§4.2)"
SHARING = "Parameter Sharing (§4.3)"

TABLE1_ROWS = (
    PaperRow("default", "Default", "", "wiki-wiki", "joint", False, 0),
    PaperRow("wiki_cc", "Wiki-CC", DOMAIN, "wiki-cc", "joint", False, 0),
    PaperRow("default_anchors", "Default anchors", ANCHORS, "wiki-wiki", "per_language", False, 0),
    PaperRow("no_anchors", "No anchors", ANCHORS, "wiki-wiki", "per_language_prefixed", False, 0),
    PaperRow("extra_anchors", "Extra anchors", ANCHORS, "wiki-wiki", "codeswitch", False, 0),
    PaperRow("sep_emb", "Sep Emb", SHARING, "wiki-wiki", "per_language", True, 0),
    PaperRow("sep_emb_l1_3", "Sep Emb + L1-3", SHARING, "wiki-wiki", "per_language", True, 3),
    PaperRow("sep_emb_l1_6", "Sep Emb + L1-6", SHARING, "wiki-wiki", "per_language", True, 6),
    PaperRow("sep_l1_3", "Sep L1-3", SHARING, "wiki-wiki", "per_language", False, 3),
    PaperRow("sep_l1_6", "Sep L1-6", SHARING, "wiki-wiki", "per_language", False, 6),
)

TASKS = ("xnli", "ner", "parsing")
TASK_HEADINGS = {"xnli": "XNLI (Acc)", "ner": "NER (F1)", "parsing": "Parsing (LAS)"}
PAPER_TARGETS = ("fr", "ru", "zh")

# Wu, Conneau et al. (2020), Table 1: (fr, ru, zh, average) per task.
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
