"""Wu, Conneau et al. (2020), section 4: the predicates over Table 1's csv
(``xling.report.table1``). The claims that use them are in :mod:`xling.report.claims.wu`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise

import pandas as pd

from xling.papers.wu2020 import CHANCE, DISTANCE_ORDER, TASK_COLUMNS, WU_TASKS
from xling.report.claims.core import Claim, Estimate, Evidence, NotComputed, Run, exceeds, mean
from xling.report.table1 import AVERAGE, KEY, score_column


class Table1:
    """Table 1's csv (``xling.report.table1``): scores in percent by variant, task and target."""

    def __init__(self, frame: pd.DataFrame):
        if KEY not in frame:
            raise NotComputed(f"Table 1 has no {KEY!r} column")
        self.frame = frame.set_index(KEY)
        self._cells: dict[tuple[str, str, str], Estimate | None] = {}

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
        key = (variant, task, target)
        if key not in self._cells:  # the claims ask for each cell many times
            self._cells[key] = self._read_cell(variant, task, target)
        return self._cells[key]

    def _read_cell(self, variant: str, task: str, target: str) -> Estimate | None:
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


def distance_rank(label: str, english_prime: str = "enp") -> int | None:
    """Rank of a target (or pair) label from the closest language to English to the furthest."""
    lang = label.split("-")[-1]
    order = [english_prime if code == "enp" else code for code in DISTANCE_ORDER]
    return order.index(lang) if lang in order else None


def _nearest_and_furthest(labels: Sequence[str], english_prime: str = "enp") -> tuple[str, str]:
    ranked = sorted(
        (rank, label)
        for label in labels
        if (rank := distance_rank(label, english_prime)) is not None
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
    table = run.view("table1", Table1)
    for task, means in _tasks_with(table, [better, worse]):
        drop, tolerance = means[better] - means[worse], claim.tolerance_of(task)
        evidence.record(f"{task}: {better} - {worse}", drop)
        evidence.require(f"{task}: drop at most {tolerance:g}", tolerance - drop)


def check_domain(claim: Claim, run: Run, evidence: Evidence) -> None:
    _drop_at_most(claim, run, evidence, "default", "wiki_cc")


def check_no_anchors(claim: Claim, run: Run, evidence: Evidence) -> None:
    _drop_at_most(claim, run, evidence, "default_anchors", "no_anchors")


def check_extra_anchors(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = run.view("table1", Table1)
    found = False
    for task in ("xnli", "ner"):
        targets = table.common_targets(task, ["default", "extra_anchors"])
        if len({distance_rank(t) for t in targets} - {None}) < 2:
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
    table = run.view("table1", Table1)
    for task, means in _tasks_with(table, ["no_anchors", "sep_emb"]):
        evidence.require(f"{task}: no_anchors - sep_emb", means["no_anchors"] - means["sep_emb"])


# Points above chance Default must score on a task for a share of it to mean anything: where the
# reference itself does not transfer, there is nothing for an ablation to keep or lose.
MIN_TRANSFER = 5.0


def _retained(claim: Claim, run: Run, evidence: Evidence, variant: str, *, at_most: bool) -> None:
    """``variant`` keeps at most (or at least) ``tolerance`` of Default's score above chance."""
    table = run.view("table1", Table1)
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
    table = run.view("table1", Table1)
    for chain in SHARING_CHAINS:
        for task in WU_TASKS:
            for target in table.common_targets(task, chain):
                scores = [table.cell(v, task, target) for v in chain]
                for (a, b), (sa, sb) in zip(pairwise(chain), pairwise(scores), strict=True):
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


def check_distance(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = run.view("table1", Table1)
    for task in WU_TASKS:
        targets = _computed_targets(table, task, table.frame.index)
        if len({distance_rank(t) for t in targets}) < 2:
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
        if distance_rank(t) is not None and any(table.cell(v, task, t) for v in variants)
    ]


def check_distant_lose_most(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = run.view("table1", Table1)
    for task in WU_TASKS:
        targets = _computed_targets(table, task, ["default"])
        if len({distance_rank(t) for t in targets}) < 2:
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
    table = run.view("table1", Table1)

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
