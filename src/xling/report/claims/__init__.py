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

A claim over test scores (Table 1, Wu's Figures 4 to 6 and 8, the CKA-retrieval correlation,
Muller et al.'s scores) also faces the luck of the test sentences (or test words), and one over
a CKA (Wu's Figure 7, Muller et al.'s similarity) that of its parallel sentences: where the run
has the input's ``*_resamples.csv`` (the input recomputed on bootstrap resamples of its sentences,
the same draw for every row that reads them; :mod:`xling.report.resamples`; :data:`RESAMPLED`
pairs them and says what they draw), the predicate is evaluated on each
resample too, the share of resamples where it holds is among the claim's numbers, and the claim
is supported only where that share is at least 0.84 (:data:`RESAMPLE_SUPPORT`, the
one-standard-deviation level of the rule above). With one seed this is what keeps a verdict from
turning on a fraction of a point.

Inputs (each optional, by name; :data:`INPUTS` gives their paths under ``results/<study>/``):
Table 1's csv (``xling.report.table1``), the csvs behind Wu's Figures 4 to 8 and the CKA-retrieval
correlation table (``xling.report.wu_figures``), and Muller et al.'s ``muller/scores.csv`` and
``muller/similarity.csv``, each with its resamples. The claims of each paper live in
:mod:`xling.report.claims.wu` (its predicates in ``wu_table1`` for section 4 and ``wu_section5``)
and :mod:`xling.report.claims.muller`; the machinery in :mod:`xling.report.claims.core`.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path

from xling.base.atomic import atomic_open
from xling.report.claims.core import (
    INPUTS,
    MULLER,
    NOT_COMPUTED,
    NOT_SUPPORTED,
    RESAMPLE_SUPPORT,
    RESAMPLED,
    SUPPORTED,
    VERDICTS,
    WU,
    Claim,
    Estimate,
    Evidence,
    NotComputed,
    Run,
    Verdict,
    evaluate_claim,
    input_paths,
)
from xling.report.claims.muller import MULLER_CLAIMS, Scores, Similarity
from xling.report.claims.wu import WU_CLAIMS, Table1

CLAIMS: tuple[Claim, ...] = WU_CLAIMS + MULLER_CLAIMS

__all__ = [
    "CLAIMS", "INPUTS", "MULLER", "NOT_COMPUTED", "NOT_SUPPORTED", "RESAMPLED",
    "RESAMPLE_SUPPORT", "SUPPORTED", "VERDICTS", "WU",
    "Claim", "Estimate", "Evidence", "NotComputed", "Run", "Scores", "Similarity", "Table1",
    "Verdict", "evaluate", "evaluate_claim", "input_paths", "main", "write_claims",
]  # fmt: skip


def evaluate(run: Run, claims: Sequence[Claim] | None = None) -> list[Verdict]:
    return [evaluate_claim(claim, run) for claim in (CLAIMS if claims is None else claims)]


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
        "several seeds a comparison holds only beyond its spread; a claim over test scores "
        "(Table 1, Wu's Figures 4 to 6 and 8, Muller et al.'s scores) or over a CKA (Wu's "
        "Figure 7, Muller et al.'s similarity) must also hold in at least 84% of the bootstrap "
        "resamples of its test sets (test words, parallel sentences; the share, and what was "
        "resampled, are among its numbers). "
        "Written by `xling.report.claims`.",
        "",
        README_BEGIN,
        f"{len(verdicts)} claims: {summary}.",
        "",
        "| claim | paper | verdict | what stops it (the first failed condition = its margin) |",
        "|---|---|---|---|",
    ]
    for v in verdicts:
        c = v.claim
        why = v.why().replace("|", "/")
        lines.append(f"| `{c.id}` {c.summary} | {c.paper} {c.section} | {v.verdict} | {why} |")
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
        if c.control:
            lines += [f"Control: {c.control}; its numbers are marked (control).", ""]
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
