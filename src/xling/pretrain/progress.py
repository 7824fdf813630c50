"""Progress lines for the rule's log, the training curve (csv) and its plot."""

from __future__ import annotations

import csv
import io
import math
import sys
import time
from pathlib import Path
from typing import IO

import torch

from xling.base.atomic import atomic_open
from xling.jobs import joblog

CURVE_COLUMNS = [
    "step",
    "tokens",
    "lang",
    "train_loss",
    "dev_loss",
    "dev_ppl",
    "dev_acc",
    "lr",
    "elapsed_s",
]


def format_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


class Reporter:
    """Writes progress lines to stdout and, if given, appends them to a log file and to the job's
    history (:mod:`xling.jobs.joblog`)."""

    def __init__(
        self,
        log_file: str | Path | None = None,
        stream: IO[str] | None = None,
        history: Path | None = None,
    ):
        self.stream = stream or sys.stdout
        self.log_file = Path(log_file) if log_file else None
        if self.log_file:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
        self.history = history

    def __call__(self, message: str) -> None:
        print(message, file=self.stream, flush=True)
        for path in (self.log_file, self.history):
            if path:
                joblog.append(path, message)


class LossInterval:
    """Losses and timing of the steps since the last progress line.

    Losses accumulate on the device (no host sync per step). The sums are part of a checkpoint, so
    a resumed run logs the same interval means as an uninterrupted one.
    """

    def __init__(self, languages: int, device: torch.device):
        self.loss_sums = torch.zeros(languages, device=device)
        self.steps = [0] * languages
        self.restart_clock()

    def add(self, lang_index: int, loss: torch.Tensor) -> None:
        self.loss_sums[lang_index] += loss
        self.steps[lang_index] += 1

    def restart_clock(self) -> None:
        self.start, self.paused = time.monotonic(), 0.0

    def reset(self) -> None:
        self.loss_sums.zero_()
        self.steps = [0] * len(self.steps)
        self.restart_clock()

    def state_dict(self) -> dict:
        return {"loss_sums": self.loss_sums.cpu(), "steps": list(self.steps)}

    def load_state_dict(self, state: dict) -> None:
        self.loss_sums.copy_(state["loss_sums"])
        self.steps = list(state["steps"])


KILLED = "killed"  # an attempt that ended without a stop of its own: SIGKILL, a node's failure


class AttemptLog:
    """The attempts of a job so far, as ``summary.json``'s ``attempts`` lists them (a checkpoint
    keeps the list, :meth:`records`).

    An attempt is one run of the job's process, from the process's start (``started``, seconds
    since the epoch) to its stop or its end. Its record: ``first_step`` (the step it resumed at),
    ``last_step``, ``wall_seconds`` (process start to the end, or to the stop's checkpoint
    written), ``resume_seconds`` (process start to its first step trained: the imports, the data,
    the checkpoint), ``ended`` (``finished``, ``stopped by signal N``, ``stopped by another
    process's signal``, ``stopped M min before the job's time limit``, or ``killed``: gone without
    a stop of its own, some time after ``last_step``, then its last checkpoint's step),
    ``stop_seconds`` (stop request to checkpoint written), and its steady state: ``steady_steps``
    in ``steady_seconds`` of training, the steps after its first progress interval (the warm-up),
    without the pauses for evaluation and checkpoints.
    """

    def __init__(self, started: float, earlier: list[dict] | None = None, first_step: int = 0):
        self.started, self.first_step = started, first_step
        self.earlier = [dict(record) for record in earlier or []]
        for record in self.earlier:
            if record["ended"] is None:  # saved by a periodic checkpoint, never stopped
                record["ended"] = KILLED
        self.resume_seconds: float | None = None
        self.ended: str | None = None
        self.requested_at: float | None = None
        self.intervals, self.steady_steps, self.steady_seconds = 0, 0, 0.0

    @property
    def number(self) -> int:
        """This attempt's number, 1 for the first: one after those its checkpoint records."""
        return len(self.earlier) + 1

    def trained(self) -> bool:
        """Note that a step was trained; True for the first of this attempt."""
        if self.resume_seconds is not None:
            return False
        self.resume_seconds = round(time.time() - self.started, 3)
        return True

    def add_interval(self, steps: int, seconds: float) -> None:
        """A progress interval's steps and training seconds (its first: the warm-up, left out)."""
        self.intervals += 1
        if self.intervals > 1:
            self.steady_steps += steps
            self.steady_seconds += seconds

    def stop(self, ended: str, requested_at: float) -> None:
        self.ended, self.requested_at = ended, requested_at

    def records(self, step: int, ended: str | None = None) -> list[dict]:
        """Every attempt's record, this one's as of now at ``step`` (``ended``: how it ended, if
        not by :meth:`stop`; None while it runs)."""
        now = time.time()
        stop_seconds = None if self.requested_at is None else round(now - self.requested_at, 3)
        current = {
            "first_step": self.first_step,
            "last_step": step,
            "wall_seconds": round(now - self.started, 3),
            "resume_seconds": self.resume_seconds,
            "ended": ended or self.ended,
            "stop_seconds": stop_seconds,
            "steady_steps": self.steady_steps,
            "steady_seconds": round(self.steady_seconds, 6),
        }
        return [*self.earlier, current]

    def steady_rate(self) -> tuple[int, float] | None:
        """Steps and seconds of the last attempt with a steady state (this one's, else an
        earlier one's: a last attempt may train a step or none); None if none had one."""
        rates = [(r["steady_steps"], r["steady_seconds"]) for r in self.earlier]
        rates.append((self.steady_steps, self.steady_seconds))
        steady = [(steps, seconds) for steps, seconds in rates if steps and seconds > 0]
        return steady[-1] if steady else None


class Curve:
    """Rows of ``curve.csv`` keyed by (step, language): train and dev values of a step share one."""

    def __init__(self, rows: list[dict] | None = None):
        self.rows: dict[tuple[int, str], dict] = {}
        for row in rows or []:
            self.rows[(int(row["step"]), row["lang"])] = dict(row)

    def record(self, step: int, lang: str, **values) -> None:
        row = self.rows.setdefault((step, lang), {"step": step, "lang": lang})
        row.update(values)

    def to_list(self) -> list[dict]:
        return [dict(row) for row in self.rows.values()]

    def write_csv(self, path: str | Path) -> None:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CURVE_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in self.rows.values():
            writer.writerow({k: _format(row.get(k)) for k in CURVE_COLUMNS})
        with atomic_open(path) as handle:
            handle.write(buffer.getvalue())


def _format(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def read_curve(path: str | Path) -> list[dict]:
    """Rows of a curve csv with numbers parsed and empty cells as None."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != CURVE_COLUMNS:
            raise ValueError(
                f"{path}: header {reader.fieldnames} is not the curve header {CURVE_COLUMNS} "
                "(docs/contracts.md section 4); rerun the pretraining rule"
            )
        rows = []
        for line, row in enumerate(reader, start=2):
            try:
                rows.append(
                    {
                        k: (v if k == "lang" else (float(v) if v != "" else None))
                        for k, v in row.items()
                    }
                )
            except ValueError as error:
                raise ValueError(f"{path}, line {line}: {error}") from error
    return rows


def plot_curve(curve_csv: str | Path, out_png: str | Path, title: str | None = None) -> Path:
    """Plot train loss and dev perplexity per language against the step; written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_curve(curve_csv)
    figure, (train_axis, dev_axis) = plt.subplots(1, 2, figsize=(10, 4))
    for lang in sorted({r["lang"] for r in rows}):
        train = [
            (r["step"], r["train_loss"]) for r in rows if r["lang"] == lang and r["train_loss"]
        ]
        dev = [(r["step"], r["dev_ppl"]) for r in rows if r["lang"] == lang and r["dev_ppl"]]
        if train:
            train_axis.plot(*zip(*train, strict=True), label=lang, linewidth=1)
        if dev:
            dev_axis.plot(*zip(*dev, strict=True), marker="o", markersize=3, label=lang)
    train_axis.set(xlabel="step", ylabel="train MLM loss (nats)", title="training loss")
    dev_axis.set(xlabel="step", ylabel="dev perplexity", title="dev perplexity", yscale="log")
    for axis in (train_axis, dev_axis):
        axis.grid(alpha=0.3)
        if axis.lines:
            axis.legend()
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    with atomic_open(out_png, "wb") as handle:
        figure.savefig(handle, format="png", dpi=120)
    plt.close(figure)
    return Path(out_png)


def progress_line(
    *,
    step: int,
    total: int,
    lang_losses: dict[str, float],
    lr: float,
    tokens_per_second: float,
    elapsed: float,
    seconds_left: float,
    mfu: float | None = None,
) -> str:
    losses = " ".join(
        f"{lang} loss {loss:.3f} ppl {math.exp(min(loss, 700.0)):.1f}"
        for lang, loss in lang_losses.items()
    )
    parts = [
        f"step {step}/{total}",
        losses,
        f"lr {lr:.2e}",
        f"{tokens_per_second:,.0f} tok/s",
    ]
    if mfu is not None:
        parts.append(f"MFU {100 * mfu:.1f}%")
    parts += [f"elapsed {format_duration(elapsed)}", f"left {format_duration(seconds_left)}"]
    return " | ".join(parts)
