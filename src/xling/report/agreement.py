"""How far the claims' verdicts of several runs agree (e.g. the demo with two seeds).

``python -m xling.report.agreement results/demo/report/claims.json other/report/claims.json``
prints one line per claim whose verdict differs between the runs, then how many claims have the
same verdict in every run, and how many each run supports. ``--numbers`` adds, under each claim
that differs, the numbers behind its verdict in every run (as ``claims.md`` lists them), the
margins a report on the runs quotes. ``--markdown`` prints instead one table with every claim's
verdict in each run side by side, and the agreement under it (the demo's results page holds it).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path


def read_claims(path: str | Path) -> dict[str, dict]:
    """Claim id -> the claim as ``claims.json`` holds it; errors name the file and what is wrong."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        claims = {claim["id"]: claim for claim in document["claims"]}
        if any("verdict" not in claim for claim in claims.values()):
            raise KeyError("verdict")
        return claims
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path}: no such file; run the study's claims check first"
        ) from None
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(
            f"{path}: not a claims.json written by xling.report.claims ({error!r})"
        ) from None


def read_verdicts(path: str | Path) -> dict[str, str]:
    """Claim id -> verdict of one ``claims.json``; errors name the file and what is wrong."""
    return verdicts(read_claims(path))


def verdicts(claims: dict[str, dict]) -> dict[str, str]:
    """Claim id -> verdict, of the claims :func:`read_claims` gives."""
    return {claim: item["verdict"] for claim, item in claims.items()}


def numbers_side_by_side(claim: str, runs: Sequence[dict[str, dict]]) -> list[str]:
    """One line per number of ``claim``: its name, then its value in each run (``-`` where a run
    lacks it), in the order the runs list them."""
    tables = [run.get(claim, {}).get("numbers", {}) for run in runs]
    names = list(dict.fromkeys(name for table in tables for name in table))
    return [
        f"  {name}: " + " / ".join(_format(table.get(name)) for table in tables) for name in names
    ]


def _format(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def agreement(runs: Sequence[dict[str, str]]) -> tuple[list[str], list[str]]:
    """(claims with one verdict in every run, claims whose verdicts differ), in the first run's
    order; a claim missing from a run counts as differing."""
    same, differ = [], []
    for claim in runs[0]:
        verdicts = {run.get(claim) for run in runs}
        (same if len(verdicts) == 1 else differ).append(claim)
    return same, differ


def side_by_side(runs: Sequence[dict[str, str]], names: Sequence[str]) -> str:
    """A markdown table: one row per claim of the first run, its verdict in each run (named by
    ``names``), the rows that differ marked; then the count of claims with one verdict."""
    same, _ = agreement(runs)
    lines = [
        "| claim | " + " | ".join(names) + " | same |",
        "|---|" + "---|" * len(names) + "---|",
    ]
    for claim in runs[0]:
        verdicts = " | ".join(run.get(claim, "absent") for run in runs)
        lines.append(f"| `{claim}` | {verdicts} | {'yes' if claim in same else '**no**'} |")
    total = len(runs[0])
    lines += [
        "",
        f"Same verdict in every run: {len(same)} of {total} ({100 * len(same) / total:.0f} %).",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("claims", nargs="+", help="claims.json of each run (two or more)")
    parser.add_argument(
        "--numbers", action="store_true", help="the numbers of each claim that differs, per run"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="one table of every claim's verdicts, side by side"
    )
    parser.add_argument(
        "--names", nargs="+", help="a column name per run (default: the claims.json paths)"
    )
    args = parser.parse_args(argv)
    if len(args.claims) < 2:
        parser.error("give the claims.json of at least two runs")
    documents = [read_claims(path) for path in args.claims]
    runs = [verdicts(document) for document in documents]
    if args.markdown:
        names = args.names or args.claims
        if len(names) != len(runs):
            parser.error(f"--names: {len(names)} names for {len(runs)} runs")
        print(side_by_side(runs, names))
        return 0
    same, differ = agreement(runs)
    for claim in differ:
        print(f"{claim}: " + " / ".join(run.get(claim, "absent") for run in runs))
        if args.numbers:
            print("\n".join(numbers_side_by_side(claim, documents)))
    total = len(runs[0])
    print(f"same verdict in every run: {len(same)} of {total} ({100 * len(same) / total:.0f}%)")
    for path, run in zip(args.claims, runs, strict=True):
        supported = sum(verdict == "supported" for verdict in run.values())
        print(f"{path}: {supported} of {len(run)} supported")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
