"""Muller et al. (2021): the predicates over ``muller/scores.csv`` and ``muller/similarity.csv``,
and the claims of the paper that use them."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from xling.analysis.cka import LENGTH
from xling.muller.collect import SELECTION_KEYS, best_grid_points
from xling.report.claims.core import (
    MULLER,
    Claim,
    Estimate,
    Evidence,
    NotComputed,
    Run,
    is_middle_layer,
    mean,
)

# --------------------------------------------------------------------------- Muller et al.
# scores.csv: experiment (transfer | domain), task, source, group (ref, or the RANDOM-INIT group:
# "1-2", "0-1", "all", ...; layers 1-based, 0 = embeddings), seed, evaluation (target language in
# transfer; a named set in domain), lang, split (dev | test), score (fraction), hp_id.
# similarity.csv: model (pretrained | finetuned), task (empty for pretrained), group, seed, source,
# target, layer (0..L), cka, cka_debiased, cka_length_controlled; and the rows of model ``length``.
REF = "ref"
# similarity.csv's length-only control, model LENGTH: one CKA per (source, target), the same at
# every layer, in ``cka``.


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
    standard deviation over seeds, in points, at the one grid point of each group that
    ``scores.csv`` is selected by (best mean source dev over the seeds)."""

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
        # built once per bootstrap resample of the scores: zip over columns, not iterrows
        spread = stats["std"].fillna(0.0)
        self.cells = {
            key: Estimate(100.0 * mean, 100.0 * std)
            for key, mean, std in zip(stats.index, stats["mean"], spread, strict=True)
        }
        columns = [frame[c] for c in ("experiment", "task", "source", "evaluation", "lang")]
        self.languages = {
            (experiment, task, source, evaluation): lang
            for experiment, task, source, evaluation, lang in zip(*columns, strict=True)
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
    """Keep, per (experiment, task, source, group), every seed's rows at the grid point
    (``hp_id``) that :func:`xling.muller.collect.best_grid_points` selects on the source-language
    dev scores, the rule ``scores.csv`` was written with; all rows of a group with one point or no
    dev score. Vectorized: the claims check builds this once per bootstrap resample of the
    scores."""
    if "hp_id" not in frame or frame["hp_id"].nunique(dropna=False) <= 1:
        return frame
    keys = list(SELECTION_KEYS)
    dev = frame[(frame["split"] == "dev") & (frame["lang"] == frame["source"])]
    best = best_grid_points(dev)
    chosen = pd.DataFrame([(*key, hp) for key, hp in best.items()], columns=[*keys, "best_hp_id"])
    merged = frame.merge(chosen, on=keys, how="left")
    keep = merged["best_hp_id"].isna() | (merged["hp_id"] == merged["best_hp_id"])
    return frame[keep.to_numpy()].reset_index(drop=True)


def _last_layer(groups: Mapping[str, set[int]], run: Run) -> int:
    """L: the model's depth where the run knows it, else the highest layer of the groups run (a
    study that runs no group of the top layers would otherwise shrink "the bottom third")."""
    if not groups:
        raise NotComputed("no RANDOM-INIT group with numbered layers")
    return run.muller_layers or max(max(layers) for layers in groups.values())


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
    scores = run.view("muller_scores", Scores)
    groups = scores.groups("transfer")
    last = _last_layer(groups, run)
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
    scores = run.view("muller_scores", Scores)
    groups = scores.groups("transfer")
    last = _last_layer(groups, run)
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
    scores = run.view("muller_scores", Scores)
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
        # every curve at once (built once per bootstrap resample): per seed the mean over the
        # (source, target) pairs, then mean and spread over seeds
        curve = ["model", "task", "group"]
        per_seed = frame.groupby([*curve, "seed", "layer"])["cka"].mean().dropna()
        stats = per_seed.groupby(level=[*curve, "layer"]).agg(["mean", "std", "count"])
        self.curves: dict[tuple[str, str, str], dict[int, Estimate]] = {}
        for (model, task, group, layer), value, std, count in zip(
            stats.index, stats["mean"], stats["std"], stats["count"], strict=True
        ):
            spread = 0.0 if count < 2 else float(std)
            self.curves.setdefault((model, task, group), {})[int(layer)] = Estimate(value, spread)
        pairs = frame.groupby([*curve, "source", "target"])["cka"].mean()
        self.pair_means: dict[tuple[str, str, str], dict[tuple[str, str], float]] = {}
        for (model, task, group, source, target), value in pairs.items():
            self.pair_means.setdefault((model, task, group), {})[(source, target)] = value

    def curve(self, model: str, task: str = "", group: str = REF) -> dict[int, Estimate]:
        return dict(self.curves.get((model, task, group), {}))

    def tasks(self) -> list[str]:
        found = self.frame[self.frame["model"] == "finetuned"]["task"]
        return sorted(t for t in found.unique() if t)

    def control(self) -> dict[tuple[str, str], float]:
        """(source, target) -> the length-only control's CKA; empty where the file has none."""
        rows = self.frame[self.frame["model"] == LENGTH]
        return rows.groupby(["source", "target"])["cka"].mean().dropna().to_dict()

    def pair_layers(self, model: str, task: str = "", group: str = REF) -> pd.DataFrame:
        """(source, target) x layer: one model's CKA per pair and layer, mean over seeds."""
        frame = self.frame
        rows = frame[(frame["model"] == model) & (frame["task"] == task)]
        rows = rows[rows["group"] == group]
        table = rows.groupby(["source", "target", "layer"])["cka"].mean().unstack("layer")
        return table.sort_index(axis=1)


def _peak(curve: Mapping[int, Estimate]) -> int:
    return max(curve, key=lambda layer: curve[layer].value)


def check_muller_peak_middle(claim: Claim, run: Run, evidence: Evidence) -> None:
    similarity = run.view("muller_similarity", Similarity)
    models = [("pretrained", "")] + [("finetuned", t) for t in similarity.tasks()]
    control = _length_control(run)
    for model, task in models:
        curve = similarity.curve(model, task)
        if len(curve) < 3:
            continue
        best, first, last = _peak(curve), min(curve), max(curve)
        name = f"{model} {task}".strip()
        evidence.record(f"{name}: peak layer", best)
        evidence.record(f"{name}: peak CKA", curve[best])
        if control:
            length = _control_of(similarity, control, model, task)
            evidence.record(f"{name}: length-only CKA (control)", length)
        evidence.check(f"{name}: peak L{best} in the middle", is_middle_layer(best, last))
        evidence.require(f"{name}: peak - L{first}", curve[best] - curve[first], record=False)
        evidence.require(f"{name}: peak - L{last}", curve[best] - curve[last], record=False)


def _length_control(run: Run) -> dict[tuple[str, str], float]:
    """The length-only control of similarity.csv by (source, target); empty without one."""
    holder = run.with_control("muller_similarity", lambda frame: (frame["model"] == LENGTH).any())
    return {} if holder is None else holder.view("muller_similarity", Similarity).control()


def _control_of(
    similarity: Similarity, control: Mapping[tuple[str, str], float], model: str, task: str = ""
) -> float:
    """The control averaged over the (source, target) pairs a model's curve averages."""
    pairs = layer_averaged_similarity(similarity, model, task)
    values = [control[pair] for pair in pairs if pair in control]
    return sum(values) / len(values) if values else float("nan")


def peak_reach(last: int) -> int:
    """How many layers apart two peaks may lie and be "the same trend": 2 of mBERT's 12 (L/6),
    at least 1."""
    return max(1, round(last / 6))


def check_muller_finetuning_preserves(claim: Claim, run: Run, evidence: Evidence) -> None:
    similarity = run.view("muller_similarity", Similarity)
    # the Transformer layers: the embeddings' CKA is the same before and after fine-tuning
    pretrained = {k: v for k, v in similarity.curve("pretrained").items() if k > 0}
    if not pretrained:
        raise NotComputed("no CKA of the pretrained model's Transformer layers (1..L)")
    peak, reach = _peak(pretrained), peak_reach(max(pretrained))
    evidence.record("pretrained: peak layer of L1-L" + str(max(pretrained)), peak)
    evidence.record("pretrained: peak CKA", pretrained[peak])
    control = _length_control(run)
    if control:
        length = _control_of(similarity, control, "pretrained")
        evidence.record("pretrained: length-only CKA (control)", length)
        evidence.require("pretrained: peak CKA - length-only CKA", pretrained[peak] - length)
    for task in similarity.tasks():
        curve = {k: v for k, v in similarity.curve("finetuned", task).items() if k > 0}
        if not curve:
            continue
        best = _peak(curve)
        evidence.record(f"finetuned {task}: peak layer", best)
        evidence.record(f"finetuned {task}: peak CKA", curve[best])
        evidence.check(
            f"finetuned {task}: peak L{best} within {reach} of the pretrained L{peak}",
            abs(best - peak) <= reach,
        )
        evidence.require(
            f"finetuned {task}: peak CKA - pretrained peak + {claim.tolerance:g}",
            curve[best] - pretrained[peak] + claim.tolerance,
            record=False,
        )
        if control:
            length = _control_of(similarity, control, "finetuned", task)
            evidence.record(f"finetuned {task}: length-only CKA (control)", length)
            evidence.require(f"finetuned {task}: peak CKA - length-only CKA", curve[best] - length)


def check_muller_random_init_similarity(claim: Claim, run: Run, evidence: Evidence) -> None:
    similarity = run.view("muller_similarity", Similarity)
    frame = similarity.frame
    groups = {g: layers for g in frame["group"].unique() if (layers := group_layers(g)) is not None}
    if not groups:
        raise NotComputed("no CKA of a model with RANDOM-INIT layers")
    last = int(pd.to_numeric(frame["layer"]).max())  # the layers measured: 0 .. L
    lower = sorted(g for g, layers in groups.items() if max(layers) <= last / 3)
    for task in similarity.tasks():
        ref = similarity.curve("finetuned", task)
        for group in lower:
            pairs = [
                set(similarity.pair_means.get(("finetuned", task, g), {})) for g in (REF, group)
            ]
            if pairs[0] != pairs[1]:  # each curve is a mean over its own pairs
                raise NotComputed(
                    f"{task}: the reference and RANDOM-INIT {group} were measured on different "
                    "(source, target) pairs"
                )
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
    return dict(similarity.pair_means.get((model, task if model == "finetuned" else "", REF), {}))


def check_muller_spearman(claim: Claim, run: Run, evidence: Evidence) -> None:
    from xling.analysis.spearman import spearman

    scores = run.view("muller_scores", Scores)
    similarity = run.view("muller_similarity", Similarity)
    control = _length_control(run)
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
            rho, p = spearman(x, y)
            name = f"{task} {model}"
            evidence.record(f"{name}: Spearman rho (n={len(keys)})", rho)
            evidence.record(f"{name}: p", p)
            length = _control_rho(control, keys, y)
            if length is not None:
                evidence.record(f"{task}: length-only CKA's Spearman rho (control)", length)
            if smallest_p(len(keys)) >= claim.tolerance:
                continue  # no order of so few pairs is significant: not a test of the claim
            evidence.check(f"{name}: rho negative", rho < 0)
            evidence.check(f"{name}: p below {claim.tolerance:g}", p < claim.tolerance)
    if evidence.conditions == 0:
        raise too_few_pairs(claim, "a similarity")


def check_muller_middle_layer_correlates(claim: Claim, run: Run, evidence: Evidence) -> None:
    from xling.analysis.spearman import spearman

    scores = run.view("muller_scores", Scores)
    similarity = run.view("muller_similarity", Similarity)
    table = similarity.pair_layers("pretrained")
    control = _length_control(run)
    for task in sorted({task for task, _ in scores.runs("transfer")}):
        gaps = cross_language_gaps(scores, task)
        keys = sorted(gaps.keys() & set(table.index))
        if len(keys) < 3 or smallest_p(len(keys)) >= claim.tolerance:
            continue  # no order of so few pairs is significant: not a test of the claim
        y = [gaps[key] for key in keys]
        rhos = {}
        for layer in table.columns:
            x = table.loc[keys, layer].to_numpy()
            if not any(math.isnan(v) for v in x):
                rhos[int(layer)] = spearman(x, y)
        defined = {layer: rho for layer, rho in rhos.items() if not math.isnan(rho[0])}
        if not defined:
            continue
        best = min(defined, key=lambda layer: defined[layer][0])
        rho, p = defined[best]
        name = f"{task} pretrained"
        evidence.record(f"{name}: most correlated layer (n={len(keys)})", best)
        evidence.record(f"{name}: Spearman rho at L{best}", rho)
        evidence.record(f"{name}: p at L{best}", p)
        last = int(max(table.columns))
        evidence.check(f"{name}: L{best} in the middle", is_middle_layer(best, last))
        evidence.check(f"{name}: rho at L{best} negative", rho < 0)
        evidence.check(f"{name}: p at L{best} below {claim.tolerance:g}", p < claim.tolerance)
        length = _control_rho(control, keys, y)
        if length is not None:
            evidence.record(f"{name}: length-only CKA's Spearman rho (control)", length)
            evidence.check(f"{name}: rho at L{best} below the length-only CKA's", rho < length)
    if evidence.conditions == 0:
        raise too_few_pairs(claim, "a per-layer similarity of the pretrained model")


def _control_rho(
    control: Mapping[tuple[str, str], float], keys: list, gaps: list[float]
) -> float | None:
    """Spearman rho of the length-only control's CKA against the gaps over ``keys``; None where
    the control lacks a pair, 0 where it is the same for every pair (it orders nothing)."""
    from xling.analysis.spearman import spearman

    if not keys or not all(key in control for key in keys):
        return None
    rho, _ = spearman([control[key] for key in keys], gaps)
    return 0.0 if math.isnan(rho) else rho


def too_few_pairs(claim: Claim, similarity: str) -> NotComputed:
    """Why a Spearman claim is not computed: fewer pairs with a gap and ``similarity`` than any
    order of which could reach p below the claim's tolerance."""
    needed = next(n for n in range(3, 20) if smallest_p(n) < claim.tolerance)
    return NotComputed(
        f"fewer than {needed} (source, target) pairs with both a gap and {similarity}: with "
        f"fewer, not even a perfect order reaches p < {claim.tolerance:g} (the smallest exact "
        f"two-sided p of n pairs is 2/n!)"
    )


def smallest_p(n: int) -> float:
    """The smallest exact two-sided p-value of Spearman's rho over ``n`` pairs without ties: a
    perfect order, 2 of the n! orders."""
    return 2 / math.factorial(n)


MULLER_CLAIMS: tuple[Claim, ...] = (
    Claim(
        "muller-4.1-lower-layers", MULLER, "§4.1", "Lower-layer RANDOM-INIT hurts cross-language",
        "For all tasks, we observe sharp drops in the cross-language performance at the lower "
        "layers of the model but only moderate drops in the same-language performance.",
        "for every task, source and RANDOM-INIT group within the bottom third of the layers, the "
        "cross-language test drop (mean over targets) exceeds the same-language drop by more than "
        "0.5 points (the paper, parsing 1-2 from English: 15.77 vs 0.96; its smallest margin, POS "
        "layer 2 from English over Table 5's six targets: 1.21 vs 0.29)",
        ("muller_scores",), check_muller_lower_layers, tolerance=0.5,
    ),
    Claim(
        "muller-4.1-upper-layers", MULLER, "§4.1", "Upper-layer RANDOM-INIT is harmless",
        "Furthermore, we show that applying RANDOM-INIT to the upper layers does not harm "
        "same-language and cross-language performances.",
        "for every task, source and RANDOM-INIT group above 3L/4, the same- and the "
        "cross-language test drops are at most 2 points (the paper's largest, NER 10-12 from "
        "English over Table 5's six targets: 1.51; Ar-X POS 11-12: 1.29)",
        ("muller_scores",), check_muller_upper_layers, tolerance=2.0,
    ),
    Claim(
        "muller-4.1-domain", MULLER, "§4.1", "Not a domain effect",
        "We conclude that the pretrained parameters at the lower layers are consistently more "
        "critical for cross-language transfer than for same-language transfer, and cannot be "
        "explained by the possibly different domain of the evaluated datasets.",
        "in the domain experiment, RANDOM-INIT of the lowest group lowers every cross-language "
        "evaluation set more than every same-language set, in domain or not (the paper, parsing "
        "1-2: French -7.86 and -5.82, English -0.91 to -2.14)",
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
        control="the length-only CKA (a feature that knows each sentence's length only)",
    ),
    Claim(
        "muller-4.2-finetuning-preserves", MULLER, "§4.2", "Fine-tuning preserves the alignment",
        "Interestingly, the same trend is also observed in the pretrained model, suggesting that "
        "the fine-tuning step preserves the multilingual alignment.",
        "over the Transformer layers L1..L (the embeddings' output, L0, is the same before and "
        "after fine-tuning, and its CKA is mostly sentence length), each fine-tuned task's CKA "
        "peaks within L/6 layers (2 of mBERT's 12) of the pretrained model's peak, reaches at "
        "least the pretrained peak minus 0.05, and exceeds the length-only control's CKA (where "
        "similarity.csv has it)",
        ("muller_similarity",), check_muller_finetuning_preserves, tolerance=0.05,
        control="the length-only CKA (a feature that knows each sentence's length only)",
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
        "p < 0.05 (the paper prints |rho|, e.g. 0.76 for parsing fine-tuned); not computed with "
        "fewer than 5 pairs, where no order reaches p < 0.05",
        ("muller_scores", "muller_similarity"), check_muller_spearman, tolerance=0.05,
        control="the length-only CKA's Spearman rho over the same pairs",
    ),
    Claim(
        "muller-a2.1-middle-layer-correlates", MULLER, "§A.2.1", "A middle layer correlates most",
        "For the pretrained model, we observe the same distribution for each task with layer 6 "
        "being the most correlated to cross-lingual transfer.",
        "for every task, the pretrained model's layer whose CKA has the most negative Spearman "
        "rho with the cross-language gap over the (source, target) pairs lies between L/4 and "
        "3L/4 (layer 6 of mBERT's 12), with rho < 0 at p < 0.05, and below the rho of the "
        "length-only control's CKA (where similarity.csv has it); not computed with fewer than 5 "
        "pairs",
        ("muller_scores", "muller_similarity"), check_muller_middle_layer_correlates,
        tolerance=0.05, control="the length-only CKA's Spearman rho over the same pairs",
    ),
)  # fmt: skip
