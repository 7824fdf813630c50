"""Figures 1 to 8 of Muller et al. (2021) from ``similarity.csv`` (and ``scores.csv`` for Figure 3).

Each ``figure*`` function draws one figure with matplotlib's non-interactive backend, writes it as
png and pdf, writes the numbers behind it as csv (the three :class:`FigureFiles`), and returns that
table; :func:`write_figures` draws those a rule names, as its :class:`FigureSettings` say. CKA
values are the mean over seeds of ``similarity.csv``'s ``cka`` (``measure`` picks ``cka_debiased``
instead); layer 0 is the embedding layer. Fine-tuned curves are the Ref models (no RANDOM-INIT)
unless a group is named. Figures 1 and 5 draw the length control beside the pretrained model where
the file has it; every other figure reads its models by name and leaves it out.

When the pair the paper draws (en-ru) is not in the file, Figures 1 and 2 draw the source with the
first target present (the paper's language order) and say so in their title; a figure with nothing
to draw is still written, with "no data" in its title. Nothing here raises on a missing pair,
task or group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes
import matplotlib.pyplot as plt
import pandas as pd

from xling.analysis.cka import LENGTH
from xling.analysis.spearman import gap_similarity_correlation
from xling.base.atomic import atomic_open
from xling.papers import muller2021 as paper
from xling.report.muller_scores import (
    language_order,
    named_outputs,
    prepare_scores,
    prepare_similarity,
)

REF = paper.REF
DPI = 150  # of the png; the pdf is vector
DEFAULT_GROUP = "1-2"  # RANDOM-INIT of the lower layers for Figures 2 and 6-8
FIGURE_NAMES = tuple(f"figure{n}" for n in range(1, 9))
_TASK_FIGURES = {6: "parsing", 7: "pos", 8: "ner"}


@dataclass(frozen=True)
class FigureFiles:
    """Where one figure goes: the drawing as png and pdf, the numbers behind it as csv."""

    png: str | Path
    pdf: str | Path
    csv: str | Path


@dataclass(frozen=True)
class FigureSettings:
    """What :func:`write_figures` draws, each field a param of the rule (all optional).

    ``source`` is the fine-tuning language of every figure and ``target`` the other language of
    Figures 1 and 2 (the paper's en-ru); ``figure2_group`` is Figure 2's RANDOM-INIT group;
    ``random_init_groups`` restricts the groups of Figures 6-8 (default: all the file has) and
    ``languages`` restricts and orders the targets of Figures 4-8; ``measure`` is the column of
    ``similarity.csv`` drawn (``cka`` or ``cka_debiased``); ``include_source`` counts the source
    itself in Figure 3's correlations. A config may write a group as a number: groups are read as
    text.
    """

    source: str = "en"
    target: str = "ru"
    figure2_group: str = DEFAULT_GROUP
    random_init_groups: Sequence[str] | None = None
    languages: Sequence[str] | None = None
    measure: str = "cka"
    include_source: bool = False


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


def _save(fig, files: FigureFiles, data: pd.DataFrame) -> None:
    fig.tight_layout()
    for path, kind in ((files.png, "png"), (files.pdf, "pdf")):
        with atomic_open(path, "wb", encoding=None) as handle:
            fig.savefig(handle, format=kind)
    plt.close(fig)
    with atomic_open(files.csv) as handle:
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


@dataclass(frozen=True)
class _Line:
    """One CKA curve: its rows (their ``curve`` column tags them in the csv), its legend label,
    its line style and, where the figure fixes one, its colour."""

    rows: pd.DataFrame
    label: str
    style: str = "-"
    color: str | None = None


def _draw_lines(ax, lines: Iterable[_Line]) -> list[pd.DataFrame]:
    """Plot each line that has rows; return every line's rows (:func:`_long` drops the empty)."""
    parts = []
    for line in lines:
        rows = line.rows
        if not rows.empty:
            colour = {} if line.color is None else {"color": line.color}
            x, y = rows["layer"], rows["cka"]
            ax.plot(x, y, line.style, marker="o", ms=3, label=line.label, **colour)
        parts.append(rows)
    return parts


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


# --- Figures 1, 2, 4: one panel ----------------------------------------------------------------


def _one_panel(lines: Iterable[_Line]):
    """A figure of one panel with ``lines`` drawn, and the table of their rows."""
    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=DPI)
    return fig, ax, _long(_draw_lines(ax, lines), _COLUMNS)


def _finish_one_panel(fig, ax, data: pd.DataFrame, title: str, files: FigureFiles, **legend):
    """Axes, title and legend of a one-panel figure, then the figure and its table written."""
    _axes_layers(ax, data["layer"])
    ax.set_title(title, fontsize=9)
    _legend(ax, fontsize=7, **legend)
    _save(fig, files, data)
    return data


def _pretrained_and_tasks(
    means: pd.DataFrame, source: str, target: str, tasks: Sequence[str], prefix: str = ""
) -> list[_Line]:
    """The pretrained model's curve (black, dashed), the length control's where the file has it
    (grey, dotted: the CKA of the sentences' lengths alone, model ``length``), then each task's
    fine-tuned (Ref) curve, labelled by the task's name after ``prefix``."""
    pretrained = _tagged(_curve(means, "pretrained", source, target), "pretrained")
    lines = [_Line(pretrained, "pretrained", "--", "black")]
    control = _tagged(_curve(means, LENGTH, source, target), LENGTH)
    if not control.empty:
        lines.append(_Line(control, "sentence length alone", ":", "grey"))
    for task in tasks:
        rows = _tagged(_curve(means, "finetuned", source, target, task), f"fine-tuned {task}")
        lines.append(_Line(rows, f"{prefix}{_task_name(task)}"))
    return lines


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
    files: FigureFiles,
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
    lines = _pretrained_and_tasks(means, source, target, tasks, prefix="fine-tuned ")
    fig, ax, data = _one_panel(lines)
    layer = paper.FIGURE_FACTS["figure1_peak_layer"]
    if (source, target) == paper.FIGURE_FACTS["figure1_pair"] and layer in set(data["layer"]):
        peaks = paper.FIGURE_FACTS["figure1_peak_cka"]
        _paper_peaks(ax, layer, {task: peaks[task] for task in tasks if task in peaks})
    title = _title(f"Figure 1: cross-lingual similarity {source}-{target}", note, data.empty)
    return _finish_one_panel(fig, ax, data, title, files)


def figure2(
    similarity: pd.DataFrame,
    files: FigureFiles,
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
    ref = _tagged(_curve(means, "finetuned", source, target, task), "ref")
    init = _tagged(_curve(means, "finetuned", source, target, task, group), f"random-init {group}")
    lines = [_Line(ref, "fine-tuned (Ref)"), _Line(init, f"fine-tuned, RANDOM-INIT {group}", "--")]
    fig, ax, data = _one_panel(lines)
    notes = [note] if note else []
    if init.empty:
        notes.append(f"RANDOM-INIT {group} not computed")
    title = f"Figure 2: {_task_name(task)} fine-tuned, {source}-{target}, with and w/o RANDOM-INIT"
    return _finish_one_panel(fig, ax, data, _title(title, "; ".join(notes), data.empty), files)


def figure4(
    similarity: pd.DataFrame,
    files: FigureFiles,
    *,
    task: str = "ner",
    source: str = "en",
    targets: Sequence[str] | None = None,
    measure: str = "cka",
) -> pd.DataFrame:
    """Figure 4: CKA per layer of the models fine-tuned on ``task`` (NER), one line per target."""
    means = mean_similarity(prepare_similarity(similarity), measure)
    finetuned = means[(means["model"] == "finetuned") & (means["task"] == task)]
    fig, ax, data = _one_panel(
        _Line(
            _tagged(_curve(means, "finetuned", source, target, task), target), f"{source}-{target}"
        )
        for target in _targets(finetuned, source, targets)
    )
    title = f"Figure 4: {_task_name(task)} fine-tuned, source {source}, per target"
    return _finish_one_panel(fig, ax, data, _title(title, empty=data.empty), files, ncol=2)


# --- Figures 5-8: one panel per target ---------------------------------------------------------


def _panels(
    source: str, targets: Sequence[str], lines_of: Callable[[str], list[_Line]], layers
) -> tuple[object, pd.DataFrame]:
    """A figure of one panel per target with the lines ``lines_of(target)``, ``layers`` on the x
    axis of each, and the table of every panel's rows."""
    fig, axes = _grid(len(targets))
    parts = []
    for ax, target in zip(axes, targets, strict=False):
        parts += _draw_lines(ax, lines_of(target))
        _axes_layers(ax, layers)
        ax.set_title(f"{source}-{target}", fontsize=9)
        _legend(ax, fontsize=6)
    return fig, _long(parts, _COLUMNS)


def figure5(
    similarity: pd.DataFrame,
    files: FigureFiles,
    *,
    source: str = "en",
    targets: Sequence[str] | None = None,
    tasks: Sequence[str] = paper.TASKS,
    measure: str = "cka",
) -> pd.DataFrame:
    """Figure 5: per target language, CKA of the pretrained and the fine-tuned (Ref) models."""
    means = mean_similarity(prepare_similarity(similarity), measure)
    fig, data = _panels(
        source,
        _targets(means, source, targets),
        lambda target: _pretrained_and_tasks(means, source, target, tasks),
        means["layer"],
    )
    title = f"Figure 5: pretrained vs fine-tuned, source {source}"
    fig.suptitle(_title(title, empty=data.empty), fontsize=10)
    _save(fig, files, data)
    return data


def figure_random_init(
    similarity: pd.DataFrame,
    files: FigureFiles,
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

    def lines_of(target: str) -> list[_Line]:
        ref = _tagged(_curve(means, "finetuned", source, target, task), "ref")
        lines = [_Line(ref, "Ref", color="black")]
        for group in chosen_groups:
            rows = _tagged(_curve(means, "finetuned", source, target, task, group), group)
            lines.append(_Line(rows, f"RANDOM-INIT {group}", "--"))
        return lines

    chosen = _targets(finetuned, source, targets)
    fig, data = _panels(source, chosen, lines_of, finetuned["layer"])
    label = f"Figure {number}: " if number else ""
    title = f"{label}{_task_name(task)} fine-tuned with and w/o RANDOM-INIT, source {source}"
    note = f"RANDOM-INIT {', '.join(missing)} not computed" if missing else ""
    fig.suptitle(_title(title, note, data.empty), fontsize=10)
    _save(fig, files, data)
    return data


# --- Figure 3 ----------------------------------------------------------------------------------


def figure3(
    scores: pd.DataFrame,
    similarity: pd.DataFrame,
    files: FigureFiles,
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
    _save(fig, files, data)
    return data


# --- all of them -------------------------------------------------------------------------------


def write_figures(
    scores: pd.DataFrame,
    similarity: pd.DataFrame,
    outputs: Mapping[str, str | Path],
    settings: FigureSettings = FigureSettings(),
) -> list[str]:
    """Draw every figure whose ``<name>_png``, ``<name>_pdf`` and ``<name>_csv`` are in ``outputs``
    (e.g. ``figure1_png``) as ``settings`` say; returns the names drawn."""
    named = named_outputs(outputs, FIGURE_NAMES, ("png", "pdf", "csv"))
    similarity = prepare_similarity(similarity)
    for name, paths in named.items():
        number = int(name.removeprefix("figure"))
        _draw_figure(number, scores, similarity, FigureFiles(*paths), settings)
    return list(named)


def _draw_figure(
    number: int,
    scores: pd.DataFrame,
    similarity: pd.DataFrame,
    files: FigureFiles,
    settings: FigureSettings,
) -> None:
    """Figure ``number`` (1 to 8) drawn to ``files`` as ``settings`` say."""
    common = {"source": settings.source, "measure": settings.measure}
    if number == 1:
        figure1(similarity, files, target=settings.target, **common)
    elif number == 2:
        group = str(settings.figure2_group)
        figure2(similarity, files, group=group, target=settings.target, **common)
    elif number == 3:
        figure3(scores, similarity, files, include_source=settings.include_source, **common)
    elif number == 4:
        figure4(similarity, files, targets=settings.languages, **common)
    elif number == 5:
        figure5(similarity, files, targets=settings.languages, **common)
    else:
        groups = settings.random_init_groups
        figure_random_init(
            similarity,
            files,
            task=_TASK_FIGURES[number],
            groups=None if groups is None else [str(group) for group in groups],
            targets=settings.languages,
            number=number,
            **common,
        )
