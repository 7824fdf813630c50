"""Table 1 of Wu, Conneau et al. (2020) from this run's scores, the paper's numbers beside ours.

Rows: the paper's ten models in the paper's order and groups, then any extra variant of the config.
Columns: how the model was built (domain, BPE merges, anchor points, shared parameters, softmax),
then per task one column per target language and the average over them, Δ (the paper's Δ column is
the mean of its three target languages). The target columns are the paper's (fr, ru, zh), then those
of any other pair the study configures; a cell this run does not compute is empty in the csv and
reads ``n/c`` in markdown and LaTeX, never a number. Written through :mod:`xling.report.compare`,
so the csv has ``<column>``, ``<column> paper`` and ``<column> diff`` side by side and a
``variant`` column naming each row's config variant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xling.papers.wu2020 import (
    DESCRIPTOR_HEADINGS,
    TABLE1_PAIRS,
    TABLE1_ROWS,
    TABLE1_SCORES,
    TABLE1_SUSPECT,
    TABLE1_SUSPECT_NOTE,
    TASK_COLUMNS,
    TASK_METRICS,
    WU_TASKS,
)
from xling.report.compare import NOT_COMPUTED, SUSPECT_MARK, ComparedRow, ComparedTable

EXTRA_GROUP = "Variants added by this study"
KEY = "variant"
AVERAGE = "Δ"

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
    """(pair, column label) of the table: the paper's pairs, then the study's others; the label is
    the target language, or the pair when two pairs share a target."""
    ordered = list(TABLE1_PAIRS) + [pair for pair in pairs if pair not in TABLE1_PAIRS]
    targets = [pair.split("-")[1] for pair in ordered]
    return [
        (pair, target if targets.count(target) == 1 else pair)
        for pair, target in zip(ordered, targets, strict=True)
    ]


def score_column(task: str, label: str) -> str:
    """The name of a score column: ``NER fr``, ``Parsing zh``, ``XNLI Δ`` (the average)."""
    return f"{TASK_COLUMNS[task]} {label}"


def score_columns(pairs: Sequence[str]) -> list[str]:
    labels = [label for _, label in target_columns(pairs)]
    return [score_column(task, label) for task in WU_TASKS for label in [*labels, AVERAGE]]


def _paper_cells(name: str, columns: Sequence[tuple[str, str]]) -> dict[str, float]:
    """The paper's numbers of row ``name`` by column; its Δ only where the table's targets are
    exactly the paper's, since an average over other targets is not comparable."""
    scores = TABLE1_SCORES.get(name)
    if scores is None:
        return {}
    cells: dict[str, float] = {}
    for task in WU_TASKS:
        for pair, label in columns:
            if pair in TABLE1_PAIRS:
                cells[score_column(task, label)] = scores[task][TABLE1_PAIRS.index(pair)]
        if [pair for pair, _ in columns] == list(TABLE1_PAIRS):
            cells[score_column(task, AVERAGE)] = scores[task][-1]
    return cells


def _suspect_cells(name: str, columns: Sequence[tuple[str, str]]) -> frozenset[str]:
    labels = [label for _, label in columns] + [AVERAGE]
    return frozenset(
        score_column(task, label) for task in TABLE1_SUSPECT.get(name, ()) for label in labels
    )


def _best_sets(best_k: Mapping[str, int]) -> str:
    """How many grid points a score averages, in words: the paper's two unless ``best_k`` says."""
    counts = {task: best_k.get(task, 2) for task in WU_TASKS}
    words = {1: "the best", 2: "the mean over the best two", 3: "the mean over the best three"}
    if len(set(counts.values())) == 1:
        (k,) = set(counts.values())
        sets = "set" if k == 1 else "sets"
        return f"{words.get(k, f'the mean over the best {k}')} hyperparameter {sets} on English dev"
    each = ", ".join(f"{TASK_COLUMNS[task]} {k}" for task, k in counts.items())
    return f"the mean over the best k hyperparameter sets on English dev ({each})"


def build_table1(
    variants: Mapping[str, Mapping],
    schemes: Mapping[str, Mapping],
    pairs: Sequence[str],
    scores: Scores,
    study: str = "",
    best_k: Mapping[str, int] | None = None,
) -> ComparedTable:
    """Table 1 with the paper beside us: scores in percent, one row per model. ``best_k``: per
    task, how many grid points each score averages (config ``tasks.<task>.best_k``; the paper's
    two where not given)."""
    columns = target_columns(pairs)
    layout = [(row.name, row.label, row.group, row) for row in TABLE1_ROWS.values()] + [
        (name, settings.get("label", name), EXTRA_GROUP, None)
        for name, settings in variants.items()
        if name not in TABLE1_ROWS
    ]
    rows = []
    for name, label, group, paper_row in layout:
        settings = variants.get(name)
        if settings is not None:
            label = settings.get("label", label)
        else:  # a paper row this config does not build: described as the paper built it
            settings = paper_row.settings()
        ours: dict[str, float | None] = {}
        for task in WU_TASKS:
            values = [scores.get((name, pair, task)) for pair, _ in columns]
            for (_, column), value in zip(columns, values, strict=True):
                ours[score_column(task, column)] = None if value is None else 100.0 * value
            complete = all(v is not None for v in values)
            ours[score_column(task, AVERAGE)] = (
                100.0 * sum(values) / len(values) if complete else None
            )
        rows.append(
            ComparedRow(
                label,
                ours,
                paper=_paper_cells(name, columns),
                group=group,
                suspect=_suspect_cells(name, columns),
                text=dict(zip(DESCRIPTOR_HEADINGS, describe(settings, schemes), strict=True)),
                key=name,
            )
        )
    metrics = ", ".join(f"{TASK_COLUMNS[t]} {TASK_METRICS[t]}" for t in WU_TASKS)
    title = "Table 1" + (f" ({study} study)" if study else "")
    return ComparedTable(
        title=f"{title}: zero-shot cross-lingual transfer of bilingual masked LMs",
        columns=score_columns(pairs),
        rows=rows,
        description=[
            "Wu, Conneau et al. (2020), Table 1: fine-tuned on English, selected on English",
            "dev, tested zero-shot on the target language. Scores x 100, each "
            f"{_best_sets(best_k or {})}:",
            f"{metrics}. Δ = the average over the target languages; the paper's Δ is shown only",
            "where the targets are the paper's three. The paper's descriptor cells read '-' for",
            "'as Default'; ours are spelt out.",
        ],
        notes=[f"{SUSPECT_MARK} {TABLE1_SUSPECT_NOTE[0].upper()}{TABLE1_SUSPECT_NOTE[1:]}."],
        row_heading="Model",
        text_columns=DESCRIPTOR_HEADINGS,
        key_heading=KEY,
    )
