"""The papers' conclusions, written once as data, checked against one run.

Each :class:`Claim` is one sentence of Wu, Conneau et al. (2020) or Muller et al. (2021) with the
section it comes from, the inputs it needs, a predicate over this run's numbers (its ``check``),
and the tolerance the predicate uses, spelt out in ``predicate``. :func:`evaluate` gives each claim
one verdict:

* ``supported``: every comparison the predicate makes holds on this run;
* ``not supported``: at least one does not (the verdict names which);
* ``not computed``: an input is missing, or the run lacks the rows or columns the predicate needs
  (e.g. a variant that ``select`` left out). Never a crash, never a guess.

Where a study ran several seeds, every comparison is made on means over seeds and must hold by
more than its spread: a difference ``a - b`` counts only when it exceeds the standard deviation of
the difference (the seeds' standard deviations of ``a`` and ``b`` added in quadrature; an average
over targets or rows carries the average of their standard deviations), an upper bound ``a <= t``
only when ``a`` plus its standard deviation stays below ``t``. With one seed the spread is zero
and the point estimates decide.

Inputs (each optional, by name; :data:`INPUTS` gives their paths under ``results/<study>/``):
Table 1's csv (``xling.report.table1``), the csvs behind Wu's Figures 4 to 8 and the CKA-retrieval
correlation table (``xling.report.wu_figures``), and Muller et al.'s ``muller/scores.csv`` and
``muller/similarity.csv`` (contracts in the module docstrings below each section).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from xling.atomic import atomic_open
from xling.papers.wu2020 import CHANCE, DISTANCE_ORDER, TASK_COLUMNS, WU_TASKS
from xling.report.table1 import AVERAGE, KEY, score_column

SUPPORTED = "supported"
NOT_SUPPORTED = "not supported"
NOT_COMPUTED = "not computed"
VERDICTS = (SUPPORTED, NOT_SUPPORTED, NOT_COMPUTED)

WU = "Wu et al. 2020"
MULLER = "Muller et al. 2021"

# name -> (path under results/<study>/, the part of the study that writes it)
INPUTS = {
    "table1": ("tables/table1.csv", "table1"),
    "wu_figure4": ("figures/wu_figure4.csv", "section5"),
    "wu_figure5": ("figures/wu_figure5.csv", "section5"),
    "wu_figure6": ("figures/wu_figure6.csv", "section5"),
    "wu_figure7": ("figures/wu_figure7.csv", "section5"),
    "wu_figure8": ("figures/wu_figure8.csv", "section5"),
    "wu_cka_retrieval": ("tables/wu_cka_retrieval_pearson.csv", "section5"),
    "muller_scores": ("muller/scores.csv", "muller"),
    "muller_similarity": ("muller/similarity.csv", "muller"),
}


def input_paths(results: str | Path, parts: Iterable[str]) -> dict[str, str]:
    """The inputs a study computes: those of :data:`INPUTS` whose part is in ``parts``."""
    wanted = set(parts)
    return {name: f"{results}/{path}" for name, (path, part) in INPUTS.items() if part in wanted}


# --------------------------------------------------------------------------- numbers with spread
@dataclass(frozen=True)
class Estimate:
    """A mean over seeds and its standard deviation (0 for one seed)."""

    value: float
    std: float = 0.0

    def __add__(self, other: Estimate | float) -> Estimate:
        other = _estimate(other)
        return Estimate(self.value + other.value, math.hypot(self.std, other.std))

    def __sub__(self, other: Estimate | float) -> Estimate:
        other = _estimate(other)
        return Estimate(self.value - other.value, math.hypot(self.std, other.std))

    def __rsub__(self, other: float) -> Estimate:
        return _estimate(other) - self

    def __mul__(self, factor: float) -> Estimate:
        return Estimate(self.value * factor, abs(factor) * self.std)

    __rmul__ = __mul__


def _estimate(value: Estimate | float) -> Estimate:
    return value if isinstance(value, Estimate) else Estimate(float(value))


def mean(estimates: Sequence[Estimate]) -> Estimate:
    """The mean of estimates; its spread is the mean of theirs, the most the spread of a mean can
    be (scores of one model on several targets move together from seed to seed)."""
    n = len(estimates)
    return Estimate(sum(e.value for e in estimates) / n, sum(e.std for e in estimates) / n)


def exceeds(margin: Estimate) -> bool:
    """Whether a margin that must be positive is, by more than its spread."""
    return margin.value > margin.std


class NotComputed(Exception):
    """The run lacks what a claim's predicate needs."""


@dataclass
class Evidence:
    """What a predicate compared: the numbers it used and the conditions that failed."""

    numbers: dict[str, float] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    conditions: int = 0

    def record(self, name: str, value: Estimate | float) -> None:
        value = _estimate(value)
        self.numbers[name] = round(value.value, 4)
        if value.std > 0:
            self.numbers[f"{name} (std)"] = round(value.std, 4)

    def require(self, name: str, margin: Estimate, *, record: bool = True) -> None:
        """Condition ``name`` holds when ``margin`` is positive beyond its spread."""
        if record:
            self.record(name, margin)
        self.check(name, exceeds(margin))

    def check(self, name: str, holds: bool) -> None:
        self.conditions += 1
        if not holds:
            self.failed.append(name)


# --------------------------------------------------------------------------- the run's inputs
@dataclass
class Run:
    """One run's inputs by name (None: not computed by this study, or not there)."""

    tables: dict[str, pd.DataFrame | None]
    english_prime: str = "enp"

    def get(self, name: str) -> pd.DataFrame | None:
        return self.tables.get(name)

    @classmethod
    def load(cls, paths: Mapping[str, str | Path | None], english_prime: str = "enp") -> Run:
        """Read each named csv; a missing or empty file is None, never an error."""
        tables: dict[str, pd.DataFrame | None] = {}
        for name, path in paths.items():
            tables[name] = None
            if path is None or not Path(path).is_file():
                continue
            try:
                frame = pd.read_csv(path, keep_default_na=True)
            except pd.errors.EmptyDataError:
                continue
            tables[name] = frame if len(frame.columns) else None
        return cls(tables, english_prime)


# --------------------------------------------------------------------------- claims as data
Check = Callable[["Claim", Run, Evidence], None]


@dataclass(frozen=True)
class Claim:
    """One conclusion of a paper, and how this run tests it."""

    id: str
    paper: str
    section: str
    summary: str  # the claim in a few words
    sentence: str  # the paper's words
    predicate: str  # what is computed from our numbers, with the tolerance
    needs: tuple[str, ...]  # input names (keys of INPUTS)
    check: Check
    tolerance: float = 0.0


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    verdict: str
    numbers: Mapping[str, float]
    failed: Sequence[str] = ()
    reason: str = ""

    def as_dict(self) -> dict:
        claim = self.claim
        return {
            "id": claim.id,
            "paper": claim.paper,
            "section": claim.section,
            "summary": claim.summary,
            "sentence": claim.sentence,
            "predicate": claim.predicate,
            "tolerance": claim.tolerance,
            "inputs": list(claim.needs),
            "verdict": self.verdict,
            "numbers": {  # an undefined number (NaN) is null: strict JSON has no NaN
                name: None if isinstance(value, float) and math.isnan(value) else value
                for name, value in self.numbers.items()
            },
            "failed": list(self.failed),
            "reason": self.reason,
        }


def evaluate_claim(claim: Claim, run: Run) -> Verdict:
    missing = [name for name in claim.needs if run.get(name) is None]
    if missing:
        return Verdict(claim, NOT_COMPUTED, {}, reason=f"not computed by this run: {missing}")
    evidence = Evidence()
    try:
        claim.check(claim, run, evidence)
    except NotComputed as error:
        return Verdict(claim, NOT_COMPUTED, evidence.numbers, reason=str(error))
    if evidence.conditions == 0:
        return Verdict(claim, NOT_COMPUTED, evidence.numbers, reason="nothing to compare")
    verdict = NOT_SUPPORTED if evidence.failed else SUPPORTED
    return Verdict(claim, verdict, evidence.numbers, failed=tuple(evidence.failed))


def evaluate(run: Run, claims: Sequence[Claim] | None = None) -> list[Verdict]:
    return [evaluate_claim(claim, run) for claim in (CLAIMS if claims is None else claims)]


# --------------------------------------------------------------------------- Table 1 (Wu §4)
class Table1:
    """Table 1's csv (``xling.report.table1``): scores in percent by variant, task and target."""

    def __init__(self, frame: pd.DataFrame):
        if KEY not in frame:
            raise NotComputed(f"Table 1 has no {KEY!r} column")
        self.frame = frame.set_index(KEY)

    def targets(self, task: str) -> list[str]:
        """Target labels of ``task``'s score columns (no averages)."""
        prefix = f"{TASK_COLUMNS[task]} "
        labels = []
        for column in self.frame.columns:
            label = column.removeprefix(prefix)
            if column.startswith(prefix) and " " not in label and label != AVERAGE:
                labels.append(label)
        return labels

    def cell(self, variant: str, task: str, target: str) -> Estimate | None:
        column = score_column(task, target)
        if variant not in self.frame.index or column not in self.frame:
            return None
        value = pd.to_numeric(self.frame.at[variant, column], errors="coerce")
        if pd.isna(value):
            return None
        std = 0.0
        if f"{column} std" in self.frame:
            std = pd.to_numeric(self.frame.at[variant, f"{column} std"], errors="coerce")
            std = 0.0 if pd.isna(std) else float(std)
        return Estimate(float(value), std)

    def common_targets(self, task: str, variants: Sequence[str]) -> list[str]:
        """The targets of ``task`` every one of ``variants`` has a score for."""
        return [
            target
            for target in self.targets(task)
            if all(self.cell(v, task, target) is not None for v in variants)
        ]

    def means(self, task: str, variants: Sequence[str]) -> dict[str, Estimate] | None:
        """Each variant's score on ``task`` averaged over the targets all of them computed."""
        targets = self.common_targets(task, variants)
        if not targets:
            return None
        return {v: mean([self.cell(v, task, t) for t in targets]) for v in variants}


def _distance(label: str, english_prime: str = "enp") -> int | None:
    """Rank of a target (or pair) label from the closest language to English to the furthest."""
    lang = label.split("-")[-1]
    order = [english_prime if code == "enp" else code for code in DISTANCE_ORDER]
    return order.index(lang) if lang in order else None


def _nearest_and_furthest(labels: Sequence[str], english_prime: str = "enp") -> tuple[str, str]:
    ranked = sorted(
        (rank, label) for label in labels if (rank := _distance(label, english_prime)) is not None
    )
    if len(ranked) < 2 or ranked[0][0] == ranked[-1][0]:
        raise NotComputed(f"needs two targets at different distances from English, has {labels}")
    return ranked[0][1], ranked[-1][1]


def _tasks_with(table: Table1, variants: Sequence[str], tasks: Sequence[str] = WU_TASKS):
    """(task, means) for every task where all of ``variants`` share a computed target."""
    found = [(task, m) for task in tasks if (m := table.means(task, variants)) is not None]
    if not found:
        raise NotComputed(f"Table 1 has no task where all of {list(variants)} are computed")
    return found


def _drop_at_most(claim: Claim, run: Run, evidence: Evidence, better: str, worse: str) -> None:
    table = Table1(run.get("table1"))
    for task, means in _tasks_with(table, [better, worse]):
        drop = means[better] - means[worse]
        evidence.record(f"{task}: {better} - {worse}", drop)
        evidence.require(f"{task}: drop at most {claim.tolerance:g}", claim.tolerance - drop)


def check_domain(claim: Claim, run: Run, evidence: Evidence) -> None:
    _drop_at_most(claim, run, evidence, "default", "wiki_cc")


def check_no_anchors(claim: Claim, run: Run, evidence: Evidence) -> None:
    _drop_at_most(claim, run, evidence, "default_anchors", "no_anchors")


def check_extra_anchors(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = Table1(run.get("table1"))
    found = False
    for task in ("xnli", "ner"):
        targets = table.common_targets(task, ["default", "extra_anchors"])
        if len({_distance(t) for t in targets} - {None}) < 2:
            continue
        near, far = _nearest_and_furthest(targets)
        gain = {
            t: table.cell("extra_anchors", task, t) - table.cell("default", task, t)
            for t in (near, far)
        }
        evidence.record(f"{task}: extra_anchors - default, {near}", gain[near])
        evidence.require(f"{task}: gain on {far} positive", gain[far], record=False)
        evidence.record(f"{task}: extra_anchors - default, {far}", gain[far])
        evidence.require(f"{task}: gain on {far} above gain on {near}", gain[far] - gain[near])
        found = True
    if not found:
        raise NotComputed("Table 1 lacks Default and Extra anchors on two targets of XNLI or NER")


def check_sep_emb_below_no_anchors(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = Table1(run.get("table1"))
    for task, means in _tasks_with(table, ["no_anchors", "sep_emb"]):
        evidence.require(f"{task}: no_anchors - sep_emb", means["no_anchors"] - means["sep_emb"])


# Points above chance Default must score on a task for a share of it to mean anything: where the
# reference itself does not transfer, there is nothing for an ablation to keep or lose.
MIN_TRANSFER = 5.0


def _retained(claim: Claim, run: Run, evidence: Evidence, variant: str, *, at_most: bool) -> None:
    """``variant`` keeps at most (or at least) ``tolerance`` of Default's score above chance."""
    table = Table1(run.get("table1"))
    for task, means in _tasks_with(table, ["default", variant]):
        above = {v: means[v] - CHANCE[task] for v in ("default", variant)}
        evidence.record(f"{task}: default above chance", above["default"])
        if not exceeds(above["default"] - MIN_TRANSFER):
            continue  # Default does not transfer on this task: left out
        evidence.record(
            f"{task}: share of Default kept", above[variant].value / above["default"].value
        )
        margin = claim.tolerance * above["default"] - above[variant]
        name = f"{task}: {variant} keeps {'at most' if at_most else 'at least'} {claim.tolerance:g}"
        evidence.require(name, margin if at_most else -1.0 * margin)
    if evidence.conditions == 0:
        raise NotComputed(f"Default is within {MIN_TRANSFER:g} points of chance on every task")


def check_sep_emb_l1_6_chance(claim: Claim, run: Run, evidence: Evidence) -> None:
    _retained(claim, run, evidence, "sep_emb_l1_6", at_most=True)


def check_sep_l1_3_reasonable(claim: Claim, run: Run, evidence: Evidence) -> None:
    _retained(claim, run, evidence, "sep_l1_3", at_most=False)


SHARING_CHAINS = (
    ("default", "sep_l1_3", "sep_l1_6"),
    ("sep_emb", "sep_emb_l1_3", "sep_emb_l1_6"),
)


def check_fewer_shared_layers(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = Table1(run.get("table1"))
    for chain in SHARING_CHAINS:
        for task in WU_TASKS:
            for target in table.common_targets(task, chain):
                scores = [table.cell(v, task, target) for v in chain]
                for (a, b), (sa, sb) in zip(_steps(chain), _steps(scores), strict=True):
                    evidence.require(
                        f"{task} {target}: {b} at most {claim.tolerance:g} above {a}",
                        sa - sb + claim.tolerance,
                        record=False,
                    )
                evidence.require(
                    f"{task} {target}: {chain[0]} - {chain[-1]}", scores[0] - scores[-1]
                )
    if evidence.conditions == 0:
        raise NotComputed("Table 1 lacks a complete chain of sharing variants on any target")


def _steps(items: Sequence) -> list[tuple]:
    return list(itertools.pairwise(items))


def check_distance(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = Table1(run.get("table1"))
    for task in WU_TASKS:
        targets = _computed_targets(table, task, table.frame.index)
        if len({_distance(t) for t in targets}) < 2:
            continue
        near, far = _nearest_and_furthest(targets)
        rows = [
            v
            for v in table.frame.index
            if table.cell(v, task, near) is not None and table.cell(v, task, far) is not None
        ]
        if not rows:
            continue
        gap = mean([table.cell(v, task, near) - table.cell(v, task, far) for v in rows])
        evidence.require(f"{task}: {near} - {far}, mean over {len(rows)} rows", gap)


SHARING_ROWS = ("sep_emb", "sep_emb_l1_3", "sep_emb_l1_6", "sep_l1_3", "sep_l1_6")


def _computed_targets(table: Table1, task: str, variants: Iterable[str]) -> list[str]:
    """Targets at a known distance that at least one of ``variants`` has a score for."""
    return [
        t
        for t in table.targets(task)
        if _distance(t) is not None and any(table.cell(v, task, t) for v in variants)
    ]


def check_distant_lose_most(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = Table1(run.get("table1"))
    for task in WU_TASKS:
        targets = _computed_targets(table, task, ["default"])
        if len({_distance(t) for t in targets}) < 2:
            continue
        near, far = _nearest_and_furthest(targets)
        losses = {}
        for target in (near, far):
            rows = [
                v
                for v in SHARING_ROWS
                if table.cell(v, task, near) is not None
                and table.cell(v, task, far) is not None
                and table.cell("default", task, target) is not None
            ]
            if not rows:
                break
            losses[target] = mean(
                [table.cell("default", task, target) - table.cell(v, task, target) for v in rows]
            )
        if len(losses) < 2:
            continue
        evidence.record(f"{task}: loss of the sharing rows on {near}", losses[near])
        evidence.record(f"{task}: loss of the sharing rows on {far}", losses[far])
        evidence.require(f"{task}: loss on {far} - loss on {near}", losses[far] - losses[near])


DOMAIN_AND_ANCHOR_ROWS = ("wiki_cc", "default_anchors", "no_anchors", "extra_anchors")


def check_sharing_matters_most(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = Table1(run.get("table1"))

    def drop(variant: str) -> Estimate | None:
        per_task = [m[variant] for _, m in _maybe_tasks(table, ["default", variant])]
        base = [m["default"] for _, m in _maybe_tasks(table, ["default", variant])]
        if not per_task:
            return None
        return mean(base) - mean(per_task)

    sharing = {v: d for v in SHARING_ROWS if (d := drop(v)) is not None}
    others = {v: d for v in DOMAIN_AND_ANCHOR_ROWS if (d := drop(v)) is not None}
    if not sharing or not others:
        raise NotComputed("Table 1 lacks Default with a sharing row and a domain or anchor row")
    worst_sharing = max(sharing, key=lambda v: sharing[v].value)
    for variant, value in {**sharing, **others}.items():
        evidence.record(f"default - {variant}, mean over tasks", value)
    for variant, value in others.items():
        evidence.require(
            f"{worst_sharing} drops more than {variant}", sharing[worst_sharing] - value,
            record=False,
        )  # fmt: skip
        evidence.require(
            f"{variant} drops at most {claim.tolerance:g}", claim.tolerance - value, record=False
        )


def _maybe_tasks(table: Table1, variants: Sequence[str]):
    return [(task, m) for task in WU_TASKS if (m := table.means(task, variants)) is not None]


# --------------------------------------------------------------------------- Wu §5
def _layers(frame: pd.DataFrame) -> list[int]:
    return sorted(int(layer) for layer in pd.to_numeric(frame["layer"]).dropna().unique())


def _middle(layer: int, last: int) -> bool:
    return last / 4 <= layer <= 3 * last / 4


def _mapped(frame: pd.DataFrame, mapped: bool) -> pd.DataFrame:
    flags = frame["mapped"].astype(str).str.lower().isin(["true", "1"])
    return frame[flags == mapped]


def check_mapped_beats_unmapped(claim: Claim, run: Run, evidence: Evidence) -> None:
    words = run.get("wu_figure4")
    for pair, rows in words.groupby("pair", sort=False):
        embeddings = rows[rows["method"] == "embeddings"]
        contextual = rows[rows["method"] == "contextual"]
        if len(embeddings):
            gain = (
                _mapped(embeddings, True)["p_at_1"].max()
                - _mapped(embeddings, False)["p_at_1"].max()
            )
            evidence.require(f"{pair}: embeddings, mapped - unmapped P@1 - {claim.tolerance:g}",
                             Estimate(gain - claim.tolerance))  # fmt: skip
        mapped = _mapped(contextual, True).set_index("layer")["p_at_1"]
        unmapped = _mapped(contextual, False).set_index("layer")["p_at_1"]
        if len(mapped) and len(unmapped):
            best = mapped.idxmax()
            if best in unmapped.index:
                gain = mapped[best] - unmapped[best]
                evidence.require(
                    f"{pair}: contextual L{int(best)}, mapped - unmapped P@1 - {claim.tolerance:g}",
                    Estimate(gain - claim.tolerance),
                )


def check_bert_vs_fasttext(claim: Claim, run: Run, evidence: Evidence) -> None:
    words = _mapped(run.get("wu_figure4"), True)
    for pair, rows in words.groupby("pair", sort=False):
        by_method = rows.groupby("method")["p_at_1"].max()
        if {"embeddings", "fasttext"} <= set(by_method.index):
            evidence.record(f"{pair}: embeddings P@1", by_method["embeddings"])
            evidence.record(f"{pair}: fastText P@1", by_method["fasttext"])
            evidence.require(
                f"{pair}: embeddings - fastText P@1",
                Estimate(by_method["embeddings"] - by_method["fasttext"]),
                record=False,
            )


def check_higher_layers_words(claim: Claim, run: Run, evidence: Evidence) -> None:
    words = _mapped(run.get("wu_figure4"), True)
    contextual = words[words["method"] == "contextual"]
    for pair, rows in contextual.groupby("pair", sort=False):
        scores = rows.groupby(pd.to_numeric(rows["layer"]))["p_at_1"].mean()
        last = int(scores.index.max())
        lower = scores[scores.index <= last / 2].mean()
        upper = scores[scores.index > last / 2].mean()
        evidence.record(f"{pair}: P@1, layers above L{last / 2:g}", upper)
        evidence.record(f"{pair}: P@1, layers up to L{last / 2:g}", lower)
        evidence.require(f"{pair}: upper - lower half", Estimate(upper - lower), record=False)


def _curves(frame: pd.DataFrame, line: str) -> dict[tuple[str, str], pd.Series]:
    rows = frame[frame["line"] == line]
    return {
        (pair, task): group.groupby(pd.to_numeric(group["layer"]))["score"].mean()
        for (pair, task), group in rows.groupby(["pair", "task"], sort=False)
    }


def check_middle_layers_transfer(claim: Claim, run: Run, evidence: Evidence) -> None:
    for (pair, task), curve in _curves(run.get("wu_figure5"), "mlm_align").items():
        best, last = int(curve.idxmax()), int(curve.index.max())
        evidence.record(f"{pair} {task}: best layer", best)
        evidence.check(f"{pair} {task}: best layer L{best} in the middle", _middle(best, last))
        evidence.require(
            f"{pair} {task}: best - last layer", Estimate(curve[best] - curve[last]), record=False
        )


def check_bimlm_better(claim: Claim, run: Run, evidence: Evidence) -> None:
    frame = run.get("wu_figure5")
    aligned, bilingual = _curves(frame, "mlm_align"), _curves(frame, "bimlm")
    for key in aligned.keys() & bilingual.keys():
        pair, task = key
        if (pair, task) == ("en-fr", "parsing"):
            continue  # the paper's exception
        margin = bilingual[key].max() - aligned[key].max()
        evidence.require(f"{pair} {task}: best biMLM - best MLM align", Estimate(margin))


def check_sentences_lower_layers(claim: Claim, run: Run, evidence: Evidence) -> None:
    frame = run.get("wu_figure6")
    for (_, direction), rows in frame.groupby(["pair", "direction"], sort=False):
        scores = rows.groupby(pd.to_numeric(rows["layer"]))["p_at_1"].mean()
        best, last = int(scores.idxmax()), int(scores.index.max())
        evidence.record(f"{direction}: best layer", best)
        evidence.check(f"{direction}: best layer L{best} in the lower half", best <= last / 2)


def _figure7(run: Run) -> pd.DataFrame:
    frame = run.get("wu_figure7")
    if "AVER" not in frame:
        raise NotComputed("Figure 7's table has no AVER column")
    return frame


def check_similarity_order(claim: Claim, run: Run, evidence: Evidence) -> None:
    frame = _figure7(run)
    for pair, rows in frame.groupby("pair", sort=False):
        average = rows.set_index("encoder")["AVER"]
        order = [e for e in ("bilingual", "monolingual", "random") if e in average.index]
        for encoder in order:
            evidence.record(f"{pair}: {encoder} CKA (average)", average[encoder])
        for higher, lower in _steps(order):
            evidence.require(
                f"{pair}: {higher} - {lower}", Estimate(average[higher] - average[lower]),
                record=False,
            )  # fmt: skip


def _layer_columns(frame: pd.DataFrame) -> dict[int, str]:
    return {int(c[1:]): c for c in frame.columns if c.startswith("L") and c[1:].isdigit()}


def check_early_layers(claim: Claim, run: Run, evidence: Evidence) -> None:
    frame = _figure7(run)
    columns = _layer_columns(frame)
    if not columns:
        raise NotComputed("Figure 7's table has no layer columns")
    last = max(columns)
    limit = math.ceil(last / 3)
    for _, row in frame[frame["encoder"].isin(["monolingual", "bilingual"])].iterrows():
        values = {layer: row[column] for layer, column in columns.items()}
        best = max(values, key=values.get)
        name = f"{row['pair']} {row['encoder']}"
        evidence.record(f"{name}: best layer", best)
        evidence.check(f"{name}: best layer L{best} among L0-L{limit}", best <= limit)


def check_cka_retrieval(claim: Claim, run: Run, evidence: Evidence) -> None:
    frame = run.get("wu_cka_retrieval")
    for _, row in frame.iterrows():
        r = pd.to_numeric(row["pearson_r"], errors="coerce")
        if pd.isna(r):
            evidence.numbers[f"{row['pair']}: Pearson r"] = float("nan")
            continue
        evidence.record(f"{row['pair']}: Pearson r", r)
        evidence.require(
            f"{row['pair']}: r - {claim.tolerance:g}", Estimate(r - claim.tolerance), record=False
        )
    if evidence.conditions == 0:
        raise NotComputed("no pair has a defined Pearson correlation (constant CKA or P@1)")


def check_gap_shrinks(claim: Claim, run: Run, evidence: Evidence) -> None:
    frame = _figure7(run)
    gaps = {}
    for pair, rows in frame.groupby("pair", sort=False):
        average = rows.set_index("encoder")["AVER"]
        rank = _distance(pair, run.english_prime)
        if rank is not None and {"bilingual", "monolingual"} <= set(average.index):
            gaps[pair] = (rank, average["bilingual"] - average["monolingual"])
    ordered = sorted(gaps, key=lambda pair: gaps[pair][0])
    if len({gaps[p][0] for p in ordered}) < 2:
        raise NotComputed(f"needs two pairs at different distances, has {ordered}")
    for pair in ordered:
        evidence.record(f"{pair}: bilingual - monolingual CKA", gaps[pair][1])
    for near, far in _steps(ordered):
        evidence.require(
            f"{far} gap at most {claim.tolerance:g} above {near} gap",
            Estimate(gaps[near][1] - gaps[far][1] + claim.tolerance),
            record=False,
        )
    evidence.require(
        f"{ordered[0]} gap - {ordered[-1]} gap",
        Estimate(gaps[ordered[0]][1] - gaps[ordered[-1]][1]),
        record=False,
    )


# --------------------------------------------------------------------------- Muller et al.
# scores.csv: experiment (transfer | domain), task, source, group (ref, or the RANDOM-INIT group:
# "1-2", "0-1", "all", ...; layers 1-based, 0 = embeddings), seed, evaluation (target language in
# transfer; a named set in domain), lang, split (dev | test), score (fraction), hp_id.
# similarity.csv: model (pretrained | finetuned), task (empty for pretrained), group, seed, source,
# target, layer (0..L), cka, cka_debiased.
REF = "ref"


def group_layers(group: str) -> set[int] | None:
    """The layers of a RANDOM-INIT group ("1-2" -> {1, 2}, "3" -> {3}); None for ref and all."""
    text = str(group).strip()
    start, _, end = text.partition("-")
    if not start.isdigit() or (end and not end.isdigit()):
        return None
    first, last = int(start), int(end or start)
    return set(range(first, last + 1)) if first <= last else None


def _is_ref(group: object) -> bool:
    return pd.isna(group) or str(group).strip() in ("", REF)


class Scores:
    """Muller's scores, one per (experiment, task, source, group, evaluation, split): the mean and
    standard deviation over seeds, in points, each seed's grid point chosen on source dev."""

    KEYS = ("experiment", "task", "source", "group", "evaluation", "split")

    def __init__(self, frame: pd.DataFrame):
        frame = frame.copy()
        frame["group"] = frame["group"].map(lambda g: REF if _is_ref(g) else str(g).strip())
        languages = frame["lang"] if "lang" in frame else frame["evaluation"]
        frame["lang"] = languages.fillna(frame["evaluation"]).astype(str)
        frame = _select_grid_points(frame)
        stats = frame.groupby(list(self.KEYS), sort=False, dropna=False)["score"].agg(
            ["mean", "std"]
        )
        self.cells = {
            key: Estimate(100.0 * row["mean"], 0.0 if pd.isna(row["std"]) else 100.0 * row["std"])
            for key, row in stats.iterrows()
        }
        self.languages = {
            (row.experiment, row.task, row.source, row.evaluation): row.lang
            for row in frame.itertuples()
        }

    def get(self, experiment, task, source, group, evaluation, split="test") -> Estimate | None:
        return self.cells.get((experiment, task, source, group, evaluation, split))

    def evaluations(self, experiment, task, source, split="test") -> dict[str, str]:
        """Evaluation name -> its language, for the ref model of one experiment."""
        return {
            key[4]: self.languages[(experiment, task, source, key[4])]
            for key in self.cells
            if key[:4] == (experiment, task, source, REF) and key[5] == split
        }

    def groups(self, experiment: str) -> dict[str, set[int]]:
        found = {key[3] for key in self.cells if key[0] == experiment}
        return {g: layers for g in found if (layers := group_layers(g)) is not None}

    def runs(self, experiment: str) -> list[tuple[str, str]]:
        return sorted({(key[1], key[2]) for key in self.cells if key[0] == experiment})


def _select_grid_points(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep, per (experiment, task, source, group, seed), the grid point (``hp_id``) with the best
    source-language dev score, as the paper selects; all rows where there is one point or no dev."""
    if "hp_id" not in frame or frame["hp_id"].nunique(dropna=False) <= 1:
        return frame
    keys = ["experiment", "task", "source", "group", "seed"]
    kept = []
    for _, rows in frame.groupby(keys, sort=False, dropna=False):
        dev = rows[(rows["split"] == "dev") & (rows["lang"] == rows["source"])]
        if rows["hp_id"].nunique(dropna=False) > 1 and len(dev):
            best = dev.groupby("hp_id", dropna=False)["score"].mean().idxmax()
            rows = rows[rows["hp_id"] == best]
        kept.append(rows)
    return pd.concat(kept, ignore_index=True)


def _last_layer(groups: Mapping[str, set[int]]) -> int:
    if not groups:
        raise NotComputed("no RANDOM-INIT group with numbered layers")
    return max(max(layers) for layers in groups.values())


def _drops(scores: Scores, experiment: str, task: str, source: str, group: str):
    """(same-language drop, cross-language drop averaged over targets) in points, or None."""
    evaluations = scores.evaluations(experiment, task, source)
    same, cross = [], []
    for evaluation, lang in evaluations.items():
        ref = scores.get(experiment, task, source, REF, evaluation)
        ablated = scores.get(experiment, task, source, group, evaluation)
        if ref is None or ablated is None:
            continue
        (same if lang == source else cross).append(ref - ablated)
    return same, cross


def check_muller_lower_layers(claim: Claim, run: Run, evidence: Evidence) -> None:
    scores = Scores(run.get("muller_scores"))
    groups = scores.groups("transfer")
    last = _last_layer(groups)
    lower = sorted(g for g, layers in groups.items() if max(layers) <= last / 3)
    for task, source in scores.runs("transfer"):
        for group in lower:
            same, cross = _drops(scores, "transfer", task, source, group)
            if not same or not cross:
                continue
            name = f"{task} {source}, RANDOM-INIT {group}"
            evidence.record(f"{name}: same-language drop", mean(same))
            evidence.record(f"{name}: cross-language drop", mean(cross))
            evidence.require(
                f"{name}: cross - same drop - {claim.tolerance:g}",
                mean(cross) - mean(same) - claim.tolerance,
                record=False,
            )


def check_muller_upper_layers(claim: Claim, run: Run, evidence: Evidence) -> None:
    scores = Scores(run.get("muller_scores"))
    groups = scores.groups("transfer")
    last = _last_layer(groups)
    upper = sorted(g for g, layers in groups.items() if min(layers) > 3 * last / 4)
    for task, source in scores.runs("transfer"):
        for group in upper:
            same, cross = _drops(scores, "transfer", task, source, group)
            for kind, drops in (("same", same), ("cross", cross)):
                if drops:
                    name = f"{task} {source}, RANDOM-INIT {group}: {kind}-language drop"
                    evidence.record(name, mean(drops))
                    evidence.require(
                        f"{name} at most {claim.tolerance:g}",
                        claim.tolerance - mean(drops),
                        record=False,
                    )


def check_muller_domain(claim: Claim, run: Run, evidence: Evidence) -> None:
    scores = Scores(run.get("muller_scores"))
    groups = scores.groups("domain")
    if not groups:
        raise NotComputed("no domain experiment with a RANDOM-INIT group")
    lowest = min(groups, key=lambda g: (min(groups[g]), max(groups[g])))
    for task, source in scores.runs("domain"):
        evaluations = scores.evaluations("domain", task, source)
        drops = {}
        for evaluation in evaluations:
            ref = scores.get("domain", task, source, REF, evaluation)
            ablated = scores.get("domain", task, source, lowest, evaluation)
            if ref is not None and ablated is not None:
                drops[evaluation] = ref - ablated
                evidence.record(
                    f"{task} {source}, RANDOM-INIT {lowest}: drop on {evaluation}",
                    drops[evaluation],
                )
        same = [e for e in drops if evaluations[e] == source]
        cross = [e for e in drops if evaluations[e] != source]
        for c in cross:
            for s in same:
                evidence.require(
                    f"{task}: drop on {c} - drop on {s}", drops[c] - drops[s], record=False
                )


class Similarity:
    """Muller's cross-lingual similarity: per curve, CKA per layer averaged over the (source,
    target) pairs, then mean and standard deviation over seeds."""

    def __init__(self, frame: pd.DataFrame):
        frame = frame.copy()
        frame["task"] = frame["task"].fillna("").astype(str)
        frame["group"] = frame["group"].map(lambda g: REF if _is_ref(g) else str(g).strip())
        self.frame = frame

    def rows(self, model: str, task: str = "", group: str = REF) -> pd.DataFrame:
        f = self.frame
        return f[(f["model"] == model) & (f["task"] == task) & (f["group"] == group)]

    def curve(self, model: str, task: str = "", group: str = REF) -> dict[int, Estimate]:
        rows = self.rows(model, task, group)
        per_seed = rows.groupby(["seed", "layer"])["cka"].mean().unstack("seed")
        curve = {}
        for layer, values in per_seed.iterrows():
            values = values.dropna()
            curve[int(layer)] = Estimate(values.mean(), 0.0 if len(values) < 2 else values.std())
        return curve

    def tasks(self) -> list[str]:
        found = self.frame[self.frame["model"] == "finetuned"]["task"]
        return sorted(t for t in found.unique() if t)


def _peak(curve: Mapping[int, Estimate]) -> int:
    return max(curve, key=lambda layer: curve[layer].value)


def check_muller_peak_middle(claim: Claim, run: Run, evidence: Evidence) -> None:
    similarity = Similarity(run.get("muller_similarity"))
    models = [("pretrained", "")] + [("finetuned", t) for t in similarity.tasks()]
    for model, task in models:
        curve = similarity.curve(model, task)
        if len(curve) < 3:
            continue
        best, first, last = _peak(curve), min(curve), max(curve)
        name = f"{model} {task}".strip()
        evidence.record(f"{name}: peak layer", best)
        evidence.record(f"{name}: peak CKA", curve[best])
        evidence.check(f"{name}: peak L{best} in the middle", _middle(best, last))
        evidence.require(f"{name}: peak - L{first}", curve[best] - curve[first], record=False)
        evidence.require(f"{name}: peak - L{last}", curve[best] - curve[last], record=False)


def check_muller_finetuning_preserves(claim: Claim, run: Run, evidence: Evidence) -> None:
    similarity = Similarity(run.get("muller_similarity"))
    pretrained = similarity.curve("pretrained")
    if not pretrained:
        raise NotComputed("no CKA of the pretrained model")
    peak = _peak(pretrained)
    evidence.record("pretrained: peak layer", peak)
    for task in similarity.tasks():
        curve = similarity.curve("finetuned", task)
        if not curve:
            continue
        best = _peak(curve)
        evidence.record(f"finetuned {task}: peak layer", best)
        evidence.check(
            f"finetuned {task}: peak within 2 layers of the pretrained one", abs(best - peak) <= 2
        )
        evidence.require(
            f"finetuned {task}: peak CKA - pretrained peak + {claim.tolerance:g}",
            curve[best] - pretrained[peak] + claim.tolerance,
        )


def check_muller_random_init_similarity(claim: Claim, run: Run, evidence: Evidence) -> None:
    similarity = Similarity(run.get("muller_similarity"))
    frame = similarity.frame
    groups = {g: layers for g in frame["group"].unique() if (layers := group_layers(g)) is not None}
    if not groups:
        raise NotComputed("no CKA of a model with RANDOM-INIT layers")
    last = int(pd.to_numeric(frame["layer"]).max())  # the layers measured: 0 .. L
    lower = sorted(g for g, layers in groups.items() if max(layers) <= last / 3)
    for task in similarity.tasks():
        ref = similarity.curve("finetuned", task)
        for group in lower:
            ablated = similarity.curve("finetuned", task, group)
            layers = sorted(ref.keys() & ablated.keys())
            if not layers:
                continue
            difference = mean([ref[layer] - ablated[layer] for layer in layers])
            evidence.require(f"{task}: ref - RANDOM-INIT {group} CKA, mean over layers", difference)


def cross_language_gaps(scores: Scores, task: str) -> dict[tuple[str, str], float]:
    """(source, target) -> same-language test score of the source minus the target's, in points
    (ref models of the transfer experiment, means over seeds)."""
    gaps = {}
    for run_task, source in scores.runs("transfer"):
        if run_task != task:
            continue
        same = scores.get("transfer", task, source, REF, source)
        if same is None:
            continue
        for evaluation in scores.evaluations("transfer", task, source):
            target = scores.get("transfer", task, source, REF, evaluation)
            if evaluation != source and target is not None:
                gaps[(source, evaluation)] = (same - target).value
    return gaps


def layer_averaged_similarity(similarity: Similarity, model: str, task: str) -> dict:
    """(source, target) -> CKA averaged over layers and seeds."""
    rows = similarity.rows(model, task if model == "finetuned" else "")
    return rows.groupby(["source", "target"])["cka"].mean().to_dict()


def check_muller_spearman(claim: Claim, run: Run, evidence: Evidence) -> None:
    from scipy.stats import spearmanr

    scores = Scores(run.get("muller_scores"))
    similarity = Similarity(run.get("muller_similarity"))
    for task in sorted({task for task, _ in scores.runs("transfer")}):
        gaps = cross_language_gaps(scores, task)
        for model in ("finetuned", "pretrained"):
            cka = layer_averaged_similarity(similarity, model, task)
            keys = sorted(gaps.keys() & cka.keys())
            if len(keys) < 3:
                continue
            x = [cka[k] for k in keys]
            y = [gaps[k] for k in keys]
            if len(set(x)) < 2 or len(set(y)) < 2:
                continue
            rho, p = spearmanr(x, y)
            name = f"{task} {model}"
            evidence.record(f"{name}: Spearman rho (n={len(keys)})", rho)
            evidence.record(f"{name}: p", p)
            evidence.check(f"{name}: rho negative", rho < 0)
            evidence.check(f"{name}: p below {claim.tolerance:g}", p < claim.tolerance)
    if evidence.conditions == 0:
        raise NotComputed("fewer than 3 (source, target) pairs with both a gap and a similarity")


# --------------------------------------------------------------------------- the list
CLAIMS: tuple[Claim, ...] = (
    Claim(
        "wu-4.1-domain", WU, "§4.1", "Domain mismatch costs little",
        "The first group in Tab. 1 shows domain mismatch has a relatively modest effect on "
        "performance. XNLI and parsing performance drop around 2 points while NER drops over 6 "
        "points for all languages on average.",
        "for every task, Default - Wiki-CC (mean over the targets both computed) is at most 7 "
        "points (the paper: 1.4 XNLI, 6.3 NER, 2.5 parsing)",
        ("table1",), check_domain, tolerance=7.0,
    ),
    Claim(
        "wu-4.2-no-anchors", WU, "§4.2", "No anchors costs about a point",
        "However, surprisingly, effective transfer is still possible with no anchor points. "
        "Comparing no anchors and default anchors, the performance of XNLI and parsing drops only "
        "around 1 point while NER drops over 2 points averaging over three languages.",
        "for every task, Default anchors - No anchors (mean over the targets) is at most 3 points "
        "(the paper: 1.2 XNLI, 2.5 NER, 0.9 parsing)",
        ("table1",), check_no_anchors, tolerance=3.0,
    ),
    Claim(
        "wu-4.2-extra-anchors-distant", WU, "§4.2", "Extra anchors help distant pairs most",
        "Anchor points have a clear effect on performance and more anchor points help, especially "
        "in the less closely related language pairs (e.g. English-Chinese has a larger effect than "
        "English-French with over 3 points improvement on NER and XNLI).",
        "for XNLI and NER, Extra anchors - Default on the most distant target (zh) is positive and "
        "larger than on the closest (fr) (the paper: XNLI +3.8 vs +0.4, NER +3.2 vs -3.7)",
        ("table1",), check_extra_anchors,
    ),
    Claim(
        "wu-4.3-sep-emb-vs-no-anchors", WU, "§4.3", "Sep Emb drops more than No anchors",
        "Sep Emb (effectively no anchor point) drops more than No anchors with 3 points on XNLI "
        "and around 1 point on NER and parsing, suggesting have a cross-language softmax layer "
        "also helps to learn cross-lingual representation.",
        "for every task, No anchors - Sep Emb (mean over the targets) is positive (the paper: 3.4 "
        "XNLI, 1.6 NER, 0.9 parsing)",
        ("table1",), check_sep_emb_below_no_anchors,
    ),
    Claim(
        "wu-4.3-sep-emb-l1-6-chance", WU, "§4.3", "Sep Emb + L1-6 falls to chance",
        "Most notably, the cross-lingual transfer performance drops to random when separating "
        "embeddings and bottom 6 layers of the transformer.",
        "for every task, Sep Emb + L1-6 keeps at most 0.4 of Default's score above chance "
        "(chance: 33.3 XNLI, 0 NER and parsing; the paper keeps 0.20, 0.31, 0.37)",
        ("table1",), check_sep_emb_l1_6_chance, tolerance=0.4,
    ),
    Claim(
        "wu-4.3-sep-l1-3-reasonable", WU, "§4.3", "Sep L1-3 keeps reasonable transfer",
        "However, reasonably strong levels of transfer are still possible without tying the "
        "bottom three layers.",
        "for every task, Sep L1-3 keeps at least 0.75 of Default's score above chance (the paper "
        "keeps 0.91 XNLI, 0.92 NER, 0.95 parsing)",
        ("table1",), check_sep_l1_3_reasonable, tolerance=0.75,
    ),
    Claim(
        "wu-4.3-fewer-shared-layers", WU, "§4.3", "Fewer shared layers, lower transfer",
        "Performance degrades as fewer layers are shared for all pairs, and again the less "
        "closely related language pairs lose the most.",
        "for every task and target, Default >= Sep L1-3 >= Sep L1-6 and Sep Emb >= Sep Emb + L1-3 "
        ">= Sep Emb + L1-6, each step allowed to rise by at most 1 point, and each chain's last "
        "row below its first (holds in every cell of the paper's table)",
        ("table1",), check_fewer_shared_layers, tolerance=1.0,
    ),
    Claim(
        "wu-4.4-distance", WU, "§4.4", "Transfer falls with language distance",
        "Looking at Tab. 1 column by column in each task, we observe performance drops as "
        "language pairs become more distantly related.",
        "for every task, the closest target (fr) scores above the most distant (zh), averaged "
        "over the rows that computed both",
        ("table1",), check_distance,
    ),
    Claim(
        "wu-4.4-distant-lose-most", WU, "§4.3, §4.4", "Distant pairs lose most",
        "Performance degrades as fewer layers are shared for all pairs, and again the less "
        "closely related language pairs lose the most.",
        "for every task, the parameter-sharing rows lose more against Default on the most distant "
        "target (zh) than on the closest (fr), averaged over those rows",
        ("table1",), check_distant_lose_most,
    ),
    Claim(
        "wu-4.5-summary", WU, "§4.5", "Parameter sharing matters most",
        "Summarised by Figure 3, parameter sharing is the most important factor. More anchor "
        "points help but anchor points and shared softmax projection parameters are not "
        "necessary. Joint BPE and domain similarity contribute a little in learning cross-lingual "
        "representation.",
        "averaged over tasks, the largest drop from Default among the parameter-sharing rows "
        "exceeds the drop of every domain and anchor row, and none of those drops more than 7 "
        "points",
        ("table1",), check_sharing_matters_most, tolerance=7.0,
    ),
    Claim(
        "wu-5.1-mapped-beats-unmapped", WU, "§5.1.1, §5.1.4", "Mapped spaces align",
        "These findings demonstrate that both word-level, contextual word-level, and "
        "sentence-level BERT representations can be aligned with a simple orthogonal mapping.",
        "for every pair, word translation P@1 after the Procrustes map beats the unmapped P@1 by "
        "more than 0.05, for the embedding matrices and for the best contextual layer",
        ("wu_figure4",), check_mapped_beats_unmapped, tolerance=0.05,
    ),
    Claim(
        "wu-5.1.1-embeddings-vs-fasttext", WU, "§5.1.1", "BERT embeddings align like fastText",
        "Figure 4a shows that the subword embeddings matrix of BERT, where each subword is a "
        "standalone word, can easily be aligned with an orthogonal mapping and obtain slightly "
        "better performance than the same subset of fastText.",
        "for every pair, mapped P@1 of the embedding matrices exceeds mapped fastText P@1",
        ("wu_figure4",), check_bert_vs_fasttext,
    ),
    Claim(
        "wu-5.1.1-higher-layers", WU, "§5.1.1", "Higher layers translate words better",
        "We notice that using contextual representations from higher layers obtain better "
        "results compared to lower layers.",
        "for every pair, mapped P@1 averaged over the upper half of the layers exceeds that over "
        "the lower half",
        ("wu_figure4",), check_higher_layers_words,
    ),
    Claim(
        "wu-5.1.2-middle-layers", WU, "§5.1.2", "Middle layers best for contextual transfer",
        "We also observe that the model obtains the highest transfer performance with the middle "
        "layer representation alignment, and not the last layers.",
        "for every pair and task, MLM align (Figure 5) peaks at a layer between L/4 and 3L/4 and "
        "its peak beats the last layer",
        ("wu_figure5",), check_middle_layers_transfer,
    ),
    Claim(
        "wu-5.1.2-bimlm-better", WU, "§5.1.2", "Bilingual MLM beats aligned monolingual models",
        "We show that aligning monolingual models (MLM align) obtain relatively good performance "
        "even though they perform worse than bilingual MLM (except for parsing on "
        "English-French).",
        "for every pair and task but parsing en-fr, the best layer of biMLM beats the best layer "
        "of MLM align",
        ("wu_figure5",), check_bimlm_better,
    ),
    Claim(
        "wu-5.1.3-lower-layers", WU, "§5.1.3", "Sentence retrieval best in lower layers",
        "Figure 6 shows the sentence similarity search results ... Here the best result is "
        "obtained at lower layers.",
        "for every pair and direction, Tatoeba P@1 peaks in the lower half of the layers "
        "(layer <= L/2)",
        ("wu_figure6",), check_sentences_lower_layers,
    ),
    Claim(
        "wu-5.2-similarity-order", WU, "§5.2", "Bilingual > monolingual > random CKA",
        "Figure 7 shows bilingual models have slightly higher similarity compared to monolingual "
        "models and random encoders serving as a lower bound.",
        "for every pair, CKA averaged over layers (Figure 7's AVER): bilingual > monolingual > "
        "random",
        ("wu_figure7",), check_similarity_order,
    ),
    Claim(
        "wu-5.2-early-layers", WU, "§5.2", "Early layers are the most similar",
        "For monolingual and bilingual models, the first few layers have the highest similarity, "
        "which explains why Wu and Dredze (2019) finds freezing bottom layers of mBERT helps "
        "cross-lingual transfer.",
        "for every pair, the monolingual and the bilingual CKA peak within the first third of "
        "the layers (L0 to L ceil(L/3))",
        ("wu_figure7",), check_early_layers,
    ),
    Claim(
        "wu-5.2-cka-retrieval", WU, "§5.2", "CKA tracks sentence retrieval (Pearson > 0.9)",
        "Because the measurement is also invariant to orthogonal mapping, the CKA similarity is "
        "highly correlated with the sentence-level alignment performance in Figure 6 with over "
        "0.9 Pearson correlation for all four languages pairs.",
        "for every pair with a defined correlation, Pearson r over layers between the "
        "monolingual models' CKA and Tatoeba P@1 exceeds 0.9",
        ("wu_cka_retrieval",), check_cka_retrieval, tolerance=0.9,
    ),
    Claim(
        "wu-5.2-gap-shrinks", WU, "§5.2", "Bilingual-monolingual gap shrinks with distance",
        "The similarity gap between monolingual model and bilingual model decrease as the "
        "languages pair become more distant.",
        "with pairs ordered en', fr, de, ru, zh, bilingual - monolingual average CKA rises by at "
        "most 0.02 from one pair to the next, and the closest pair's gap exceeds the most "
        "distant's",
        ("wu_figure7",), check_gap_shrinks, tolerance=0.02,
    ),
    Claim(
        "muller-4.1-lower-layers", MULLER, "§4.1", "Lower-layer RANDOM-INIT hurts cross-language",
        "For all tasks, we observe sharp drops in the cross-language performance at the lower "
        "layers of the model but only moderate drops in the same-language performance.",
        "for every task, source and RANDOM-INIT group within the bottom third of the layers, the "
        "cross-language test drop (mean over targets) exceeds the same-language drop by more than "
        "1 point (the paper, parsing 1-2 from English: 15.77 vs 0.96)",
        ("muller_scores",), check_muller_lower_layers, tolerance=1.0,
    ),
    Claim(
        "muller-4.1-upper-layers", MULLER, "§4.1", "Upper-layer RANDOM-INIT is harmless",
        "Furthermore, we show that applying RANDOM-INIT to the upper layers does not harm "
        "same-language and cross-language performances.",
        "for every task, source and RANDOM-INIT group above 3L/4, the same- and the "
        "cross-language test drops are at most 1.5 points (the paper's largest, Ar-X POS 11-12: "
        "1.29)",
        ("muller_scores",), check_muller_upper_layers, tolerance=1.5,
    ),
    Claim(
        "muller-4.1-domain", MULLER, "§4.1", "Not a domain effect",
        "We conclude that the pretrained parameters at the lower layers are consistently more "
        "critical for cross-language transfer than for same-language transfer, and cannot be "
        "explained by the possibly different domain of the evaluated datasets.",
        "in the domain experiment, RANDOM-INIT of the lowest group lowers every cross-language "
        "evaluation set more than every same-language set of another domain",
        ("muller_scores",), check_muller_domain,
    ),
    Claim(
        "muller-4.2-peak-middle", MULLER, "§4.2", "Similarity rises to a middle layer, then falls",
        "The cross-lingual similarity between the representations constantly increases up to "
        "layer 5 for all the three tasks ... From these layers forward, the similarity decreases.",
        "for the pretrained model and each fine-tuned task (reference models, CKA averaged over "
        "targets), the peak layer lies between L/4 and 3L/4 and the first and last layers lie "
        "below the peak",
        ("muller_similarity",), check_muller_peak_middle,
    ),
    Claim(
        "muller-4.2-finetuning-preserves", MULLER, "§4.2", "Fine-tuning preserves the alignment",
        "Interestingly, the same trend is also observed in the pretrained model, suggesting that "
        "the fine-tuning step preserves the multilingual alignment.",
        "for each fine-tuned task, the CKA peak lies within 2 layers of the pretrained model's "
        "and reaches at least the pretrained peak minus 0.05",
        ("muller_similarity",), check_muller_finetuning_preserves, tolerance=0.05,
    ),
    Claim(
        "muller-4.3-random-init-similarity", MULLER, "§4.3", "RANDOM-INIT of lower layers "
        "breaks the alignment",
        "As seen in Figure 2 ... when we randomly-initialize the lower part of the model, there "
        "is no alignment: the similarity between the source and target languages decreases.",
        "for each fine-tuned task and RANDOM-INIT group within the bottom third, CKA averaged "
        "over layers is below the reference model's",
        ("muller_similarity",), check_muller_random_init_similarity,
    ),
    Claim(
        "muller-4.3-spearman", MULLER, "§4.3", "Similarity correlates with the cross-lang gap",
        "We find that the cross-lingual similarity correlates significantly with the cross-lang "
        "gap for all three tasks, both on the fine-tuned and pretrained models.",
        "for every task and both models (fine-tuned on it, pretrained), Spearman rho between CKA "
        "averaged over layers and the cross-language gap (same-language minus target test score, "
        "reference models, mean over seeds) over the (source, target) pairs is negative with "
        "p < 0.05 (the paper prints |rho|, e.g. 0.76 for parsing fine-tuned)",
        ("muller_scores", "muller_similarity"), check_muller_spearman, tolerance=0.05,
    ),
)  # fmt: skip


# --------------------------------------------------------------------------- writing
README_BEGIN = "<!-- claims-summary:begin -->"
README_END = "<!-- claims-summary:end -->"


def counts(verdicts: Sequence[Verdict]) -> dict[str, int]:
    return {name: sum(v.verdict == name for v in verdicts) for name in VERDICTS}


def _format(value: float) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "undefined"
    return f"{value:g}" if isinstance(value, int) or float(value).is_integer() else f"{value:.4g}"


def to_markdown(verdicts: Sequence[Verdict], study: str = "") -> str:
    total = counts(verdicts)
    summary = ", ".join(f"{total[name]} {name}" for name in VERDICTS)
    title = "The papers' claims, checked against this run" + (f" ({study} study)" if study else "")
    lines = [
        f"# {title}",
        "",
        "Each claim is a sentence of Wu, Conneau et al. (2020) or Muller et al. (2021), a "
        "predicate over this run's numbers with its tolerance, and a verdict: `supported`, "
        "`not supported`, or `not computed` (an input or a row this run does not compute). With "
        "several seeds a comparison holds only beyond its spread. Written by "
        "`xling.report.claims`.",
        "",
        README_BEGIN,
        f"{len(verdicts)} claims: {summary}.",
        "",
        "| claim | paper | verdict |",
        "|---|---|---|",
    ]
    for v in verdicts:
        c = v.claim
        lines.append(f"| `{c.id}` {c.summary} | {c.paper} {c.section} | {v.verdict} |")
    lines += [README_END, "", "## Details", ""]
    for v in verdicts:
        c = v.claim
        lines += [
            f"### `{c.id}`: {v.verdict}",
            "",
            f"{c.paper}, {c.section}:",
            "",
            f"> {c.sentence}",
            "",
            f"Predicate: {c.predicate}.",
            "",
        ]
        if v.reason:
            lines += [f"Not computed: {v.reason}.", ""]
        if v.failed:
            lines += ["Fails: " + "; ".join(v.failed) + ".", ""]
        if v.numbers:
            lines += [f"* {name}: {_format(value)}" for name, value in v.numbers.items()] + [""]
    return "\n".join(lines)


def to_json(verdicts: Sequence[Verdict], study: str = "") -> str:
    document = {
        "study": study,
        "counts": counts(verdicts),
        "claims": [verdict.as_dict() for verdict in verdicts],
    }
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_claims(verdicts: Sequence[Verdict], md: str | Path, js: str | Path, study: str = ""):
    with atomic_open(md) as handle:
        handle.write(to_markdown(verdicts, study))
    with atomic_open(js) as handle:
        handle.write(to_json(verdicts, study))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m xling.report.claims results/demo``: check a finished run's claims."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("results", help="the study's results folder, e.g. results/demo")
    parser.add_argument("--english-prime", default="enp", help="en''s language code")
    args = parser.parse_args(argv)
    results = Path(args.results)
    run = Run.load(input_paths(results, {part for _, part in INPUTS.values()}), args.english_prime)
    verdicts = evaluate(run)
    write_claims(
        verdicts, results / "report/claims.md", results / "report/claims.json", results.name
    )
    print(", ".join(f"{n} {name}" for name, n in counts(verdicts).items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
