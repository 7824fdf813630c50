"""Tables 1, 2, 4, 5 and 6-8 of Muller et al. (2021) from ``scores.csv`` and ``similarity.csv``.

Every table is a :class:`~xling.report.compare.ComparedTable` in the paper's layout, each cell ours
beside the paper's number (:mod:`xling.papers.muller2021`), written by :func:`write_tables` as the
study's :class:`TableSettings` say.

How a cell is computed (scores x100, like the paper):

* an absolute score (Ref, Table 5) is the mean over seeds of the selected run's score; its spread
  is the standard deviation over seeds (``ddof=1``; none with one seed);
* a Δ is RANDOM-INIT minus Ref, each the mean over its seeds (seeds are not paired); its spread is
  the standard deviation over seeds of the RANDOM-INIT scores;
* SRC-X is the mean over the target languages other than the source (the seed-mean of each target,
  then the mean over targets); its Δ takes the targets both the group and Ref evaluated; its spread
  is the standard deviation over seeds of the per-seed mean over targets.

A language, group or task this run did not compute prints ``n/c`` beside the paper's number; a
language, group, source or evaluation set the paper does not have gets ours alone (rows after the
paper's rows, columns after the paper's columns). Nothing here raises on a missing cell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from xling.analysis.spearman import gap_similarity_correlation
from xling.papers import muller2021 as paper
from xling.report.compare import SUSPECT_MARK, ComparedRow, ComparedTable, write_compared
from xling.report.muller_scores import (
    Cell,
    Runs,
    language_order,
    named_outputs,
    optional_float,
    prepare_scores,
    prepare_similarity,
)

REF = paper.REF
MEAN = paper.MEAN
TABLE_NAMES = ("table1", "table2", "table4", "table5", "table6", "table7", "table8")
# Our evaluation set put beside a paper row of Table 2 whose config name differs: the demo's plain
# French test set `fr` beside the paper's plain French row (Fr Wiki / Fr. / Fr).
DEFAULT_TABLE2_ALIASES = {"fr": "fr_wiki"}


@dataclass(frozen=True)
class TableSettings:
    """What :func:`build_tables` puts in the tables, each field a param of the rule.

    ``study`` names the study in every title; ``sources`` and ``languages`` restrict (and order)
    our sources and target languages (default: all the scores have); ``table2_aliases`` maps our
    evaluation set to the paper's Table 2 row it stands beside (default
    :data:`DEFAULT_TABLE2_ALIASES`); ``correlation_source`` is Table 4's source, and with
    ``include_source`` its correlations count the source itself.
    """

    study: str = ""
    sources: Sequence[str] | None = None
    languages: Sequence[str] | None = None
    table2_aliases: Mapping[str, str] | None = None
    correlation_source: str = "en"
    include_source: bool = False


# --- labels and orders -------------------------------------------------------------------------


def _group_key(group: str) -> tuple:
    if group == REF:
        return (0, 0, 0)
    if group == "all":
        return (1, 0, 0)
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", group)
    if match:
        start = int(match.group(1))
        end = int(match.group(2) or start)
        return (2, end - start, start)
    return (3, 0, group)


def _is_pair(group: str) -> bool:
    match = re.fullmatch(r"(\d+)-(\d+)", group)
    return bool(match) and int(match.group(2)) == int(match.group(1)) + 1


def _delta_label(group: str) -> str:
    return "Ref" if group == REF else f"Δ{group}"


def _plain_label(group: str) -> str:
    return {"ref": "Ref", "all": "All"}.get(group, group)


def _name(code: str) -> str:
    return paper.LANGUAGES.get(code, code)


def _tasks(scores: pd.DataFrame, experiment: str) -> list[str]:
    ours = scores.loc[scores["experiment"] == experiment, "task"]
    return [*paper.TASKS, *sorted(set(ours) - set(paper.TASKS))]


def _task_heading(task: str) -> str:
    name = paper.TASK_NAMES.get(task, task)
    metric = paper.TASK_METRICS.get(task)
    return f"{name} ({metric})" if metric else name


def _sources(scores, experiment: str, paper_sources, sources: Sequence[str] | None) -> list[str]:
    if sources is None:
        sources = sorted(set(scores.loc[scores["experiment"] == experiment, "source"]))
    ours = list(sources)
    return list(paper_sources) + [s for s in language_order(ours) if s not in paper_sources]


def _targets(runs: Runs, source: str, languages: Sequence[str] | None) -> list[str]:
    targets = [t for t in runs.evaluations(REF) if t != source]
    if languages is not None:
        targets = [t for t in targets if t in languages]
    return language_order(targets)


def _seeds_line(scores: pd.DataFrame, experiment: str) -> str:
    rows = scores[scores["experiment"] == experiment]
    seeds = sorted(set(rows["seed"]))
    if not seeds:
        return f"This run has no `{experiment}` scores: every cell of ours is n/c."
    return f"Seeds of this run: {', '.join(map(str, seeds))} (the paper: {paper.SEEDS} seeds)."


def _title(text: str, study: str) -> str:
    return f"{text} (study: {study})" if study else text


_MEAN_SPREAD = (
    "Ours: mean over seeds, ± the standard deviation over seeds (for a Δ, of the RANDOM-INIT "
    "runs); Δ = RANDOM-INIT minus Ref, each a mean over its seeds; scores x100."
)


def _row(label, group, ours: Mapping[str, Cell], paper_row: Mapping[str, float | None], suspect=()):
    return ComparedRow(
        label,
        ours={column: cell.value for column, cell in ours.items()},
        paper=dict(paper_row),
        spread={column: cell.spread for column, cell in ours.items()},
        group=group,
        suspect=frozenset(suspect),
    )


def _pair_columns(scores: pd.DataFrame, experiment: str, fixed: Sequence[str]) -> list[str]:
    ours = {g for g in scores.loc[scores["experiment"] == experiment, "group"] if _is_pair(g)}
    return [*fixed, *sorted(ours - set(fixed), key=_group_key)]


def _delta_cells(runs: Runs, groups: Sequence[str], evaluations: Sequence[str]) -> dict:
    cells = {_delta_label(REF): runs.absolute(REF, evaluations)}
    for group in groups:
        cells[_delta_label(group)] = runs.delta(group, evaluations)
    return cells


def _paper_cells(row: Mapping[str, float | None] | None, groups: Sequence[str]) -> dict:
    if not row:
        return {}
    return {_delta_label(g): row.get(g) for g in (REF, *groups) if g in row}


def _delta_table(
    title: str,
    groups: Sequence[str],
    rows: list[ComparedRow],
    *,
    description: list[str],
    notes: list[str],
    row_heading: str,
) -> ComparedTable:
    """A table of Ref and a Δ per RANDOM-INIT group (Tables 1, 2 and 6-8), to 2 digits."""
    return ComparedTable(
        title,
        [_delta_label(g) for g in (REF, *groups)],
        rows,
        description=description,
        notes=notes,
        digits=2,
        row_heading=row_heading,
    )


# --- Table 1 and Tables 6-8 --------------------------------------------------------------------


def build_table1(
    scores: pd.DataFrame,
    *,
    sources: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    study: str = "",
) -> ComparedTable:
    """Table 1: SRC-SRC and SRC-X rows per task, Ref and Δ per pair of consecutive layers."""
    groups = _pair_columns(scores, "transfer", paper.PAIR_GROUPS)
    rows, counts = [], []
    for task in _tasks(scores, "transfer"):
        heading = _task_heading(task)
        every = _sources(scores, "transfer", paper.SOURCES, sources)
        runs = {s: Runs(scores, "transfer", task, s) for s in every}
        for source in every:
            cells = _delta_cells(runs[source], groups, [source])
            paper_row = paper.TABLE1.get(task, {}).get((source, source))
            label = f"{source.upper()} - {source.upper()}"
            rows.append(_row(label, heading, cells, _paper_cells(paper_row, groups)))
        for source in every:
            targets = _targets(runs[source], source, languages)
            if targets:
                counts.append(f"{task} {source.upper()}-X: {len(targets)}")
            cells = _delta_cells(runs[source], groups, targets)
            paper_row = paper.TABLE1.get(task, {}).get((source, MEAN))
            label = f"{source.upper()} - X"
            rows.append(_row(label, heading, cells, _paper_cells(paper_row, groups)))
    description = [
        "RANDOM-INIT of pairs of consecutive layers (1-based; 0 = embeddings) against no "
        "RANDOM-INIT (Ref). SRC-X: mean over the target languages other than the source (the "
        "paper: 16 targets; this run: " + ("; ".join(counts) or "none") + ").",
        _MEAN_SPREAD,
        _seeds_line(scores, "transfer"),
    ]
    return _delta_table(
        _title("Table 1 (Muller et al. 2021): RANDOM-INIT of pairs of layers", study),
        groups,
        rows,
        description=description,
        notes=[
            "Table 8 prints a different EN-EN NER row (83.27, -2.64, ...) than Table 1 (83.30, "
            "-2.66, ...); the paper's SRC-X rows are not the means of its per-target rows "
            "(Tables 6-8)."
        ],
        row_heading="SRC - TRG",
    )


def build_appendix_table(
    scores: pd.DataFrame,
    task: str,
    *,
    sources: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    study: str = "",
) -> ComparedTable:
    """Table 6 (parsing), 7 (POS) or 8 (NER): every source-target pair, Ref and Δ per pair."""
    number = paper.APPENDIX_TABLES[task]
    paper_rows = paper.TABLES_6_8[task]
    groups = _pair_columns(scores, "transfer", paper.PAIR_GROUPS)
    rows, notes = [], []
    for source in _sources(scores, "transfer", paper.SOURCES, sources):
        runs = Runs(scores, "transfer", task, source)
        caption = f"Source: {_name(source)}"
        ours_targets = _targets(runs, source, languages)
        paper_targets = [t for (s, t) in paper_rows if s == source and t not in (source, MEAN)]
        order = [source, *paper_targets, *(t for t in ours_targets if t not in paper_targets)]
        for target in [*order, MEAN]:
            evaluations = ours_targets if target == MEAN else [target]
            cells = _delta_cells(runs, groups, evaluations)
            suspect_cells = paper.SUSPECT_CELLS.get((task, source, target), {})
            suspect = [_delta_label(g) for g in suspect_cells]
            for group, why in suspect_cells.items():
                notes.append(
                    f"{SUSPECT_MARK} {paper.pair_label(source, target)}, {_delta_label(group)}: "
                    f"{why}."
                )
            row = _paper_cells(paper_rows.get((source, target)), groups)
            for column, value in row.items():
                if value is None:
                    notes.append(
                        f"{paper.pair_label(source, target)}, {column}: blank in the paper."
                    )
            rows.append(_row(paper.pair_label(source, target), caption, cells, row, suspect))
    description = [
        f"Per source and target language ({paper.TASK_NAMES[task]}, "
        f"{paper.TASK_METRICS[task]}). The paper heads these Δ columns Δ0-1 .. Δ10-11; its "
        "same-language and X (mean) rows are Table 1's, whose columns read Δ1-2 .. Δ11-12, the "
        "names used here. X (mean): mean over the targets other than the source.",
        _MEAN_SPREAD,
        _seeds_line(scores, "transfer"),
    ]
    return _delta_table(
        _title(f"Table {number} (Muller et al. 2021): {paper.TASK_NAMES[task]}, per pair", study),
        groups,
        rows,
        description=description,
        notes=notes,
        row_heading="SOURCE - TARGET",
    )


# --- Table 2 -----------------------------------------------------------------------------------


def _set_label(evaluation: str, lang: str) -> str:
    """A set of ours alone named as the paper names its rows: its language, then the domain its
    config name adds to the language (``en_cc`` of lang en: ``En (cc domain)``; ``fr``: ``Fr``);
    a name without the language as a prefix is kept whole (``En (news2)``)."""
    if not lang:
        return evaluation
    domain = evaluation.removeprefix(f"{lang}_")
    if evaluation == lang or not domain:
        return lang.capitalize()
    if domain == evaluation:
        return f"{lang.capitalize()} ({evaluation})"
    return f"{lang.capitalize()} ({domain} domain)"


def build_table2(
    scores: pd.DataFrame,
    *,
    aliases: Mapping[str, str] | None = None,
    study: str = "",
) -> ComparedTable:
    """Table 2: the ``domain`` experiment, English in-domain fine-tuning, other domains and French.

    A paper row takes our evaluation set of the same name, else one that ``aliases`` maps to it
    (default :data:`DEFAULT_TABLE2_ALIASES`); our other sets get rows of their own, in the domain
    section when their language is the source's, else in the cross-language section, labelled by
    their language and domain (:func:`_set_label`) and named in a note.
    """
    aliases = DEFAULT_TABLE2_ALIASES if aliases is None else aliases
    domain = scores[scores["experiment"] == "domain"]
    ours_groups = {g for g in domain["group"] if g != REF}
    groups = [*paper.DOMAIN_GROUPS, *sorted(ours_groups - set(paper.DOMAIN_GROUPS), key=_group_key)]
    rows, matched_notes = [], []
    named: dict[str, str] = {}  # label of a row of ours alone -> our evaluation set
    for task in _tasks(scores, "domain"):
        heading = paper.TASK_NAMES.get(task, task)
        for source in _sources(scores, "domain", (paper.TABLE2_SOURCE,), None):
            runs = Runs(scores, "domain", task, source)
            ours = [e for e in runs.evaluations(REF) if e]
            ours += [e for g in runs.groups() for e in runs.evaluations(g) if e not in ours]
            paper_rows = paper.TABLE2.get(task, ()) if source == paper.TABLE2_SOURCE else ()
            matched = {}
            for row in paper_rows:
                if row.evaluation in ours:
                    matched[row.evaluation] = row.evaluation
            for evaluation in ours:
                key = aliases.get(evaluation)
                free = evaluation not in matched.values() and key and key not in matched
                if free and any(row.evaluation == key for row in paper_rows):
                    matched[key] = evaluation
                    matched_notes.append(f"{heading}: paper row {key} <- our set {evaluation}")
            extra = [e for e in ours if e not in matched.values()]
            for section, caption in (("domain", "domain analyses"), ("cross", "cross-language")):
                group_caption = f"{heading}: {caption}" + (
                    "" if source == paper.TABLE2_SOURCE else f" (source {source})"
                )
                for row in paper_rows:
                    if row.section != section:
                        continue
                    evaluation = matched.get(row.evaluation)
                    cells = _delta_cells(runs, groups, [evaluation] if evaluation else [])
                    paper_cells = _paper_cells(row.values, groups)
                    rows.append(_row(row.label, group_caption, cells, paper_cells))
                for evaluation in extra:
                    same = runs.langs.get(evaluation, "") == source
                    if (section == "domain") != same:
                        continue
                    cells = _delta_cells(runs, groups, [evaluation])
                    lang = runs.langs.get(evaluation, "")
                    label = f"{source.capitalize()} - {_set_label(evaluation, lang)}"
                    rows.append(_row(label, group_caption, cells, {}))
                    named.setdefault(label, evaluation)
    description = [
        "Fine-tuned on the source's in-domain training set, evaluated on test sets of other "
        "domains of the same language and of another language (experiment `domain`). The paper "
        "heads the groups Δ0-1 .. Δ10-11 and calls Δ0-1 the two first layers: Table 1's layer "
        "pairs, whose names Δ1-2 .. Δ11-12 are used here.",
        _MEAN_SPREAD,
        _seeds_line(scores, "domain"),
    ]
    notes = [f"Matched by alias: {'; '.join(matched_notes)}."] if matched_notes else []
    if named:
        sets = "; ".join(f"{label}: set {evaluation}" for label, evaluation in named.items())
        notes.append(f"Rows of ours alone (the paper has none), by our evaluation set: {sets}.")
    return _delta_table(
        _title("Table 2 (Muller et al. 2021): RANDOM-INIT across domains", study),
        groups,
        rows,
        description=description,
        notes=notes,
        row_heading="SRC - TRG",
    )


# --- Table 4 -----------------------------------------------------------------------------------

TABLE4_COLUMNS = ("Fine-tuned", "Pretrained", "p fine-tuned", "p pretrained")
# The paper prints ρ > 0 where its claim (more similar, smaller gap) means ρ < 0 for our signed ρ
# of the gap: a diff against the printed sign would report a miss of ~1.5 where |ρ| agrees.
TABLE4_PAPER_SIGN = {"Fine-tuned": -1, "Pretrained": -1}
# Robustness rows under each task, where similarity.csv has their column: the same correlation
# with the debiased CKA and with the length-controlled CKA (docs/deviations.md).
TABLE4_ROBUSTNESS = {"cka_debiased": "debiased CKA", "cka_length_controlled": "length-controlled"}


def build_table4(
    scores: pd.DataFrame,
    similarity: pd.DataFrame,
    *,
    source: str = "en",
    include_source: bool = False,
    measure: str = "cka",
    study: str = "",
) -> ComparedTable:
    """Table 4: Spearman ρ (and p-value) of the cross-lang gap against the layer-averaged
    similarity, fine-tuned (Ref) and pretrained, per task; fewer than 3 languages give n/c."""
    tasks = _tasks(scores, "transfer")
    robustness = [
        column
        for column in TABLE4_ROBUSTNESS
        if column != measure and column in similarity and similarity[column].notna().any()
    ]
    found = {
        column: gap_similarity_correlation(
            scores,
            similarity,
            source=source,
            tasks=tasks,
            measure=column,
            include_source=include_source,
            skip_too_few=True,
        )
        for column in (measure, *robustness)
    }
    rows, counts = [], []
    for task in tasks:
        ours = _table4_cells(found[measure], task, counts)
        paper_row = paper.TABLE4.get(task, {}) if source == "en" else {}
        paper_cells = {
            "Fine-tuned": paper_row.get("finetuned"),
            "Pretrained": paper_row.get("pretrained"),
        }
        name = paper.TASK_NAMES.get(task, task)
        rows.append(_row(name, "", ours, paper_cells))
        for column in robustness:
            cells = _table4_cells(found[column], task, [])
            rows.append(_row(f"{name}, {TABLE4_ROBUSTNESS[column]}", "", cells, {}))
    description = [
        f"Spearman ρ over target languages (source {source}) between the cross-lang gap (same-"
        "language minus target test score, Ref models, means over seeds) and the cross-lingual "
        f"similarity ({measure}, mean over seeds, averaged over all layers), with its two-sided "
        "p-value (exact up to 9 languages, scipy's t approximation above; "
        "xling.analysis.spearman). The paper: 17 languages per task, no p-values."
        + (
            " Under each task, the same with "
            + " and with ".join(TABLE4_ROBUSTNESS[column] for column in robustness)
            + " (robustness rows, not in the paper)."
            if robustness
            else ""
        ),
        "Languages per correlation: "
        + ("; ".join(counts) or "none")
        + "; fewer than 3 = n/c."
        + (" The source itself counts (gap 0, similarity 1)." if include_source else ""),
    ]
    notes = [
        "The paper's claim, a more similar language transfers better, means a larger "
        "similarity with a smaller gap (ρ < 0), yet the paper prints positive correlations. Ours "
        "is the signed ρ, the paper's number as printed; the csv's diff compares ours with the "
        "paper's number negated (diff = ours + paper), the sign its claim implies. Section 4.3 "
        "quotes the fine-tuned POS correlation as 0.75, Table 4 as 0.74."
    ]
    return ComparedTable(
        _title("Table 4 (Muller et al. 2021): cross-lang gap vs cross-lingual similarity", study),
        list(TABLE4_COLUMNS),
        rows,
        description=description,
        notes=notes,
        digits=3,
        row_heading="Task",
        paper_sign=TABLE4_PAPER_SIGN,
    )


def _table4_cells(found: pd.DataFrame, task: str, counts: list[str]) -> dict[str, Cell]:
    """A task's ρ and p, fine-tuned and pretrained, of one measure's correlations; each one's
    number of languages appended to ``counts``."""
    result = found[found["task"] == task].set_index("kind")
    cells: dict[str, Cell] = {}
    for kind, column, p_column in (
        ("finetuned", "Fine-tuned", "p fine-tuned"),
        ("pretrained", "Pretrained", "p pretrained"),
    ):
        if kind in result.index:
            cells[column] = Cell(optional_float(result.loc[kind, "rho"]))
            cells[p_column] = Cell(optional_float(result.loc[kind, "p_value"]))
            counts.append(f"{task} {kind}: n = {int(result.loc[kind, 'n'])}")
    return cells


# --- Table 5 -----------------------------------------------------------------------------------


def build_table5(
    scores: pd.DataFrame,
    *,
    source: str = paper.TABLE5_SOURCE,
    languages: Sequence[str] | None = None,
    study: str = "",
) -> ComparedTable:
    """Table 5: absolute scores of the source's models per RANDOM-INIT group: the source's dev and
    test sets, then the target languages."""
    transfer = scores[(scores["experiment"] == "transfer") & (scores["source"] == source)]
    ours_groups = {g for g in transfer["group"] if g != REF}
    fixed = paper.TABLE5_GROUPS
    groups = [REF, *fixed, *sorted(ours_groups - set(fixed), key=_group_key)]
    with_paper = source == paper.TABLE5_SOURCE
    rows = []
    for task in _tasks(scores, "transfer"):
        runs = Runs(scores, "transfer", task, source)
        heading = _task_heading(task)
        paper_rows = paper.TABLE5.get(task, {}) if with_paper else {}
        paper_targets = [lang for (lang, split) in paper.TABLE5_ROWS if lang != source]
        if not with_paper:
            paper_targets = []
        ours = _targets(runs, source, languages)
        targets = [*paper_targets, *(t for t in ours if t not in paper_targets)]
        keys = [(source, "dev"), (source, "test"), *((t, "test") for t in targets)]
        for lang, split in keys:
            cells = {_plain_label(g): runs.absolute(g, [lang], split) for g in groups}
            label = f"{_name(lang)} {split}" if lang == source else _name(lang)
            paper_row = paper_rows.get((lang, split), {})
            paper_cells = {_plain_label(g): paper_row[g] for g in groups if g in paper_row}
            rows.append(_row(label, heading, cells, paper_cells))
    stds = "; ".join(
        f"{task} {'/'.join(map(str, summary))}"
        for task, summary in paper.TABLE5_STD_SUMMARY.items()
    )
    description = [
        f"Absolute scores, source {_name(source)}, per RANDOM-INIT group (All = every layer "
        "re-initialised, a model trained from scratch on the task). The source's dev set is the "
        "selection set; every other row is a test set.",
        "Ours: mean over seeds ± the standard deviation over seeds; scores x100. "
        + _seeds_line(scores, "transfer"),
        f"The paper's std over its 5 seeds (min/median/max): {stds}.",
    ]
    return ComparedTable(
        _title("Table 5 (Muller et al. 2021): RANDOM-INIT of sets of layers", study),
        [_plain_label(g) for g in groups],
        rows,
        description=description,
        notes=[
            "The paper's English test Ref (88.59, 96.53, 83.06) is not Table 1's En-En Ref "
            "(88.98, 96.51, 83.30): the two tables come from different runs."
        ],
        digits=2,
        row_heading="Eval",
    )


# --- all of them -------------------------------------------------------------------------------


def build_tables(
    scores: pd.DataFrame,
    similarity: pd.DataFrame,
    settings: TableSettings = TableSettings(),
    names: Iterable[str] = TABLE_NAMES,
) -> dict[str, ComparedTable]:
    """The tables named in ``names`` (``table1`` .. ``table8``, no ``table3``), as ``settings``
    say."""
    names = list(names)
    unknown = sorted(set(names) - set(TABLE_NAMES))
    if unknown:
        raise ValueError(f"unknown table(s) {unknown}: expected some of {TABLE_NAMES}")
    study, sources, languages = settings.study, settings.sources, settings.languages
    builders = {
        "table1": lambda: build_table1(scores, sources=sources, languages=languages, study=study),
        "table2": lambda: build_table2(scores, aliases=settings.table2_aliases, study=study),
        "table4": lambda: build_table4(
            scores,
            similarity,
            source=settings.correlation_source,
            include_source=settings.include_source,
            study=study,
        ),
        "table5": lambda: build_table5(scores, languages=languages, study=study),
    }
    for task, number in paper.APPENDIX_TABLES.items():
        builders[f"table{number}"] = lambda task=task: build_appendix_table(
            scores, task, sources=sources, languages=languages, study=study
        )
    return {name: builders[name]() for name in names}


def write_tables(
    scores: pd.DataFrame,
    similarity: pd.DataFrame,
    outputs: Mapping[str, str | Path],
    settings: TableSettings = TableSettings(),
) -> list[str]:
    """Write every table whose ``<name>_csv``, ``<name>_md`` and ``<name>_tex`` are in
    ``outputs`` (e.g. ``table1_csv``) as ``settings`` say (:func:`build_tables`); returns the
    names written."""
    named = named_outputs(outputs, TABLE_NAMES, ("csv", "md", "tex"))
    scores, similarity = prepare_scores(scores), prepare_similarity(similarity)
    tables = build_tables(scores, similarity, settings, names=list(named))
    for name, table in tables.items():
        write_compared(table, *named[name])
    return list(named)
