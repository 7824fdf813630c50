"""The pilot's report: what the pilot measured on the cluster, and the study forecast from it.

The pilot (``config/pilot.yaml``, docs/cluster.md step 4) trains one bilingual model at the paper's
shape over three attempts (a self-stop before the time limit, a stop by SLURM's early signal, a
resume to the end), fine-tunes one grid point per task and runs one Muller et al. run. This module
reads what those jobs wrote (the pretraining ``summary.json`` with its attempts, the fine-tuning
logs' epoch lines) and prices the study's own plan (:func:`xling.cluster.plan.read_plan`) with the
measured speeds instead of the FLOP model:

* pretraining: the measured seconds per optimizer step on the pilot's GPUs and layout, times each
  model's ``total_steps``; the attempts a model needs at ``runtime_minutes`` less the stop margin
  and the measured resume time, and one more for a failure;
* fine-tuning (Table 1 and Muller et al.): the measured seconds per training example of the task,
  times the examples a run of the study trains (epochs x examples per epoch), plus the run's
  measured time outside training (start, evaluation, writing); Muller et al.'s tasks all fine-tune
  mBERT at one input length, so the pilot's one Muller run prices each of them, and an epoch's
  examples come from the pilot's runs of the same training data (:func:`_muller_epoch`);
* every other job: the wall time the plan asks for (not measured; said so in the report).

Torch-free: the report job runs where Snakemake runs.
"""

from __future__ import annotations

import html
import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PRETRAIN_RULES = ("pretrain_model", "pretrain_monolingual", "pretrain_multilingual")
FINETUNE_RULES = ("finetune_run", "finetune_pack", "finetune_model")
MULLER_RULES = ("muller_finetune",)
# Concurrent GPUs the study's wall time is shown for, besides "every job at once".
GPU_POOLS = (8, 32, 128)
# The share of a GPU's memory a process may plan to use: the CUDA context, the allocator's
# fragmentation and NCCL's buffers take the rest.
MEMORY_HEADROOM = 0.9
EPOCH_LINE = re.compile(
    r"epoch (\d+)/(\d+): .*\((\d+) train examples in ([\d.]+) s, [\d.]+ train examples/s\)"
)
DONE_LINE = re.compile(r" done in ([\d.]+) s")


# --------------------------------------------------------------------------- measurements
@dataclass(frozen=True)
class Attempt:
    """One attempt of the pilot's pretraining job, as its summary records it."""

    number: int
    first_step: int  # the step it resumed at (0: it started the training)
    last_step: int
    ended: str  # "finished", "signal", "time limit"
    resume_seconds: float | None  # process start to the first trained step
    stop_seconds: float | None  # stop request to checkpoint written


@dataclass(frozen=True)
class PretrainMeasure:
    gpu: str
    processes: int
    layout: str
    global_batch: int
    seq_len: int
    tokens_per_s: float
    mfu: float | None
    peak_memory_gib: tuple[float, ...]
    gpu_memory_gib: float | None
    attempts: tuple[Attempt, ...]

    @property
    def seconds_per_step(self) -> float:
        return self.global_batch * self.seq_len / self.tokens_per_s

    @property
    def resume_minutes(self) -> float:
        """The longest time a resumed attempt took to reach its first step."""
        waits = [a.resume_seconds for a in self.attempts[1:] if a.resume_seconds is not None]
        return max(waits, default=0.0) / 60


@dataclass(frozen=True)
class RunMeasure:
    """One fine-tuning run of the pilot: its training examples and seconds over its ``epochs``,
    and its whole time."""

    task: str
    train_examples: int
    train_seconds: float
    total_seconds: float
    epochs: int = 1

    @property
    def examples_per_epoch(self) -> int:
        return self.train_examples // max(self.epochs, 1)

    @property
    def seconds_per_example(self) -> float:
        return self.train_seconds / max(self.train_examples, 1)

    @property
    def overhead_seconds(self) -> float:
        return max(self.total_seconds - self.train_seconds, 0.0)


def how_it_ended(ended: str) -> str:
    """An attempt's end as the summary words it ("stopped by signal 15 ...", "stopped 15 min
    before the job's time limit ...", "finished", "killed") in the report's three words."""
    if "signal" in ended:
        return "signal"
    if "time limit" in ended:
        return "time limit"
    return ended


def _steady_rate(summary: Mapping[str, Any], path: str | Path) -> float:
    if not summary.get("tokens_per_s"):
        raise ValueError(
            f"{path}: no steady-state tokens/s (the last attempt trained too few steps to time); "
            "raise pretrain.max_train_minutes in config/pilot.yaml and run the pilot again"
        )
    return float(summary["tokens_per_s"])


def read_pretrain(summary_path: str | Path) -> PretrainMeasure:
    """The pilot model's ``summary.json`` (xling.pretrain.summary) as measurements."""
    summary = json.loads(Path(summary_path).read_text(encoding="utf-8"))
    settings = summary["settings"]
    hardware = summary.get("hardware") or {}
    attempts = tuple(
        Attempt(
            number=i + 1,
            first_step=int(a["first_step"]),
            last_step=int(a["last_step"]),
            ended=how_it_ended(str(a["ended"])),
            resume_seconds=a.get("resume_seconds"),
            stop_seconds=a.get("stop_seconds"),
        )
        for i, a in enumerate(summary.get("attempts") or [])
    )
    peaks = tuple(p for p in hardware.get("peak_memory_gib") or [] if p is not None)
    return PretrainMeasure(
        gpu=" + ".join(sorted(set(hardware.get("gpus") or []))) or "cpu",
        processes=int(summary.get("world_size") or 1),
        layout=str(hardware.get("layout") or ""),
        global_batch=int(settings["world_size"]) * int(settings["batch_size"]),
        seq_len=int(settings["seq_len"]),
        tokens_per_s=_steady_rate(summary, summary_path),
        mfu=summary.get("mfu"),
        peak_memory_gib=peaks,
        gpu_memory_gib=hardware.get("memory_gib"),
        attempts=attempts,
    )


def read_run_log(task: str, log_path: str | Path) -> RunMeasure:
    """A fine-tuning run's log: its epoch lines (examples and seconds) and its "done in" line."""
    text = Path(log_path).read_text(encoding="utf-8", errors="replace")
    epochs = EPOCH_LINE.findall(text)
    done = DONE_LINE.findall(text)
    if not epochs or not done:
        raise ValueError(
            f"{log_path}: no epoch line with its examples and seconds, or no 'done in' line; the "
            "pilot reads them from a finished fine-tuning run's log (rerun that run)"
        )
    return RunMeasure(
        task=task,
        train_examples=sum(int(e[2]) for e in epochs),
        train_seconds=sum(float(e[3]) for e in epochs),
        total_seconds=float(done[-1]),
        epochs=len(epochs),
    )


# --------------------------------------------------------------------------- the forecast
@dataclass
class StageForecast:
    jobs: int = 0
    gpu_hours: float = 0.0  # from the pilot's measurements
    asked_gpu_hours: float = 0.0  # the plan's ask at the first attempt
    longest_hours: float = 0.0  # the longest job's wall time
    measured: bool = True


@dataclass
class Forecast:
    stages: dict[str, StageForecast] = field(default_factory=dict)
    model_hours: float = 0.0  # one pretraining model's training, wall
    attempts_needed: int = 0
    changes: list[str] = field(default_factory=list)

    @property
    def gpu_hours(self) -> float:
        return sum(s.gpu_hours for s in self.stages.values())

    def wall_hours(self, gpus: int | None = None) -> float:
        """The study's wall time with ``gpus`` GPUs busy at once (None: every job at once, so
        the longest chain: a model's attempts, then the longest fine-tuning job)."""
        chain = max(
            (s.longest_hours for name, s in self.stages.items() if name != "pretrain"),
            default=0.0,
        )
        pretrain = self.stages.get("pretrain")
        chain += pretrain.longest_hours if pretrain else 0.0
        if gpus is None:
            return chain
        return max(chain, self.gpu_hours / gpus)


@dataclass(frozen=True)
class StudyWork:
    """What one run of the study trains, from its config: ``pretrain`` (total_steps, runtime,
    stop margin, attempts) and, per (rule, task), the examples one run trains."""

    total_steps: int
    runtime_minutes: float
    stop_margin_minutes: float
    attempts: int
    examples_per_run: Mapping[tuple[str, str], int]


def study_work(config: Mapping[str, Any], examples_per_epoch: Mapping[str, int]) -> StudyWork:
    """The study's work: ``examples_per_epoch`` by task are the pilot's (the same English
    training sets; XNLI's epoch is its ``epoch_size``)."""
    pretrain = config["pretrain"]
    per_run: dict[tuple[str, str], int] = {}
    for task, section in config["tasks"].items():
        epoch = section.get("epoch_size") or examples_per_epoch.get(task, 0)
        per_run[("finetune", task)] = int(section["epochs"]) * int(epoch)
    for task, section in (config.get("muller") or {}).get("tasks", {}).items():
        epoch = _muller_epoch(examples_per_epoch, task)
        per_run[("muller", task)] = int(section["epochs"]) * int(epoch)
    return StudyWork(
        total_steps=int(pretrain["total_steps"]),
        runtime_minutes=float(pretrain["runtime_minutes"]),
        stop_margin_minutes=float(pretrain["stop_margin_minutes"]),
        attempts=int(pretrain["attempts"]),
        examples_per_run=per_run,
    )


# Muller et al.'s tasks that train on another task's data (A.1.2: POS and parsing read the same
# UD treebanks), so that the pilot's examples of one stand for the other's.
SAME_TRAINING = {"pos": "parsing", "parsing": "pos"}


def _muller_epoch(examples_per_epoch: Mapping[str, int], task: str) -> int:
    """Examples of one epoch of a Muller et al. task: the pilot's Muller run of it, or of the task
    with the same training data, or Table 1's run of it (the same English training set; NER's
    WikiANN), in that order."""
    same = SAME_TRAINING.get(task, task)
    for name in (f"muller_{task}", f"muller_{same}", task, same):
        if examples_per_epoch.get(name):
            return examples_per_epoch[name]
    return 0


def _stage_of(rule: str) -> str:
    if rule in PRETRAIN_RULES:
        return "pretrain"
    if rule in FINETUNE_RULES:
        return "finetune"
    if rule in MULLER_RULES:
        return "muller"
    return "other"


def _runs_in_job(request) -> int:
    """Fine-tuning runs one job of the plan trains (a pack names its count; a Muller job of
    every run names none: it is priced as one run a job, which the report says)."""
    runs = request.wildcard("runs")
    return int(runs) if runs.isdigit() else 1


def _measured_run(runs: Mapping[str, RunMeasure], kind: str, task: str) -> RunMeasure | None:
    """The pilot's run that prices a run of ``task``: its own; for Muller et al.'s tasks, which
    fine-tune one encoder (mBERT) at one input length, the pilot's one Muller run."""
    if kind != "muller":
        return runs.get(task)
    return runs.get(f"muller_{task}") or next(
        (run for name, run in runs.items() if name.startswith("muller_")), None
    )


def _finetune_hours(request, work: StudyWork, runs: Mapping[str, RunMeasure], kind: str) -> float:
    task = request.wildcard("task") or request.wildcard("mtask")
    measure = _measured_run(runs, kind, task)
    if measure is None:
        raise ValueError(
            f"the pilot measured no {task} fine-tuning run, which the study's {request.rule} "
            "jobs need; run the pilot's target again"
        )
    examples = work.examples_per_run[(kind, task)]
    seconds = measure.overhead_seconds + measure.seconds_per_example * examples
    return _runs_in_job(request) * seconds / 3600


def pretrain_hours(measure: PretrainMeasure, work: StudyWork, gpus: int) -> float:
    """Wall hours of one model of ``total_steps`` on ``gpus`` GPUs: the pilot's seconds per step,
    scaled to other GPU counts as data parallelism does (the global batch is the same)."""
    per_step = measure.seconds_per_step * measure.processes / max(gpus, 1)
    return work.total_steps * per_step / 3600


def attempts_needed(measure: PretrainMeasure, work: StudyWork, hours: float) -> int:
    usable = work.runtime_minutes - work.stop_margin_minutes - measure.resume_minutes
    if usable <= 0:
        return 10**6
    return math.ceil(hours * 60 / usable)


def forecast(
    requests: Iterable,
    work: StudyWork,
    measure: PretrainMeasure,
    runs: Mapping[str, RunMeasure],
) -> Forecast:
    """The study's GPU-hours per stage from the pilot's measurements (see the module docstring);
    ``requests`` are the plan's jobs (:class:`xling.cluster.plan.JobRequest`)."""
    result = Forecast()
    for request in requests:
        if request.local:
            continue
        stage = _stage_of(request.rule)
        totals = result.stages.setdefault(stage, StageForecast(measured=stage != "other"))
        totals.jobs += 1
        totals.asked_gpu_hours += request.gpus * request.minutes[0] / 60
        if stage == "pretrain":
            hours = pretrain_hours(measure, work, request.gpus)
            result.model_hours = max(result.model_hours, hours)
            needed = attempts_needed(measure, work, hours)
            result.attempts_needed = max(result.attempts_needed, needed)
            wall = needed * work.runtime_minutes / 60  # attempts back to back, queue aside
        elif stage in ("finetune", "muller"):
            hours = wall = _finetune_hours(request, work, runs, stage)
        else:
            hours = wall = request.minutes[0] / 60
        totals.gpu_hours += request.gpus * hours
        totals.longest_hours = max(totals.longest_hours, wall)
    result.changes = settings_to_change(result, work, measure)
    return result


def settings_to_change(result: Forecast, work: StudyWork, measure: PretrainMeasure) -> list[str]:
    """The settings the measurements say to change, each with its reason."""
    changes = []
    if result.attempts_needed:
        wanted = result.attempts_needed + 1  # one attempt of slack for a failure
        if work.attempts < wanted:
            changes.append(
                f"pretrain.attempts: {work.attempts} -> {wanted} (a model trains "
                f"{result.model_hours:.1f} h, {result.attempts_needed} attempts of "
                f"{work.runtime_minutes:g} minutes less the stop margin and the measured resume "
                "time, and one more for a failure); or raise pretrain.runtime_minutes up to the "
                "partition's time limit"
            )
    peak = max(measure.peak_memory_gib, default=None)
    if peak and measure.gpu_memory_gib and peak > MEMORY_HEADROOM * measure.gpu_memory_gib:
        changes.append(
            f"pretrain.micro_batch: at most half the current one (peak {peak:.1f} GiB of "
            f"{measure.gpu_memory_gib:.0f} GiB per GPU leaves no headroom); the global batch and "
            "the results stay the same"
        )
    return changes


# --------------------------------------------------------------------------- the report
def stop_checks(attempts: Sequence[Attempt]) -> list[tuple[str, bool, str]]:
    """(what, passed, detail): the pilot crossed a self-stop, a signal stop, and every attempt
    resumed at the step the one before it checkpointed last (an attempt's ``first_step``)."""
    ended = [a.ended for a in attempts]
    checks = [
        ("stopped itself before the time limit", "time limit" in ended, ", ".join(ended)),
        ("stopped by SLURM's early signal", "signal" in ended, ", ".join(ended)),
        ("finished", bool(ended) and ended[-1] == "finished", ", ".join(ended)),
    ]
    for before, after in itertools.pairwise(attempts):
        ok = after.first_step == before.last_step
        detail = f"attempt {before.number} checkpointed step {before.last_step} last, "
        detail += f"attempt {after.number} resumed at step {after.first_step}"
        checks.append((f"attempt {after.number} resumed where {before.number} stopped", ok, detail))
    return checks


def _hours(value: float) -> str:
    """Hours to the nearest one from 10 on, else to 3 significant digits (a tiny pilot's too)."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.3g}"


def _measured_lines(measure: PretrainMeasure, expected: tuple[float, float] | None) -> list[str]:
    mfu = f"{100 * measure.mfu:.1f} %" if measure.mfu is not None else "n/a (no datasheet peak)"
    memory = ", ".join(f"{p:.1f}" for p in measure.peak_memory_gib) or "n/a (CPU)"
    of = f" of {measure.gpu_memory_gib:.0f} GiB" if measure.gpu_memory_gib else ""
    lines = [
        "| measured | value |",
        "|---|---|",
        f"| GPUs | {measure.processes} x {measure.gpu} |",
        f"| layout | {measure.layout or '-'} |",
        f"| tokens/s | {measure.tokens_per_s:,.0f} |",
        f"| seconds per step | {measure.seconds_per_step:.3f} |",
        f"| MFU | {mfu} |",
        f"| peak memory per process (GiB) | {memory}{of} |",
    ]
    if expected:
        lines.append(
            f"| one model, expected by the FLOP model | {_hours(expected[0])} to "
            f"{_hours(expected[1])} h |"
        )
    return lines


def _attempt_lines(attempts: Sequence[Attempt]) -> list[str]:
    lines = ["| attempt | steps | ended | stop (s) | resume (s) |", "|---|---|---|---|---|"]
    for a in attempts:
        stop = f"{a.stop_seconds:.1f}" if a.stop_seconds is not None else "-"
        resume = f"{a.resume_seconds:.1f}" if a.resume_seconds is not None else "-"
        lines.append(
            f"| {a.number} | {a.first_step}-{a.last_step} | {a.ended} | {stop} | {resume} |"
        )
    lines += ["", "| check | result | detail |", "|---|---|---|"]
    for what, ok, detail in stop_checks(attempts):
        lines.append(f"| {what} | {'ok' if ok else 'FAILED'} | {detail} |")
    return lines


def _run_lines(runs: Mapping[str, RunMeasure]) -> list[str]:
    lines = ["| run | examples | training (s) | examples/s | outside training (s) |"]
    lines.append("|---|---|---|---|---|")
    for name, run in runs.items():
        rate = run.train_examples / max(run.train_seconds, 1e-9)
        lines.append(
            f"| {name} | {run.train_examples:,} | {run.train_seconds:.1f} | {rate:,.1f} | "
            f"{run.overhead_seconds:.1f} |"
        )
    return lines


def _forecast_lines(result: Forecast, work: StudyWork) -> list[str]:
    lines = ["| stage | jobs | GPU-hours, forecast | GPU-hours, asked | longest job (h) |"]
    lines.append("|---|---|---|---|---|")
    order = ("pretrain", "finetune", "muller", "other")
    for name, stage in sorted(result.stages.items(), key=lambda item: order.index(item[0])):
        how = "" if stage.measured else " (asked, not measured)"
        lines.append(
            f"| {name} | {stage.jobs:,} | {_hours(stage.gpu_hours)}{how} | "
            f"{_hours(stage.asked_gpu_hours)} | {stage.longest_hours:.1f} |"
        )
    lines.append(f"| all | | {_hours(result.gpu_hours)} | | |")
    lines += [
        "",
        f"One pretraining model: {result.model_hours:.1f} h of training "
        f"({work.total_steps:,} steps), {result.attempts_needed} attempt(s) of "
        f"{work.runtime_minutes:g} minutes (pretrain.attempts: {work.attempts}).",
        "",
        "| GPUs at once | the study's wall time |",
        "|---|---|",
        f"| every job at once | {result.wall_hours() / 24:.1f} days |",
    ]
    for gpus in GPU_POOLS:
        lines.append(f"| {gpus} | {result.wall_hours(gpus) / 24:.1f} days |")
    return lines


def report_markdown(
    measure: PretrainMeasure,
    runs: Mapping[str, RunMeasure],
    result: Forecast,
    work: StudyWork,
    expected: tuple[float, float] | None = None,
) -> str:
    """The pilot report (markdown): measured, stops and resumes, runs, forecast, changes."""
    changes = [f"* {c}" for c in result.changes] or ["* none: the study's settings fit."]
    failed = [what for what, ok, _ in stop_checks(measure.attempts) if not ok]
    verdict = "every stop path crossed" if not failed else "FAILED: " + "; ".join(failed)
    sections = [
        ["# Pilot report", "", f"Stops and resumes: {verdict}."],
        ["## Pretraining at the paper's shape", "", *_measured_lines(measure, expected)],
        ["## Stops and resumes", "", *_attempt_lines(measure.attempts)],
        ["## Fine-tuning runs", "", *_run_lines(runs)],
        ["## The study, forecast from these measurements", "", *_forecast_lines(result, work)],
        ["## Settings to change before the study", "", *changes],
    ]
    return "\n\n".join("\n".join(s) for s in sections) + "\n"


# --------------------------------------------------------------------------- its settings
@dataclass(frozen=True)
class PilotSettings:
    """The config's ``pilot`` section: the model it trains (the first pair's ``variant``) and the
    study its forecast is for (config files and SLURM profile, as ``xling.cluster.plan`` takes)."""

    pair: str
    variant: str
    forecast: Mapping[str, Any]

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> PilotSettings | None:
        section = config.get("pilot")
        if not section:
            return None
        variant = section.get("variant", "default")
        if variant not in config["variants"]:
            raise ValueError(
                f"pilot.variant {variant!r} is not a Table 1 variant of `variants`; name one of "
                f"{', '.join(config['variants'])}"
            )
        return cls(pair=config["pairs"][0], variant=variant, forecast=dict(section["forecast"]))


# --------------------------------------------------------------------------- the report job
def read_runs(run_logs: Mapping[str, str | Path]) -> dict[str, RunMeasure]:
    """Each run's log, by its name: a task (Table 1's) or ``muller_<task>``."""
    return {
        name: read_run_log(name.removeprefix("muller_"), path) for name, path in run_logs.items()
    }


def expected_hours(measure: PretrainMeasure, config: Mapping[str, Any]) -> tuple | None:
    """The FLOP model's hours of one model of the study on the pilot's GPU type, if it has one."""
    from xling.cluster.expected import GPU_TYPES, pretraining_expected

    for gpu in sorted(GPU_TYPES, key=len, reverse=True):
        if gpu in measure.gpu:
            languages = config["pairs"][0].split("-")  # the pilot's pair; only the size counts
            expected = pretraining_expected(config["model"], config["pretrain"], languages)
            return expected.hours[gpu]
    return None


def markdown_to_html(text: str) -> str:
    """The report's markdown (headings, paragraphs, bullets and pipe tables only) as one HTML
    page for Snakemake's report, whose viewer shows HTML but not markdown."""
    body, table = [], []

    def flush_table() -> None:
        if not table:
            return
        rows = [[html.escape(c.strip()) for c in line.strip("|").split("|")] for line in table]
        head, rest = rows[0], rows[2:]  # rows[1] is the |---| rule
        body.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr>")
        body.extend("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rest)
        body.append("</table>")
        table.clear()

    for line in text.splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        flush_table()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.startswith("* "):
            body.append(f"<ul><li>{html.escape(line[2:])}</li></ul>")
        elif line.strip():
            body.append(f"<p>{html.escape(line)}</p>")
    flush_table()
    style = "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px}"
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{style}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def write_report(
    *,
    pretrain_summary: str | Path,
    run_logs: Mapping[str, str | Path],
    study: Mapping[str, Any],
    markdown: str | Path,
    html_file: str | Path,
) -> str:
    """Measure, plan the study (``study``: its ``configfiles`` and ``profile``), forecast, and
    write the report as markdown and as HTML; returns the markdown."""
    from xling.base.atomic import atomic_write
    from xling.cluster.plan import read_plan

    measure = read_pretrain(pretrain_summary)
    runs = read_runs(run_logs)
    plan = read_plan(str(study["profile"]), list(study["configfiles"]), ["all"])
    work = study_work(plan.config, {name: run.examples_per_epoch for name, run in runs.items()})
    result = forecast(plan.requests, work, measure, runs)
    text = report_markdown(measure, runs, result, work, expected_hours(measure, plan.config))
    atomic_write(markdown, [text])
    atomic_write(html_file, [markdown_to_html(text)])
    return text
