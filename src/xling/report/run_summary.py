"""The headline numbers of one or more runs of a study, side by side, as a markdown table.

``python -m xling.report.run_summary results/demo other/results/demo`` prints one row per
number and one column per run: the claims supported, Figure 7's layers where the trained models
beat the random encoder and the random bound's range, the CKA-retrieval correlation, Tatoeba
retrieval, the bilingual models' masked-token accuracy, English XNLI dev, Table 1's Default row on
its first target and Muller et al.'s zero-shot reference scores. These are the numbers a change of
the demo's settings is weighed on (docs/notebook/demo_budget.md's tables); with
``xling.report.agreement`` and ``xling.report.seed_spread`` they compare two settings or seeds.
A number whose inputs the run lacks reads ``n/c``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from xling.papers.wu2020 import WU_TASKS
from xling.report.claims.core import INPUTS
from xling.report.table1 import KEY, score_column

NOT_COMPUTED = "n/c"
LAYER_PREFIX = "L"


class _Run:
    """A run's results folder; each of the claims check's inputs read once, since several
    numbers come from one file (Figure 7's three)."""

    def __init__(self, path: Path):
        self.path = path
        self._frames: dict[str, pd.DataFrame] = {}

    def csv(self, name: str) -> pd.DataFrame:
        """One of the claims check's inputs (:data:`INPUTS` names its path under the run)."""
        if name not in self._frames:
            self._frames[name] = pd.read_csv(self.path / INPUTS[name][0])
        return self._frames[name]


def _claims(run: _Run) -> str:
    claims = json.loads((run.path / "report/claims.json").read_text(encoding="utf-8"))["claims"]
    supported = sum(claim["verdict"] == "supported" for claim in claims)
    return f"{supported} of {len(claims)}"


def _figure7(run: _Run) -> pd.DataFrame:
    """Figure 7's own numbers (its ``cka`` rows, where the csv holds other measures too)."""
    frame = run.csv("wu_figure7")
    if "measure" in frame:
        frame = frame[frame["measure"] == "cka"]
    return frame.set_index(["pair", "encoder"])


def _above(encoder: str) -> Callable[[_Run], str]:
    def count(run: _Run) -> str:
        frame = _figure7(run)
        layers = [c for c in frame.columns if c.startswith(LAYER_PREFIX) and c[1:].isdigit()]
        pairs = frame.index.get_level_values("pair").unique()
        above = sum(
            int((frame.loc[(pair, encoder), layers] > frame.loc[(pair, "random"), layers]).sum())
            for pair in pairs
        )
        return f"{above} of {len(layers) * len(pairs)}"

    return count


def _span(values: pd.Series, digits: int = 2) -> str:
    return f"{values.min():.{digits}f} to {values.max():.{digits}f}"


def _random_bound(run: _Run) -> str:
    frame = _figure7(run)
    return _span(frame.xs("random", level="encoder")["AVER"])


def _pearson(run: _Run) -> str:
    return _span(run.csv("wu_cka_retrieval")["pearson_r"])


def _tatoeba(run: _Run) -> str:
    frame = run.csv("wu_figure6")
    best = frame.groupby("direction")["p_at_1"].max()
    return f"{_span(best)} (unmapped at most {frame['p_at_1_unmapped'].max():.3f})"


def _masked_accuracy(run: _Run) -> str:
    # Bilingual models live under pretrain/<src>-<tgt>/<variant>/; monolingual ones elsewhere.
    paths = sorted(run.path.glob("pretrain/*-*/*/summary.json"))
    if not paths:
        raise FileNotFoundError("pretrain/*-*/*/summary.json")
    values = [json.loads(p.read_text(encoding="utf-8"))["dev_acc"] for p in paths]
    return f"{sum(values) / len(values):.3f} ({len(values)} models)"


def _xnli_dev(run: _Run) -> str:
    paths = sorted(run.path.glob("finetune/*/*/xnli/selected.json"))
    if not paths:
        raise FileNotFoundError("finetune/*/*/xnli/selected.json")
    values = [json.loads(p.read_text(encoding="utf-8"))["dev"]["en"] for p in paths]
    mean = sum(values) / len(values)
    return f"{min(values):.2f} / {mean:.2f} / {max(values):.2f} ({len(values)} models)"


def _table1_default(run: _Run) -> str:
    frame = run.csv("table1").set_index(KEY)
    prefix = score_column(WU_TASKS[0], "")
    first = next(c for c in frame.columns if c.startswith(prefix)).removeprefix(prefix)
    cells = [frame.loc["default", score_column(task, first)] for task in WU_TASKS]
    return f"{first}: " + " / ".join(f"{cell:.1f}" for cell in cells)


def _muller_zero_shot(run: _Run) -> str:
    frame = pd.read_csv(run.path / "muller/tables/table1.csv")
    rows = frame[frame["row"] == "EN - X"]
    if rows.empty:
        raise KeyError("EN - X")
    # the group names the task and its metric: "Parsing (LAS)" -> "Parsing"
    return " / ".join(
        f"{group.split(' ')[0]} {ref:.1f}"
        for group, ref in zip(rows["group"], rows["Ref"], strict=True)
    )


# (label, how to read it); the order is the table's.
NUMBERS: list[tuple[str, Callable[[_Run], str]]] = [
    ("claims supported", _claims),
    ("Figure 7: layers, monolingual pair above the random encoder", _above("monolingual")),
    ("Figure 7: layers, bilingual model above the random encoder", _above("bilingual")),
    ("Figure 7: random bound, layer average, over the pairs", _random_bound),
    ("Pearson r of CKA and Tatoeba P@1, over the pairs", _pearson),
    ("Tatoeba P@1 after the map, best layer, over the directions", _tatoeba),
    ("dev masked-token accuracy, mean of the bilingual models", _masked_accuracy),
    ("English XNLI dev of Table 1's models: min / mean / max", _xnli_dev),
    ("Table 1 Default, first target: XNLI / NER / LAS", _table1_default),
    ("Muller et al., zero-shot from English without RANDOM-INIT (EN - X)", _muller_zero_shot),
]


def summarize(run: str | Path) -> dict[str, str]:
    """Label -> the number as printed, for one run's results folder (``results/<study>``)."""
    run = Path(run)
    if not run.is_dir():
        raise FileNotFoundError(f"{run}: no such folder; give a study's results folder")
    summary, files = {}, _Run(run)
    for label, read in NUMBERS:
        try:
            summary[label] = read(files)
        except (FileNotFoundError, KeyError, ValueError, StopIteration):
            summary[label] = NOT_COMPUTED  # the run lacks the input (e.g. `select` left it out)
    return summary


def to_markdown(runs: Sequence[str | Path]) -> str:
    summaries = [summarize(run) for run in runs]
    lines = ["| | " + " | ".join(str(run) for run in runs) + " |"]
    lines.append("|---|" + "---|" * len(runs))
    for label, _ in NUMBERS:
        lines.append(f"| {label} | " + " | ".join(s[label] for s in summaries) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="results folder of each run (results/<study>)")
    args = parser.parse_args(argv)
    print(to_markdown(args.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
