"""The claims machinery: verdicts, numbers with their spread over seeds, a run's inputs, and a
claim as data (see the package docstring for the rules a verdict follows)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

T = TypeVar("T")

SUPPORTED = "supported"
NOT_SUPPORTED = "not supported"
NOT_COMPUTED = "not computed"
VERDICTS = (SUPPORTED, NOT_SUPPORTED, NOT_COMPUTED)

WU = "Wu et al. 2020"
MULLER = "Muller et al. 2021"

# name -> (path under results/<study>/, the part of the study that writes it)
INPUTS = {
    "table1": ("tables/table1.csv", "table1"),
    "table1_resamples": ("tables/table1_resamples.csv", "table1"),
    "wu_figure4": ("figures/wu_figure4.csv", "section5"),
    "wu_figure4_resamples": ("figures/wu_figure4_resamples.csv", "section5"),
    "wu_figure5": ("figures/wu_figure5.csv", "section5"),
    "wu_figure5_resamples": ("figures/wu_figure5_resamples.csv", "section5"),
    "wu_figure6": ("figures/wu_figure6.csv", "section5"),
    "wu_figure6_resamples": ("figures/wu_figure6_resamples.csv", "section5"),
    "wu_figure7": ("figures/wu_figure7.csv", "section5"),
    "wu_figure7_resamples": ("figures/wu_figure7_resamples.csv", "section5"),
    "wu_figure8": ("figures/wu_figure8.csv", "section5"),
    "wu_figure8_resamples": ("figures/wu_figure8_resamples.csv", "section5"),
    "wu_cka_retrieval": ("tables/wu_cka_retrieval_pearson.csv", "section5"),
    "wu_cka_retrieval_resamples": ("tables/wu_cka_retrieval_resamples.csv", "section5"),
    "muller_scores": ("muller/scores.csv", "muller"),
    "muller_scores_resamples": ("muller/scores_resamples.csv", "muller"),
    "muller_similarity": ("muller/similarity.csv", "muller"),
    "muller_similarity_resamples": ("muller/similarity_resamples.csv", "muller"),
}


TEST_SETS, TEST_WORDS, PARALLEL = "the test sets", "the test words", "the parallel sentences"
# An input -> the input holding it on bootstrap resamples (xling.report.resamples), and what
# those draw: the test sets' examples, a dictionary's test words, or the parallel sentences a CKA
# is measured on.
RESAMPLED: dict[str, tuple[str, tuple[str, ...]]] = {
    "table1": ("table1_resamples", (TEST_SETS,)),
    "wu_figure4": ("wu_figure4_resamples", (TEST_WORDS,)),
    "wu_figure5": ("wu_figure5_resamples", (TEST_SETS,)),
    "wu_figure6": ("wu_figure6_resamples", (TEST_SETS,)),
    "wu_figure7": ("wu_figure7_resamples", (PARALLEL,)),
    "wu_figure8": ("wu_figure8_resamples", (TEST_SETS,)),
    "wu_cka_retrieval": ("wu_cka_retrieval_resamples", (PARALLEL, TEST_SETS)),
    "muller_scores": ("muller_scores_resamples", (TEST_SETS,)),
    "muller_similarity": ("muller_similarity_resamples", (PARALLEL,)),
}
# A claim over resampled inputs is supported only where it holds in this share of the resamples
# too: the one-standard-deviation level (P(Z > -1) = 0.84) of the rule for several seeds below.
RESAMPLE_SUPPORT = 0.84


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


def is_middle_layer(layer: int, last: int) -> bool:
    """Layer 0 is the embeddings, ``last`` the top: the middle half of the stack."""
    return last / 4 <= layer <= 3 * last / 4


class NotComputed(Exception):
    """The run lacks what a claim's predicate needs."""


@dataclass
class Evidence:
    """What a predicate compared: the numbers it used and the conditions that failed."""

    numbers: dict[str, float] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    conditions: int = 0
    # each required condition's margin (what must be positive), recorded or not: a failed one's
    # is the measured number that stops the claim
    margins: dict[str, float] = field(default_factory=dict)

    def record(self, name: str, value: Estimate | float) -> None:
        value = _estimate(value)
        self.numbers[name] = round(value.value, 4)
        if value.std > 0:
            self.numbers[f"{name} (std)"] = round(value.std, 4)

    def require(self, name: str, margin: Estimate, *, record: bool = True) -> None:
        """Condition ``name`` holds when ``margin`` is positive beyond its spread; an undefined
        margin (a missing or NaN input) makes the claim not computed, not "not supported"."""
        margin = _estimate(margin)
        if math.isnan(margin.value):
            raise NotComputed(f"{name}: undefined (a missing or NaN number)")
        if record:
            self.record(name, margin)
        self.margins[name] = round(margin.value, 4)
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
    # Muller et al.'s model depth L ("the bottom third", "above 3L/4"); None: the highest layer
    # of the RANDOM-INIT groups run
    muller_layers: int | None = None
    _replicates: dict[str, list[pd.DataFrame]] = field(default_factory=dict, repr=False)
    # (reader, id of a table) -> (the table, its reader): shared by a run and its resamples, so
    # that every claim reading one resample of a table parses it once (the claims job is the
    # demo's last job, alone on the machine: its 5,400 predicate calls are wall time)
    _views: dict[tuple[Callable, int], tuple[pd.DataFrame, Any]] = field(
        default_factory=dict, repr=False
    )
    # the run this one is a bootstrap resample of (None: the run itself); see with_control
    full: Run | None = field(default=None, repr=False)

    def get(self, name: str) -> pd.DataFrame | None:
        return self.tables.get(name)

    def view(self, name: str, reader: Callable[[pd.DataFrame], T]) -> T:
        """``reader(self.get(name))``, made once per table (``Scores``, ``Similarity``, ...)."""
        frame = self.get(name)
        known = self._views.get((reader, id(frame)))
        if known is not None and known[0] is frame:
            return known[1]
        parsed = reader(frame)
        self._views[(reader, id(frame))] = (frame, parsed)
        return parsed

    def with_control(self, name: str, holds: Callable[[pd.DataFrame], bool]) -> Run | None:
        """The run whose input ``name`` holds a claim's control (``holds(frame)``: a column, or
        rows of a control model): this one, else the run this one resamples, for a resamples file
        written before the control was (the control then keeps its value on all the sentences,
        the trained model's number alone facing the resample); None where neither holds it."""
        for run in (self, self.full):
            frame = None if run is None else run.get(name)
            if frame is not None and holds(frame):
                return run
        return None

    def resampled(self, needs: Iterable[str]) -> list[Run]:
        """This run once per bootstrap resample of the inputs of ``needs`` that have resamples
        (each such input replaced by one resample of it); empty when none of them has."""
        replaced = {name: self._replicates_of(name) for name in self.resampled_inputs(needs)}
        if not replaced:
            return []
        count = min(len(frames) for frames in replaced.values())
        return [
            Run(
                {**self.tables, **{n: f[i] for n, f in replaced.items()}},
                self.english_prime,
                self.muller_layers,
                _views=self._views,
                full=self,
            )
            for i in range(count)
        ]

    def resampled_inputs(self, needs: Iterable[str]) -> list[str]:
        """The inputs of ``needs`` for which this run has resamples."""
        return [name for name in needs if name in RESAMPLED and self._replicates_of(name)]

    def _replicates_of(self, name: str) -> list[pd.DataFrame]:
        from xling.base.bootstrap import split_replicates

        if name not in self._replicates:
            self._replicates[name] = split_replicates(self.get(RESAMPLED[name][0]))
        return self._replicates[name]

    @classmethod
    def load(
        cls,
        paths: Mapping[str, str | Path | None],
        english_prime: str = "enp",
        muller_layers: int | None = None,
    ) -> Run:
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
        return cls(tables, english_prime, muller_layers)


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
    # Inputs the predicate also reads where the run has them (a study without them still gets a
    # verdict on ``needs``); their resamples are drawn like those of ``needs``.
    optional: tuple[str, ...] = ()
    # A tolerance per task where the paper gives each task its own size ("XNLI and parsing drop
    # around 2 points while NER drops over 6"); ``tolerance`` for the others.
    task_tolerance: tuple[tuple[str, float], ...] = ()
    # What the trained model's number is held against where the claim is about what training
    # learned (a random encoder, a length-only feature); its numbers are among the verdict's,
    # named "... (control)". Empty: the claim has none.
    control: str = ""

    def tolerance_of(self, task: str) -> float:
        return dict(self.task_tolerance).get(task, self.tolerance)


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    verdict: str
    numbers: Mapping[str, float]
    failed: Sequence[str] = ()
    reason: str = ""
    margins: Mapping[str, float] = field(default_factory=dict)  # of the failed conditions

    def why(self) -> str:
        """What stops the claim, in a line: why it is not computed, or its first failed
        condition with that condition's margin (the measured number that must be positive, where
        the condition has one; a condition without names its measured layer or share itself)."""
        if self.verdict == NOT_COMPUTED:
            return self.reason
        if not self.failed:
            return ""
        first = self.failed[0]
        margin = self.margins.get(first)
        text = first + (f" = {margin:.4g}" if margin is not None else "")
        more = len(self.failed) - 1
        return text + (f" (and {more} more)" if more else "")

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
            "control": claim.control,
            "inputs": list(claim.needs),
            "verdict": self.verdict,
            "numbers": {  # an undefined number (NaN) is null: strict JSON has no NaN
                name: None if isinstance(value, float) and math.isnan(value) else value
                for name, value in self.numbers.items()
            },
            "failed": list(self.failed),
            "margins": dict(self.margins),
            "reason": self.reason,
        }


def evaluate_claim(claim: Claim, run: Run) -> Verdict:
    missing = [name for name in claim.needs if run.get(name) is None]
    if missing:
        return Verdict(claim, NOT_COMPUTED, {}, reason=f"not computed by this run: {missing}")
    evidence, not_computed = _check(claim, run)
    if not_computed:
        return Verdict(claim, NOT_COMPUTED, evidence.numbers, reason=not_computed)
    failed = list(evidence.failed)
    inputs = (*claim.needs, *claim.optional)
    resamples = run.resampled(inputs)
    if resamples:
        share = sum(_holds(claim, resample) for resample in resamples) / len(resamples)
        over = resampled_over(run.resampled_inputs(inputs))
        evidence.record(f"share of {len(resamples)} resamples of {over} where it holds", share)
        if not failed and share < RESAMPLE_SUPPORT:
            failed.append(
                f"holds in {share:.0%} of {len(resamples)} resamples of {over}, fewer than "
                f"{RESAMPLE_SUPPORT:.0%}: within the luck of the sentences (or words) measured"
            )
    verdict = NOT_SUPPORTED if failed else SUPPORTED
    margins = {name: evidence.margins[name] for name in failed if name in evidence.margins}
    return Verdict(claim, verdict, evidence.numbers, failed=tuple(failed), margins=margins)


def resampled_over(inputs: Iterable[str]) -> str:
    """What the resamples of ``inputs`` draw, in words: "the test sets and the parallel
    sentences"."""
    return " and ".join(dict.fromkeys(what for name in inputs for what in RESAMPLED[name][1]))


def _check(claim: Claim, run: Run) -> tuple[Evidence, str]:
    """The claim's predicate on ``run``: its evidence, and why it is not computed ("" if it is)."""
    evidence = Evidence()
    try:
        claim.check(claim, run, evidence)
    except NotComputed as error:
        return evidence, str(error) or "not computed"
    return evidence, "" if evidence.conditions else "nothing to compare"


def _holds(claim: Claim, run: Run) -> bool:
    evidence, not_computed = _check(claim, run)
    return not not_computed and not evidence.failed
