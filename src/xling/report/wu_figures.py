"""Figures of Wu, Conneau et al. (2020): Figure 3 from Table 1, Figures 4 to 8 (section 5) from
the analysis tables.

Each ``figure4`` .. ``figure8`` function takes the per-pair tables (pair -> DataFrame, as the
analysis jobs wrote them), writes the figure to one path or several (the format each suffix names:
the workflow asks for png and pdf) and returns the one long table behind it, which the workflow
writes next to the figure as csv. Pairs are drawn in the order given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes
import matplotlib.pyplot as plt
import pandas as pd
from scipy.stats import pearsonr

from xling.base.atomic import atomic_open
from xling.papers.wu2020 import (
    CHANCE,
    FIGURE3_COLUMNS,
    TABLE1_SUSPECT,
    TABLE1_SUSPECT_NOTE,
    TASK_COLUMNS,
    TASK_METRICS,
)
from xling.report.table1 import score_column

Tables = Mapping[str, pd.DataFrame]


def _long(tables: Tables) -> pd.DataFrame:
    return pd.concat([table.assign(pair=pair) for pair, table in tables.items()], ignore_index=True)


OutPaths = str | Path | Sequence[str | Path]


def _save(fig, out_paths: OutPaths, footnote: str = "", top: float = 1.0) -> None:
    """Write ``fig`` to each path in the format its suffix names (png, pdf), ``footnote`` under
    it; the axes end at ``top`` (a figure legend above them)."""
    if footnote:
        fig.text(0.01, 0.005, footnote, fontsize=6, va="bottom")
    fig.tight_layout(rect=(0, 0.03 if footnote else 0, 1, top))
    for out_path in [out_paths] if isinstance(out_paths, str | Path) else out_paths:
        with atomic_open(out_path, "wb", encoding=None) as handle:
            fig.savefig(handle, format=Path(out_path).suffix.lstrip(".") or "png")
    plt.close(fig)


def figure3(table1: pd.DataFrame, out_paths: OutPaths) -> pd.DataFrame:
    """Figure 3: three columns of Table 1 (XNLI en-fr, NER en-ru, parsing en-zh), one bar per model
    for this run beside one for the paper (dotted: XNLI's chance level). ``table1`` is Table 1's
    csv; each path of ``out_paths`` gets the figure in the format its suffix names (png, pdf).
    A paper bar that Table 1 marks as suspect (copied from another row) carries a dagger, and
    ``paper_suspect`` says so in the numbers drawn, which are returned."""
    rows = table1.iloc[::-1]  # the first row of the table at the top
    fig, axes = plt.subplots(1, len(FIGURE3_COLUMNS), figsize=(11, 0.32 * len(rows) + 1.6), dpi=150)
    drawn = []
    positions = list(range(len(rows)))
    for ax, (task, target) in zip(axes, FIGURE3_COLUMNS, strict=True):
        column = score_column(task, target)
        ours = _numbers(rows, column)
        paper = _numbers(rows, f"{column} paper")
        height = 0.4
        ax.barh([p + height / 2 for p in positions], ours.fillna(0), height, label="this run")
        ax.barh(
            [p - height / 2 for p in positions], paper.fillna(0), height, label="Wu et al. 2020",
            color="0.7", hatch="//", edgecolor="0.4", linewidth=0.3,
        )  # fmt: skip
        for position, value in zip(positions, ours, strict=True):
            if pd.isna(value):
                ax.text(1, position + height / 2, "n/c", va="center", fontsize=6)
        marks = [task in TABLE1_SUSPECT.get(variant, ()) for variant in rows["variant"]]
        suspect = pd.Series(marks, index=rows.index)
        for position, value, marked in zip(positions, paper, suspect, strict=True):
            if marked and pd.notna(value):
                ax.text(value + 1, position - height / 2, "†", va="center", fontsize=7)
        if CHANCE[task]:
            ax.axvline(CHANCE[task], color="0.3", linestyle=":", linewidth=0.8, label="chance")
        ax.set_yticks(positions, list(rows["row"]) if ax is axes[0] else [""] * len(rows))
        ax.set(title=f"{TASK_COLUMNS[task]} en-{target}", xlabel=TASK_METRICS[task], xlim=(0, 100))
        ax.grid(axis="x", alpha=0.3)
        drawn.append(
            pd.DataFrame(
                {"row": rows["row"], "column": column, "ours": ours, "paper": paper}
            ).assign(paper_suspect=suspect)[::-1]
        )
    # one legend for the three panels (XNLI's has the chance line), where it hides no bar
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=3, fontsize=7, bbox_to_anchor=(0.5, 0.94))
    fig.suptitle("Cross-lingual transfer of bilingual MLMs under different settings (Table 1)")
    suspect = any(frame["paper_suspect"].any() for frame in drawn)
    _save(fig, out_paths, f"† {TABLE1_SUSPECT_NOTE}" if suspect else "", top=0.92)
    return pd.concat(drawn, ignore_index=True)


def _numbers(table: pd.DataFrame, column: str) -> pd.Series:
    """A score column as floats; all missing when the table lacks it (a column not computed)."""
    if column not in table:
        return pd.Series([float("nan")] * len(table), index=table.index)
    return pd.to_numeric(table[column], errors="coerce")


# Figure 4a's bars: the embedding matrices against fastText on the same words.
FIGURE4A_BARS = {"embeddings": "BERT embeddings", "fasttext_subset": "fastText, same words"}


def figure4(
    tables: Tables, out_paths: OutPaths, names: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """(a) word translation P@1 of the embedding matrices and of fastText on the same words, each
    bar labelled with its value and each pair with its number of test words (a pair of a few
    dozen words moves by points with one word); (b) of the averaged contextual vectors per layer,
    fastText on its first words dashed. Drawn x 100; the csv keeps fractions."""
    data = _long(tables)
    # the figure draws the mapped scores; the table keeps the unmapped baseline beside them
    drawn = data[data["mapped"].astype(bool)] if "mapped" in data else data
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), dpi=150)
    static = drawn[drawn["method"].isin(list(FIGURE4A_BARS))]
    pivot = static.pivot_table(index="pair", columns="method", values="p_at_1", sort=False)
    pivot = pivot.reindex(index=list(tables), columns=list(FIGURE4A_BARS)) * 100
    pivot.index = [_static_pair_label(static, pair, names) for pair in pivot.index]
    pivot.rename(columns=FIGURE4A_BARS).plot.bar(ax=left, rot=0)
    for bars in left.containers:
        left.bar_label(bars, fmt="%.0f", fontsize=6, padding=1)
    left.set(title="(a) non-contextual", ylabel="P@1 (CSLS), %", xlabel="", ylim=(0, 100))
    for pair in tables:
        rows = drawn[(drawn["pair"] == pair) & (drawn["method"] == "contextual")]
        label = _pair(pair, names)
        (line,) = right.plot(rows["layer"], rows["p_at_1"] * 100, marker="o", label=label)
        fasttext = drawn[(drawn["pair"] == pair) & (drawn["method"] == "fasttext")]["p_at_1"]
        if len(fasttext):
            right.axhline(100 * fasttext.iloc[0], color=line.get_color(), linestyle="--", lw=1)
    right.set(
        title="(b) contextual, averaged (dashed: fastText)",
        xlabel="layer", ylabel="P@1 (CSLS), %", ylim=(0, 100),
    )  # fmt: skip
    right.legend(fontsize=8)
    _save(fig, out_paths)
    return _without_items(data)


def _pair(pair: str, names: Mapping[str, str] | None) -> str:
    """``en-enp`` -> ``en-en'``: a pair as the paper writes it (``names``: code -> name)."""
    return "-".join((names or {}).get(lang, lang) for lang in pair.split("-"))


def _static_pair_label(static: pd.DataFrame, pair: str, names: Mapping[str, str] | None) -> str:
    """The pair and the test words its bars rest on (``n_test_words``, where the table has it)."""
    label = _pair(pair, names)
    if "n_test_words" not in static:
        return label
    counts = static.loc[static["pair"] == pair, "n_test_words"].dropna()
    return label if counts.empty else f"{label}\n{int(counts.min())} words"


def _transfer_panels(data: pd.DataFrame, lines: Mapping[str, str], out_paths, title: str):
    tasks = list(dict.fromkeys(data["task"]))
    pairs = list(dict.fromkeys(data["pair"]))
    # one y scale per task row, so that the pairs' curves compare at a glance
    fig, axes = plt.subplots(
        len(tasks), len(pairs), figsize=(3.2 * len(pairs), 2.8 * len(tasks)), dpi=150,
        squeeze=False, sharey="row",
    )  # fmt: skip
    for row, task in enumerate(tasks):
        for column, pair in enumerate(pairs):
            ax = axes[row][column]
            for evaluation, label in lines.items():
                rows = data[
                    (data["task"] == task) & (data["pair"] == pair) & (data["line"] == evaluation)
                ]
                ax.plot(rows["layer"], rows["score"] * 100, marker="o", label=label)
            metric = TASK_METRICS.get(task, "score")
            ax.set(title=f"{pair} {TASK_COLUMNS.get(task, task)}", xlabel="layer")
            if column == 0:  # the row shares its y axis
                ax.set_ylabel(metric)
            ax.legend(fontsize=7)
    fig.suptitle(title)
    _save(fig, out_paths)


def transfer_table(tables: Mapping[tuple[str, str, str], pd.DataFrame]) -> pd.DataFrame:
    """One table from the (kind, pair, task) sweeps; ``line`` names a curve: the evaluation, or
    ``source`` for the English test of the monolingual sweep."""
    parts = []
    for (kind, pair, task), table in tables.items():
        rows = table.assign(kind=kind, pair=pair, task=task)
        rows["line"] = rows["evaluation"].where(rows["evaluation"] != "source", f"{kind}_source")
        parts.append(rows)
    return pd.concat(parts, ignore_index=True)


# The curves (``line`` of :func:`transfer_table`) of each figure, with their labels.
FIGURE5_LINES = {"mlm_align": "MLM align", "bimlm": "biMLM"}
FIGURE8_LINES = {"bimlm": "biMLM", "bimlm_align": "biMLM align"}


def figure5(data: pd.DataFrame, out_paths: OutPaths) -> pd.DataFrame:
    """Zero-shot NER and parsing through the first i layers: monolingual models aligned by the
    contextual map (MLM align) against the bilingual model (biMLM)."""
    title = "Contextual alignment for zero-shot transfer"
    _transfer_panels(data, FIGURE5_LINES, out_paths, title)
    return _without_items(data[data["line"].isin(list(FIGURE5_LINES))])


def figure8(data: pd.DataFrame, out_paths: OutPaths) -> pd.DataFrame:
    """Appendix A: the bilingual model's own layers, without and with the contextual map."""
    title = "Contextual alignment of the bilingual model"
    _transfer_panels(data, FIGURE8_LINES, out_paths, title)
    return _without_items(data[data["line"].isin(list(FIGURE8_LINES))])


# Per-item columns of the analysis tables (xling.contracts.items): they stay there, where the
# claims check resamples them, and out of the figures' csv files.
ITEM_COLUMNS = ["hits", "hits_unmapped", "hits_random", "test_items"]


def _without_items(data: pd.DataFrame) -> pd.DataFrame:
    return data.drop(columns=ITEM_COLUMNS, errors="ignore")


def _has(data: pd.DataFrame, column: str) -> bool:
    return column in data and data[column].notna().any()


# Figure 6's baselines, each drawn in its pair's colour: column -> (line style, what it is).
FIGURE6_BASELINES = {
    "p_at_1_unmapped": (":", "dotted: without the map"),
    "p_at_1_random": ("-.", "dash-dot: random encoder"),
}


def figure6(
    tables: Tables, out_paths: OutPaths, names: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Tatoeba sentence retrieval P@1 per layer after Procrustes, both directions (``en-fr``:
    English sentences query the French ones, drawn en→fr); dotted, the same retrieval without the
    map, and dash-dotted, with the random encoder on the non-English side (where the csv has
    them). Drawn x 100; the csv keeps fractions."""
    data = _long(tables)
    baselines = {column: how for column, how in FIGURE6_BASELINES.items() if _has(data, column)}
    fig, ax = plt.subplots(figsize=(6, 3.8), dpi=150)
    for direction, rows in data.groupby("direction", sort=False):
        style = "-" if direction.startswith("en-") else "--"
        label = _pair(direction, names).replace("-", "→")
        (line,) = ax.plot(rows["layer"], rows["p_at_1"] * 100, style, marker="o", label=label)
        for column, (baseline_style, _) in baselines.items():
            ax.plot(rows["layer"], rows[column] * 100, baseline_style, color=line.get_color())
    notes = [note for _, note in baselines.values()]
    title = "Parallel sentence retrieval" + (f" ({'; '.join(notes)})" if notes else "")
    ax.set(xlabel="layer", ylabel="P@1, %")
    ax.set_title(title, fontsize=9 if len(notes) > 1 else None)
    ax.legend(fontsize=7, ncol=2, title="query→retrieved", title_fontsize=7)
    _save(fig, out_paths)
    return _without_items(data)


# Figure 7's rows per pair, in the paper's order, then the length-only control; and its measures:
# the figure's own (the paper's linear CKA), then the two robustness rows (docs/deviations.md).
FIGURE7_ENCODERS = ("bilingual", "monolingual", "random", "length")
FIGURE7_MEASURES = ("cka", "cka_debiased", "cka_length_controlled")
FIGURE7_LABELS = {"length": "length only"}


def figure7_grid(tables: Tables) -> pd.DataFrame:
    """Figure 7's numbers: columns ``pair, measure, encoder``, ``L0``.. and ``AVER`` (their mean).
    One block of rows per measure of :data:`FIGURE7_MEASURES` the tables have (``cka`` first, the
    figure's own numbers); in each, per pair, the encoders in the paper's order (bilingual,
    monolingual, random), then the length control (not in ``cka_length_controlled``: it has
    nothing left)."""
    data = _long(tables)
    blocks = []
    for measure in FIGURE7_MEASURES:
        if measure != "cka" and not _has(data, measure):
            continue
        grid = data.pivot_table(
            index=["pair", "encoder"], columns="layer", values=measure, sort=False
        )
        grid.columns = [f"L{layer}" for layer in grid.columns]
        grid["AVER"] = grid.mean(axis=1)
        order = [(pair, encoder) for pair in tables for encoder in FIGURE7_ENCODERS]
        grid = grid.reindex([key for key in order if key in grid.index]).reset_index()
        grid.insert(1, "measure", measure)
        blocks.append(grid)
    return pd.concat(blocks, ignore_index=True)


def figure7(
    tables: Tables, out_paths: OutPaths, names: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """CKA heat map laid out as the paper's: one row per layer and the average row, one column
    per pair and encoder, the length-only control last in each pair (a column of one value).
    Draws the ``cka`` rows; returns :func:`figure7_grid` (every measure)."""
    numbers = figure7_grid(tables)
    grid = numbers[numbers["measure"] == "cka"].drop(columns="measure")
    grid = grid.set_index(["pair", "encoder"])
    values = grid.to_numpy().T  # rows: L0 .. Ln, AVER
    fig, ax = plt.subplots(figsize=(0.62 * len(grid) + 2.2, 0.34 * values.shape[0] + 1.9), dpi=150)
    image = ax.imshow(values, cmap="viridis", vmin=0, vmax=1, aspect="auto")
    for (row, column), value in pd.DataFrame(values).stack().items():
        color = "k" if value > 0.6 else "w"  # viridis is light at the top of its range
        ax.text(column, row, f"{value:.2f}", ha="center", va="center", fontsize=6, color=color)
    ax.set_yticks(range(values.shape[0]), grid.columns, fontsize=7)
    labels = [
        f"{_pair(pair, names)}\n{FIGURE7_LABELS.get(encoder, encoder)}"
        for pair, encoder in grid.index
    ]
    ax.set_xticks(range(len(grid)), labels, fontsize=6, rotation=90)
    for position, (_, encoder) in enumerate(grid.index):
        if encoder == "length":  # set the control apart from the encoders
            ax.axvline(position - 0.5, color="w", linestyle="--", linewidth=1)
    ax.set_title(
        "CKA of mean-pooled parallel sentences (random encoder: non-English side only;\n"
        "length only: each sentence's length in subword tokens as its one feature)",
        fontsize=8,
    )
    fig.colorbar(image, ax=ax, label="linear CKA")
    _save(fig, out_paths)
    return numbers


def cka_retrieval_correlation(similarity: Tables, retrieval: Tables) -> pd.DataFrame:
    """Wu §5.2: Pearson correlation, over layers, between the monolingual models' CKA and their
    sentence retrieval P@1 (the mean of both directions), per pair of both tables."""
    rows = []
    for pair in [pair for pair in similarity if pair in retrieval]:
        cka = similarity[pair]
        cka = cka[cka["encoder"] == "monolingual"].set_index("layer")["cka"]
        p_at_1 = retrieval[pair].groupby("layer")["p_at_1"].mean()
        layers = cka.index.intersection(p_at_1.index)
        if len(layers) < 3 or cka[layers].nunique() < 2 or p_at_1[layers].nunique() < 2:
            r, p = float("nan"), float("nan")
        else:
            r, p = pearsonr(cka[layers], p_at_1[layers])
        rows.append(
            {"pair": pair, "pearson_r": float(r), "p_value": float(p), "layers": len(layers)}
        )
    return pd.DataFrame(rows)
