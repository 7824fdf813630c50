"""Figures 1 to 8 of Muller et al. (2021) from ``similarity.csv`` (and ``scores.csv`` for Figure 3).

Each ``figure*`` function draws one figure with matplotlib's non-interactive backend, writes it as
png and pdf, writes the numbers behind it as csv, and returns that table. CKA values are the mean
over seeds of ``similarity.csv``'s ``cka`` (``measure`` picks ``cka_debiased`` instead); layer 0 is
the embedding layer. Fine-tuned curves are the Ref models (no RANDOM-INIT) unless a group is named.

When the pair the paper draws (en-ru) is not in the file, Figures 1 and 2 draw the source with the
first target present (the paper's language order) and say so in their title; a figure with nothing
to draw is still written, with "no data" in its title. Nothing here raises on a missing pair,
task or group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes
import matplotlib.pyplot as plt
import pandas as pd

from xling.analysis.spearman import gap_similarity_correlation
from xling.atomic import atomic_open
from xling.papers import muller2021 as paper
from xling.report.muller_scores import language_order, prepare_scores, prepare_similarity

REF = paper.REF
DPI = 150  # of the png; the pdf is vector
DEFAULT_GROUP = "1-2"  # RANDOM-INIT of the lower layers for Figures 2 and 6-8
FIGURE_NAMES = tuple(f"figure{n}" for n in range(1, 9))
_TASK_FIGURES = {6: "parsing", 7: "pos", 8: "ner"}


# --- data --------------------------------------------------------------------------------------


def mean_similarity(similarity: pd.DataFrame, measure: str = "cka") -> pd.DataFrame:
    """One row per (model, task, group, source, target, layer): mean and std over seeds."""
    keys = ["model", "task", "group", "source", "target", "layer"]
    rows = similarity[similarity[measure].notna()]
    table = rows.groupby(keys, sort=False)[measure].agg(["mean", "std", "count"]).reset_index()
    return table.rename(columns={"mean": "cka", "std": "cka_std", "count": "seeds"})


def _curve(means: pd.DataFrame, model: str, source: str, target: str, task="", group=REF):
    """One model's CKA per layer; task and group select fine-tuned models only."""
    mask = (means["model"] == model) & (means["source"] == source) & (means["target"] == target)
    if model == "finetuned":
        mask &= (means["task"] == task) & (means["group"] == group)
    return means[mask].sort_values("layer")


def choose_pair(means: pd.DataFrame, source: str, target: str) -> tuple[str, str, str]:
    """(source, target, note): the pair asked for, else the first present, and why."""
    pairs = set(zip(means["source"], means["target"], strict=True))
    if (source, target) in pairs or not pairs:
        return source, target, ""
    sources = language_order(s for s, _ in pairs)
    chosen_source = source if source in sources else sources[0]
    targets = language_order(t for s, t in pairs if s == chosen_source)
    chosen = targets[0]
    return chosen_source, chosen, f"{source}-{target} not computed: {chosen_source}-{chosen} shown"


def _targets(means: pd.DataFrame, source: str, targets: Sequence[str] | None) -> list[str]:
    present = language_order(means.loc[means["source"] == source, "target"])
    return present if targets is None else [t for t in targets if t in present]


def _task_name(task: str) -> str:
    return paper.TASK_NAMES.get(task, task)


# --- drawing -----------------------------------------------------------------------------------


def _save(fig, png: str | Path, pdf: str | Path, data: pd.DataFrame, csv: str | Path):
    fig.tight_layout()
    for path, kind in ((png, "png"), (pdf, "pdf")):
        with atomic_open(path, "wb", encoding=None) as handle:
            fig.savefig(handle, format=kind)
    plt.close(fig)
    with atomic_open(csv) as handle:
        data.to_csv(handle, index=False)


def _title(text: str, note: str = "", empty: bool = False) -> str:
    extra = [note] if note else []
    if empty:
        extra.append("no data")
    return text + (f"\n({'; '.join(extra)})" if extra else "")


def _axes_layers(ax, layers: Sequence[int], ylabel: str = "CKA", ylim=(0, 1)):
    if len(layers):
        ax.set_xticks(sorted(set(int(x) for x in layers)))
    ax.set(xlabel="layer (0 = embeddings)", ylabel=ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(alpha=0.3)


def _plot(ax, rows: pd.DataFrame, label: str, style: str = "-", **kwargs) -> bool:
    if rows.empty:
        return False
    ax.plot(rows["layer"], rows["cka"], style, marker="o", ms=3, label=label, **kwargs)
    return True


# Figure 3's line style and hollow marker per task (in the order drawn): tasks with the same ρ at
# every layer (the demo's pretrained Parsing and POS) draw one line on another, and a dashed line
# over a solid one with other markers keeps both visible.
_TASK_STYLES = (("-", "o", 6), ("--", "s", 5), (":", "^", 5), ("-.", "D", 4), ((0, (1, 3)), "v", 5))


def _task_style(index: int) -> dict:
    """Colour, line style and marker of the ``index``-th task, the same in every panel (a task
    one panel lacks does not shift the others' colours)."""
    linestyle, marker, size = _TASK_STYLES[index % len(_TASK_STYLES)]
    return {
        "color": f"C{index % 10}",
        "linestyle": linestyle,
        "marker": marker,
        "ms": size,
        "mfc": "none",  # hollow: a marker under another still shows its outline
    }


def _legend(ax, **kwargs) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def _grid(count: int):
    columns = min(3, max(count, 1))
    lines = (max(count, 1) + columns - 1) // columns
    fig, axes = plt.subplots(
        lines, columns, figsize=(3.6 * columns, 2.9 * lines), dpi=DPI, squeeze=False
    )
    flat = [ax for line in axes for ax in line]
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat


def _long(parts: list[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    parts = [part for part in parts if not part.empty]
    if not parts:
        return pd.DataFrame(columns=list(columns))
    return pd.concat(parts, ignore_index=True)[list(columns)]


_COLUMNS = ("curve", "model", "task", "group", "source", "target", "layer", "cka", "cka_std")
_COLUMNS += ("seeds",)


def _tagged(rows: pd.DataFrame, curve: str) -> pd.DataFrame:
    return rows.assign(curve=curve)


# --- Figures 1, 2, 4 ---------------------------------------------------------------------------


def _paper_peaks(ax, layer: int, peaks: Mapping[str, float]) -> None:
    """One marker for the text's fine-tuned peaks (x100) at ``layer``, its bar spanning them: the
    paper's 78.1, 78.1 and 78.2 are 0.001 apart, so a cross per task drew one visible cross while
    the legend listed three. The label and a note beside the marker give each task's number."""
    if not peaks:
        return
    low, high = min(peaks.values()), max(peaks.values())
    span = f"{low:.1f}" if low == high else f"{low:.1f}-{high:.1f}"
    each = ", ".join(f"{_task_name(task)} {peak:.1f}" for task, peak in peaks.items())
    middle = (low + high) / 200
    bar = [[middle - low / 100], [high / 100 - middle]]
    label = f"paper peak (x100): {each}"
    ax.errorbar([layer], [middle], yerr=bar, fmt="x", color="crimson", ms=8, capsize=3, label=label)
    ax.annotate(
        f"paper: {span} at layer {layer}",
        (layer, high / 100),
        xytext=(6, 6),
        textcoords="offset points",
        fontsize=7,
        color="crimson",
    )


def figure1(
    similarity: pd.DataFrame,
    png: str | Path,
    pdf: str | Path,
    csv: str | Path,
    *,
    source: str = "en",
    target: str = "ru",
    tasks: Sequence[str] = paper.TASKS,
    measure: str = "cka",
) -> pd.DataFrame:
    """Figure 1: CKA per layer between source and target, pretrained and fine-tuned per task.

    Where the pair is the paper's (en-ru) and the model has a layer 5, the peaks the text gives for
    the fine-tuned models (layer 5: 78.1, 78.1, 78.2 for parsing, POS, NER) are marked with one
    cross (:func:`_paper_peaks`).
    """
    means = mean_similarity(prepare_similarity(similarity), measure)
    source, target, note = choose_pair(means, source, target)
    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=DPI)
    parts = [_tagged(_curve(means, "pretrained", source, target), "pretrained")]
    _plot(ax, parts[0], "pretrained", "--", color="black")
    for task in tasks:
        rows = _tagged(_curve(means, "finetuned", source, target, task), f"fine-tuned {task}")
        if _plot(ax, rows, f"fine-tuned {_task_name(task)}"):
            parts.append(rows)
    data = _long(parts, _COLUMNS)
    layer = paper.FIGURE_FACTS["figure1_peak_layer"]
    if (source, target) == paper.FIGURE_FACTS["figure1_pair"] and layer in set(data["layer"]):
        peaks = paper.FIGURE_FACTS["figure1_peak_cka"]
        _paper_peaks(ax, layer, {task: peaks[task] for task in tasks if task in peaks})
    _axes_layers(ax, data["layer"])
    ax.set_title(
        _title(f"Figure 1: cross-lingual similarity {source}-{target}", note, data.empty),
        fontsize=9,
    )
    _legend(ax, fontsize=7)
    _save(fig, png, pdf, data, csv)
    return data


def figure2(
    similarity: pd.DataFrame,
    png: str | Path,
    pdf: str | Path,
    csv: str | Path,
    *,
    group: str = DEFAULT_GROUP,
    task: str = "ner",
    source: str = "en",
    target: str = "ru",
    measure: str = "cka",
) -> pd.DataFrame:
    """Figure 2: CKA per layer of the models fine-tuned on ``task``, with RANDOM-INIT of
    ``group`` and without (Ref), between source and target."""
    means = mean_similarity(prepare_similarity(similarity), measure)
    finetuned = means[means["model"] == "finetuned"]
    source, target, note = choose_pair(finetuned, source, target)
    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=DPI)
    ref = _tagged(_curve(means, "finetuned", source, target, task), "ref")
    init = _tagged(_curve(means, "finetuned", source, target, task, group), f"random-init {group}")
    _plot(ax, ref, "fine-tuned (Ref)")
    _plot(ax, init, f"fine-tuned, RANDOM-INIT {group}", "--")
    notes = [note] if note else []
    if init.empty:
        notes.append(f"RANDOM-INIT {group} not computed")
    data = _long([ref, init], _COLUMNS)
    _axes_layers(ax, data["layer"])
    title = f"Figure 2: {_task_name(task)} fine-tuned, {source}-{target}, with and w/o RANDOM-INIT"
    ax.set_title(_title(title, "; ".join(notes), data.empty), fontsize=9)
    _legend(ax, fontsize=7)
    _save(fig, png, pdf, data, csv)
    return data


def figure4(
    similarity: pd.DataFrame,
    png: str | Path,
    pdf: str | Path,
    csv: str | Path,
    *,
    task: str = "ner",
    source: str = "en",
    targets: Sequence[str] | None = None,
    measure: str = "cka",
) -> pd.DataFrame:
    """Figure 4: CKA per layer of the models fine-tuned on ``task`` (NER), one line per target."""
    means = mean_similarity(prepare_similarity(similarity), measure)
    finetuned = means[(means["model"] == "finetuned") & (means["task"] == task)]
    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=DPI)
    parts = []
    for target in _targets(finetuned, source, targets):
        rows = _tagged(_curve(means, "finetuned", source, target, task), target)
        if _plot(ax, rows, f"{source}-{target}"):
            parts.append(rows)
    data = _long(parts, _COLUMNS)
    _axes_layers(ax, data["layer"])
    title = f"Figure 4: {_task_name(task)} fine-tuned, source {source}, per target"
    ax.set_title(_title(title, empty=data.empty), fontsize=9)
    _legend(ax, fontsize=7, ncol=2)
    _save(fig, png, pdf, data, csv)
    return data


# --- Figures 5-8: one panel per target ---------------------------------------------------------


def figure5(
    similarity: pd.DataFrame,
    png: str | Path,
    pdf: str | Path,
    csv: str | Path,
    *,
    source: str = "en",
    targets: Sequence[str] | None = None,
    tasks: Sequence[str] = paper.TASKS,
    measure: str = "cka",
) -> pd.DataFrame:
    """Figure 5: per target language, CKA of the pretrained and the fine-tuned (Ref) models."""
    means = mean_similarity(prepare_similarity(similarity), measure)
    chosen = _targets(means, source, targets)
    fig, axes = _grid(len(chosen))
    parts = []
    for ax, target in zip(axes, chosen, strict=False):
        rows = _tagged(_curve(means, "pretrained", source, target), "pretrained")
        if _plot(ax, rows, "pretrained", "--", color="black"):
            parts.append(rows)
        for task in tasks:
            rows = _tagged(_curve(means, "finetuned", source, target, task), f"fine-tuned {task}")
            if _plot(ax, rows, _task_name(task)):
                parts.append(rows)
        _axes_layers(ax, means["layer"])
        ax.set_title(f"{source}-{target}", fontsize=9)
        _legend(ax, fontsize=6)
    data = _long(parts, _COLUMNS)
    title = f"Figure 5: pretrained vs fine-tuned, source {source}"
    fig.suptitle(_title(title, empty=data.empty), fontsize=10)
    _save(fig, png, pdf, data, csv)
    return data


def figure_random_init(
    similarity: pd.DataFrame,
    png: str | Path,
    pdf: str | Path,
    csv: str | Path,
    *,
    task: str,
    groups: Sequence[str] | None = None,
    source: str = "en",
    targets: Sequence[str] | None = None,
    measure: str = "cka",
    number: int | None = None,
) -> pd.DataFrame:
    """Figures 6 (parsing), 7 (POS), 8 (NER): per target, the models fine-tuned on ``task`` with
    and without RANDOM-INIT; ``groups`` defaults to every group the file has for the task."""
    means = mean_similarity(prepare_similarity(similarity), measure)
    finetuned = means[(means["model"] == "finetuned") & (means["task"] == task)]
    present = [g for g in dict.fromkeys(finetuned["group"]) if g != REF]
    chosen_groups = present if groups is None else [g for g in groups if g in present]
    missing = [] if groups is None else [g for g in groups if g not in present]
    chosen = _targets(finetuned, source, targets)
    fig, axes = _grid(len(chosen))
    parts = []
    for ax, target in zip(axes, chosen, strict=False):
        rows = _tagged(_curve(means, "finetuned", source, target, task), "ref")
        if _plot(ax, rows, "Ref", color="black"):
            parts.append(rows)
        for group in chosen_groups:
            rows = _tagged(_curve(means, "finetuned", source, target, task, group), group)
            if _plot(ax, rows, f"RANDOM-INIT {group}", "--"):
                parts.append(rows)
        _axes_layers(ax, finetuned["layer"])
        ax.set_title(f"{source}-{target}", fontsize=9)
        _legend(ax, fontsize=6)
    data = _long(parts, _COLUMNS)
    label = f"Figure {number}: " if number else ""
    title = f"{label}{_task_name(task)} fine-tuned with and w/o RANDOM-INIT, source {source}"
    note = f"RANDOM-INIT {', '.join(missing)} not computed" if missing else ""
    fig.suptitle(_title(title, note, data.empty), fontsize=10)
    _save(fig, png, pdf, data, csv)
    return data


# --- Figure 3 ----------------------------------------------------------------------------------


def figure3(
    scores: pd.DataFrame,
    similarity: pd.DataFrame,
    png: str | Path,
    pdf: str | Path,
    csv: str | Path,
    *,
    source: str = "en",
    tasks: Sequence[str] | None = None,
    include_source: bool = False,
    measure: str = "cka",
) -> pd.DataFrame:
    """Figure 3: per layer, Spearman ρ between the cross-lang gap and the similarity at that
    layer, fine-tuned (Ref) and pretrained, one line per task (fewer than 3 languages: no point)."""
    scores, similarity = prepare_scores(scores), prepare_similarity(similarity)
    if tasks is None:
        ours = scores.loc[(scores["experiment"] == "transfer") & (scores["source"] == source)]
        tasks = [t for t in paper.TASKS if t in set(ours["task"])]
        tasks += sorted(set(ours["task"]) - set(paper.TASKS))
    data = gap_similarity_correlation(
        scores,
        similarity,
        source=source,
        tasks=tasks,
        per_layer=True,
        measure=measure,
        include_source=include_source,
        skip_too_few=True,
    )
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), dpi=DPI, sharey=True)
    for ax, kind, name in zip(
        axes, ("finetuned", "pretrained"), ("fine-tuned", "pretrained"), strict=True
    ):
        drawn = False
        for index, task in enumerate(tasks):
            rows = data[(data["kind"] == kind) & (data["task"] == task)].dropna(subset=["rho"])
            if not rows.empty:
                style = _task_style(index)
                ax.plot(rows["layer"], rows["rho"], label=_task_name(task), **style)
                drawn = True
        _axes_layers(ax, data["layer"], ylabel="Spearman ρ", ylim=(-1.05, 1.05))
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_title(_title(f"{name} models", empty=not drawn), fontsize=9)
        _legend(ax, fontsize=7)
    best = paper.FIGURE_FACTS["figure3_pretrained_best_layer"]
    fig.suptitle(
        f"Figure 3: cross-lang gap vs similarity per layer, source {source} "
        f"(paper: pretrained most correlated at layer {best})",
        fontsize=10,
    )
    _save(fig, png, pdf, data, csv)
    return data


# --- all of them -------------------------------------------------------------------------------


def write_figures(
    scores: pd.DataFrame,
    similarity: pd.DataFrame,
    outputs: Mapping[str, str | Path],
    *,
    source: str = "en",
    target: str = "ru",
    figure2_group: str = DEFAULT_GROUP,
    random_init_groups: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    measure: str = "cka",
    include_source: bool = False,
) -> list[str]:
    """Draw every figure whose ``<name>_png``, ``<name>_pdf`` and ``<name>_csv`` are in ``outputs``
    (e.g. ``figure1_png``); returns the names drawn. ``languages`` restricts (and orders) the
    targets of Figures 4-8; ``random_init_groups`` the groups of Figures 6-8 (default: all)."""
    names = [name for name in FIGURE_NAMES if f"{name}_png" in outputs]
    for name in names:
        missing = [f"{name}_{kind}" for kind in ("pdf", "csv") if f"{name}_{kind}" not in outputs]
        if missing:
            raise ValueError(f"outputs name {name}_png but not {', '.join(missing)}")
    similarity = prepare_similarity(similarity)
    common = {"measure": measure}
    if random_init_groups is not None:  # a config may write a single layer as a number
        random_init_groups = [str(group) for group in random_init_groups]
    for name in names:
        paths = [outputs[f"{name}_{kind}"] for kind in ("png", "pdf", "csv")]
        number = int(name.removeprefix("figure"))
        if number == 1:
            figure1(similarity, *paths, source=source, target=target, **common)
        elif number == 2:
            group = str(figure2_group)
            figure2(similarity, *paths, group=group, source=source, target=target, **common)
        elif number == 3:
            figure3(
                scores, similarity, *paths, source=source, include_source=include_source, **common
            )
        elif number == 4:
            figure4(similarity, *paths, source=source, targets=languages, **common)
        elif number == 5:
            figure5(similarity, *paths, source=source, targets=languages, **common)
        else:
            figure_random_init(
                similarity,
                *paths,
                task=_TASK_FIGURES[number],
                groups=random_init_groups,
                source=source,
                targets=languages,
                number=number,
                **common,
            )
    return names
