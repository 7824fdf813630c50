"""Table 1 of Wu, Conneau et al. (2020) from this run's scores, in the paper's layout.

Rows: the paper's ten models in the paper's order and groups, then any extra variant of the config.
Columns: how the model was built (domain, BPE merges, anchor points, shared parameters, softmax),
then per task one column per target language and the average, Δ, over them (the paper's Δ column is
the mean of its three target languages). A cell this run did not compute is left empty in the csv
and printed ``n/c`` in the markdown: never a number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from xling.papers.wu2020 import (
    DESCRIPTOR_HEADINGS,
    TABLE1_DESCRIPTORS,
    TABLE1_ROWS,
    TABLE1_SCORES,
    TABLE1_TARGETS,
    TASK_HEADINGS,
    WU_TASKS,
)

NOT_COMPUTED = "n/c"
DESCRIPTOR_COLUMNS = ("domain", "bpe_merges", "anchor_points", "shared_parameters", "softmax")
EXTRA_GROUP = "Variants added by this study"

Scores = Mapping[tuple[str, str, str], float]  # (variant, pair, task) -> target score in [0, 1]


def format_merges(merges: int) -> str:
    return f"{merges / 1000:g}k" if merges >= 1000 else str(merges)


def describe(variant: Mapping, schemes: Mapping[str, Mapping]) -> tuple[str, ...]:
    """The descriptor cells of a variant, from how it is configured."""
    domain = "-".join("Wiki" if d == "wiki" else d.upper() for d in variant["domains"].split("-"))
    scheme = variant["vocab"]
    settings = schemes.get(scheme)
    if settings is None:
        merges = NOT_COMPUTED
    elif scheme.startswith("per_language"):
        merges = "/".join([format_merges(settings["merges"])] * 2)
    else:
        merges = format_merges(settings["merges"])
    anchors = {
        "joint": "all",
        "per_language": "all",
        "per_language_prefixed": "0",
        "codeswitch": "extra",
    }.get(scheme, scheme)
    if variant["sep_embeddings"]:
        anchors = "0*"  # separate embeddings share no token vector: effectively no anchors
    parts = (["sep. emb"] if variant["sep_embeddings"] else []) + (
        [f"L1-{variant['sep_layers']}"] if variant["sep_layers"] else []
    )
    shared = "all" if not parts else ("sep. " + " + ".join(parts).removeprefix("sep. "))
    softmax = "lang-specific" if variant["sep_embeddings"] else "shared"
    return domain, merges, anchors, shared, softmax


def target_columns(pairs: Sequence[str]) -> list[tuple[str, str]]:
    """(pair, column label): the target language, or the pair when two pairs share a target."""
    targets = [pair.split("-")[1] for pair in pairs]
    return [
        (pair, target if targets.count(target) == 1 else pair)
        for pair, target in zip(pairs, targets, strict=True)
    ]


def build_table1(
    variants: Mapping[str, Mapping],
    schemes: Mapping[str, Mapping],
    pairs: Sequence[str],
    scores: Scores,
) -> pd.DataFrame:
    """One row per model; score columns ``<task>_<target>`` and ``<task>_avg`` in percent."""
    columns = target_columns(pairs)
    rows = []
    layout = [(row.name, row.label, row.group, row) for row in TABLE1_ROWS.values()] + [
        (name, settings.get("label", name), EXTRA_GROUP, None)
        for name, settings in variants.items()
        if name not in TABLE1_ROWS
    ]
    for name, label, group, paper_row in layout:
        settings = variants.get(name)
        if settings is not None:
            label = settings.get("label", label)
        else:  # a paper row this config does not build: described as the paper built it
            settings = paper_row.settings()
        record = {"variant": name, "model": label, "group": group}
        record.update(zip(DESCRIPTOR_COLUMNS, describe(settings, schemes), strict=True))
        for task in WU_TASKS:
            values = [scores.get((name, pair, task)) for pair, _ in columns]
            for (_, column), value in zip(columns, values, strict=True):
                record[f"{task}_{column}"] = None if value is None else 100.0 * value
            complete = values and all(v is not None for v in values)
            record[f"{task}_avg"] = 100.0 * sum(values) / len(values) if complete else None
        rows.append(record)
    return pd.DataFrame(rows)


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NOT_COMPUTED
    return f"{value:.1f}"


def _markdown_rows(header: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    # Written by hand instead of DataFrame.to_markdown: group captions span the row, which
    # tabulate cannot express, and this avoids an optional dependency.
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return lines


def to_markdown(table: pd.DataFrame, pairs: Sequence[str], study: str) -> str:
    columns = [label for _, label in target_columns(pairs)]
    header = ["Model", *DESCRIPTOR_HEADINGS]
    for task in WU_TASKS:
        header += [f"{TASK_HEADINGS[task]} {c}" for c in columns] + [f"{TASK_HEADINGS[task]} Δ"]
    body: list[list[str]] = []
    group = ""
    for record in table.to_dict("records"):
        if record["group"] != group:
            group = record["group"]
            body.append([f"**{group}**"] + [""] * (len(header) - 1))
        cells = [record["model"], *(record[c] for c in DESCRIPTOR_COLUMNS)]
        for task in WU_TASKS:
            cells += [_cell(record[f"{task}_{c}"]) for c in [*columns, "avg"]]
        body.append(cells)
    lines = [
        f"# Table 1 ({study} study)",
        "",
        "Zero-shot cross-lingual transfer of bilingual masked LMs (Wu, Conneau et al. 2020,",
        "Table 1): fine-tuned on English, selected on English dev, tested on the target language.",
        "Scores x 100, each the mean over the best two hyperparameter sets (English dev).",
        "Δ = average over the target languages.",
        f"`{NOT_COMPUTED}` = not computed by this run (the task or the variant is not configured).",
        "",
        *_markdown_rows(header, body),
        "",
        "## The paper's Table 1, for comparison",
        "",
        "Wu, Conneau et al. (2020): Wikipedia, XNLI, WikiAnn / CoNLL / Levow NER, UD v2.3;",
        '"-" means the same as the Default row.',
        "",
        *_paper_markdown(),
        "",
    ]
    return "\n".join(lines)


def _paper_markdown() -> list[str]:
    header = ["Model", *DESCRIPTOR_HEADINGS]
    for task in WU_TASKS:
        header += [f"{TASK_HEADINGS[task]} {t}" for t in TABLE1_TARGETS] + [
            f"{TASK_HEADINGS[task]} Δ"
        ]
    body = []
    group = ""
    for row in TABLE1_ROWS.values():
        if row.group != group:
            group = row.group
            body.append([f"**{group}**"] + [""] * (len(header) - 1))
        cells = [row.label, *TABLE1_DESCRIPTORS[row.name]]
        for task in WU_TASKS:
            cells += [f"{v:.1f}" for v in TABLE1_SCORES[row.name][task]]
        body.append(cells)
    return _markdown_rows(header, body)


def to_csv_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The csv keeps every column; scores rounded to 2 decimals, empty where not computed."""
    frame = table.copy()
    score_columns = [c for c in frame.columns if c.split("_")[0] in WU_TASKS]
    frame[score_columns] = frame[score_columns].astype(float).round(2)
    frame[list(DESCRIPTOR_COLUMNS)] = frame[list(DESCRIPTOR_COLUMNS)].replace(NOT_COMPUTED, "")
    return frame
