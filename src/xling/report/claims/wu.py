"""Wu, Conneau et al. (2020): the predicates over Table 1 (section 4) and over the csvs behind
Figures 4 to 8 (section 5), and the claims of the paper that use them."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence

import pandas as pd

from xling.papers.wu2020 import CHANCE, DISTANCE_ORDER, TASK_COLUMNS, WU_TASKS
from xling.report.claims.core import (
    WU,
    Claim,
    Estimate,
    Evidence,
    NotComputed,
    Run,
    exceeds,
    is_middle_layer,
    mean,
)
from xling.report.table1 import AVERAGE, KEY, score_column


# --------------------------------------------------------------------------- Table 1 (Wu §4)
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
    table = run.view("table1", Table1)
    for task, means in _tasks_with(table, [better, worse]):
        drop = means[better] - means[worse]
        evidence.record(f"{task}: {better} - {worse}", drop)
        evidence.require(f"{task}: drop at most {claim.tolerance:g}", claim.tolerance - drop)


def check_domain(claim: Claim, run: Run, evidence: Evidence) -> None:
    _drop_at_most(claim, run, evidence, "default", "wiki_cc")


def check_no_anchors(claim: Claim, run: Run, evidence: Evidence) -> None:
    _drop_at_most(claim, run, evidence, "default_anchors", "no_anchors")


def check_extra_anchors(claim: Claim, run: Run, evidence: Evidence) -> None:
    table = run.view("table1", Table1)
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
    table = run.view("table1", Table1)
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
    table = run.view("table1", Table1)
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


# --------------------------------------------------------------------------- Wu §5
def _layers(frame: pd.DataFrame) -> list[int]:
    return sorted(int(layer) for layer in pd.to_numeric(frame["layer"]).dropna().unique())


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
    _sentences_mapped_beat_unmapped(claim, run.get("wu_figure6"), evidence)


def _sentences_mapped_beat_unmapped(
    claim: Claim, frame: pd.DataFrame | None, evidence: Evidence
) -> None:
    """The sentence level of the claim, where Figure 6's table has the unmapped P@1."""
    if frame is None or "p_at_1_unmapped" not in frame:
        return
    for direction, rows in frame.groupby("direction", sort=False):
        best = rows.loc[rows["p_at_1"].idxmax()]
        evidence.record(f"{direction}: sentences L{int(best['layer'])}, mapped P@1", best["p_at_1"])
        evidence.record(f"{direction}: sentences, unmapped P@1", best["p_at_1_unmapped"])
        gain = best["p_at_1"] - best["p_at_1_unmapped"]
        evidence.require(
            f"{direction}: sentences, mapped - unmapped P@1 - {claim.tolerance:g}",
            Estimate(gain - claim.tolerance),
            record=False,
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
        evidence.check(
            f"{pair} {task}: best layer L{best} in the middle", is_middle_layer(best, last)
        )
        evidence.require(
            f"{pair} {task}: best - last layer", Estimate(curve[best] - curve[last]), record=False
        )


def check_bimlm_better(claim: Claim, run: Run, evidence: Evidence) -> None:
    frame = run.get("wu_figure5")
    aligned, bilingual = _curves(frame, "mlm_align"), _curves(frame, "bimlm")
    # In the figure's order: a set intersection would order the lines by string hash, which
    # changes between processes, and claims.md must be the same bytes for the same run.
    for key in (key for key in aligned if key in bilingual):
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


WU_CLAIMS: tuple[Claim, ...] = (
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
        "more than 0.05, for the embedding matrices and for the best contextual layer; and so "
        "does Tatoeba sentence retrieval at its best layer, in both directions (where Figure 6's "
        "table has the unmapped P@1)",
        ("wu_figure4",), check_mapped_beats_unmapped, tolerance=0.05, optional=("wu_figure6",),
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
)  # fmt: skip
