"""GPU checks of the pretraining engine at the paper's model size: kernels, precision, speed, stops.

What a user would otherwise learn from the first hours of a cluster job, measured in under ten
minutes on one GPU (two for the last check but one), through the engine itself
(``xling.pretrain.pretrain``: data sampling and masking on the host, prefetch, autocast, loss
scaling, clipping, the schedule, checkpoints, stop signals), on a synthetic corpus
(``xling.pretrain.synthetic``) whose vocabulary is about the paper's joint BPE (95k types):

1. the device: its driver, the architectures torch's wheel carries against the GPU's compute
   capability (the check every GPU job makes first, ``xling.cluster.gpus``), and the precision
   ``precision: auto`` trains in on it (``xling.pretrain.objective.resolve_precision``);
2. throughput and model FLOPs utilization (MFU, ``xling.pretrain.flops``) at Wu et al.'s shape
   (8 layers, width 768, 12 heads, 256-token streams, 96 a step) in bf16 (on GPUs with bf16 tensor
   cores), fp16 (loss scaling) and fp32, each with its training loss and peak memory: the ratios
   bf16 / fp32 and fp16 / fp32;
3. ``pretrain.compile_layers`` (torch.compile of each Transformer layer) against eager, in the
   precision ``auto`` picks;
4. resume on the GPU: a run stopped after a checkpoint and rerun ends with the same weights as an
   uninterrupted one, bit for bit, with ``deterministic: true`` (bf16 and fp16, dropout on);
5. SIGTERM (SLURM's warning before the time limit) at the paper's size: how long the job takes to
   checkpoint and exit (the profile leaves it 540 s), and how long the rerun takes to resume from
   the step it stopped at;
6. two processes (DDP, one GPU each) of which one gets the signal: both stop after the same step;
   skipped on a machine with one GPU;
7. xling's encoder against transformers' BertForMaskedLM at that shape (``bench/pretrain.py``),
   on GPUs with bf16.

It ends with one table of the results, also written to ``--out`` (markdown).

    python bench/gpu_check.py --out gpu_check.md     # on a CUDA machine
    python bench/gpu_check.py --smoke                # tiny sizes on the CPU: checks the script
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file

from xling.cluster.gpus import (
    kernel_for,
    kernel_words,
    node_driver,
    require_visible_gpus,
    sm_name,
    torch_cuda,
)
from xling.pretrain import PretrainSettings, pretrain_in_folder
from xling.pretrain.flops import peak_flops, training_flops_per_step
from xling.pretrain.inputs import read_vocab_size
from xling.pretrain.objective import resolve_precision
from xling.pretrain.synthetic import write_synthetic_vocab_dir

# Seconds a throughput case may take by the FLOP model at MFU 0.3 (fp32 on a V100 would take five
# minutes at 150 steps), and the fewest steps that still measure one.
CASE_SECONDS = 60
MIN_STEPS = 40
# What the profile leaves a signalled job to checkpoint and exit (xling.cluster.launch).
SHUTDOWN_SECONDS = 540


@dataclass
class Shape:
    layers: int
    dim: int
    heads: int
    seq_len: int
    batch: int
    vocabulary_scale: float  # of xling.pretrain.synthetic: 52 gives about 95k types for two
    sentences: int  # training sentences per language
    steps: int  # run length of each throughput case

    def architecture(self, dropout: float = 0.0) -> dict:
        return {
            "dim": self.dim,
            "layers": self.layers,
            "heads": self.heads,
            "ffn_dim": 4 * self.dim,
            "max_positions": self.seq_len,
            "dropout": dropout,
            "attention_dropout": dropout,
        }


PAPER = Shape(8, 768, 12, 256, 96, vocabulary_scale=52, sentences=10_000, steps=150)
SMOKE = Shape(2, 32, 2, 16, 4, vocabulary_scale=1, sentences=500, steps=12)


class StepClock:
    """Wall time from the end of step ``first`` to the end of step ``last`` (device synced)."""

    def __init__(self, first: int, last: int, sync):
        self.first, self.last, self.sync = first, last, sync
        self.start = self.end = None

    def __call__(self, step: int) -> None:
        if step in (self.first, self.last):
            self.sync()
            now = time.perf_counter()
            if step == self.first:
                self.start = now
            else:
                self.end = now

    @property
    def steps_per_second(self) -> float:
        return (self.last - self.first) / (self.end - self.start)


def settings_for(shape: Shape, steps: int, **changes) -> PretrainSettings:
    values = {
        "architecture": shape.architecture(),
        "seq_len": shape.seq_len,
        "batch_size": shape.batch,
        # A short warmup to a high rate, so that a few hundred steps show the loss fall; the
        # paper's 30k-step warmup changes nothing of the speed.
        "lr": 5e-4,
        "warmup_steps": 20,
        "total_steps": steps,
        "eval_interval": steps,
        "dev_tokens": 16 * shape.seq_len,
        "log_interval": 20,
        "checkpoint_minutes": 1e6,
        "seed": 0,
    }
    values.update(changes)
    return PretrainSettings(**values)


def run(data_dir: Path, out: Path, settings: PretrainSettings, device: str, callback=None) -> dict:
    """One pretraining job; its progress lines go to ``out/log.txt`` only."""
    out.mkdir(parents=True, exist_ok=True)
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        return pretrain_in_folder(
            out,
            data_dir,
            ["en", "fr"],
            settings,
            device=device,
            log_file=out / "log.txt",
            step_callback=callback,
        )


def is_cuda(device: str) -> bool:
    return device.startswith("cuda")


def device_check(device: str) -> dict:
    """The device, its driver, torch's architectures against it, and the precision of ``auto``."""
    chosen = resolve_precision("auto", torch.device(device))
    if not is_cuda(device):
        return {
            "name": "cpu",
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "precision": chosen,
        }
    view = torch_cuda()
    capability = view.capabilities[0]
    kernel = kernel_for(view.arch_list, capability)
    try:  # the very check of every GPU job (workflow/scripts/_bootstrap.py)
        job_check = require_visible_gpus({"gpu": 1}, environ={})
    except RuntimeError as error:
        job_check = f"FAILS: {error}"
    props = torch.cuda.get_device_properties(0)
    return {
        "name": view.names[0],
        "gpus": view.devices,
        "memory_gib": props.total_memory / 2**30,
        "capability": sm_name(capability),
        "torch": view.version,
        "cuda": view.cuda,
        "driver": node_driver().description,
        "arch_list": list(view.arch_list),
        "kernel": kernel,
        "kernels": kernel_words(kernel),
        "job_check": job_check,
        "precision": chosen,
    }


def throughput_cases(device: str, chosen: str) -> list[tuple[str, bool]]:
    """(precision, compiled) of each case: bf16 only on GPUs with bf16 tensor cores (on a V100
    torch emulates it, slower than fp32), and compilation in the precision ``auto`` picks."""
    native_bf16 = not is_cuda(device) or torch.cuda.get_device_capability() >= (8, 0)
    cases = [(p, False) for p in ("bf16", "fp16", "fp32") if p != "bf16" or native_bf16]
    return [*cases, (chosen, True)]


def case_steps(shape: Shape, flops: float, name: str, precision: str, device: str) -> int:
    """The case's steps: the shape's, fewer where the FLOP model says they would take longer than
    CASE_SECONDS at MFU 0.3 (never under MIN_STEPS)."""
    peak = peak_flops(name, precision) if is_cuda(device) else None
    if not peak:
        return shape.steps
    fitting = int(CASE_SECONDS * 0.3 * peak / flops)
    return max(MIN_STEPS, min(shape.steps, fitting))


def measure_case(data_dir, work, shape, device, precision, compiled, flops, name) -> dict:
    """One throughput case: ``precision`` (compiled or not) for its steps at ``shape``, priced
    at ``flops`` a step against the datasheet peak of the GPU ``name``."""
    steps = case_steps(shape, flops, name, precision, device)
    sync = torch.cuda.synchronize if is_cuda(device) else (lambda: None)
    if is_cuda(device):
        torch.cuda.reset_peak_memory_stats()
    clock = StepClock(min(20, steps // 3), steps - 1, sync)
    settings = settings_for(shape, steps, precision=precision, compile_layers=compiled)
    label = precision + (" compiled" if compiled else "")
    summary = run(data_dir, work / label.replace(" ", "_"), settings, device, clock)
    rate = clock.steps_per_second
    peak = peak_flops(name, precision)
    return {
        "tokens_per_s": rate * shape.batch * shape.seq_len,
        "mfu": flops * rate / peak if peak else None,
        "first_train_loss": summary["first_train_loss"],
        "last_train_loss": summary["last_train_loss"],
        "dev_ppl": summary["best_dev_ppl"],
        "steps": steps,
        "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30 if is_cuda(device) else None,
    }


def throughput(data_dir: Path, work: Path, shape: Shape, device: str, chosen: str) -> dict:
    """Tokens/s, MFU, training loss and peak memory per precision, and compiled against eager."""
    vocab = read_vocab_size(data_dir / "tokenizer")
    config = settings_for(shape, 1).encoder_config(vocab, ["en", "fr"])
    flops = training_flops_per_step(config, shape.batch, shape.seq_len, 0.15 * shape.seq_len)
    name = torch.cuda.get_device_name() if is_cuda(device) else "cpu"
    results = {}
    for precision, compiled in throughput_cases(device, chosen):
        label = precision + (" compiled" if compiled else "")
        try:
            row = measure_case(data_dir, work, shape, device, precision, compiled, flops, name)
        except Exception as error:  # one precision failing must not hide the others
            traceback.print_exc()
            results[label] = {"error": f"{type(error).__name__}: {error}"}
            continue
        results[label] = row
        mfu = f"MFU {100 * row['mfu']:.1f}%" if row["mfu"] is not None else "MFU n/a"
        memory = f", peak {row['peak_memory_gib']:.1f} GiB" if row["peak_memory_gib"] else ""
        print(
            f"  {label:>13}: {row['tokens_per_s']:>10,.0f} tok/s, {mfu}, train loss "
            f"{row['first_train_loss']:.3f} -> {row['last_train_loss']:.3f} in {row['steps']} "
            f"steps, dev ppl {row['dev_ppl']:.1f}{memory}",
            flush=True,
        )
    results["model_flops_per_step"] = flops
    results["vocab_size"] = vocab
    return results


class StopAfter(Exception):
    pass


def resume_matches(data_dir: Path, work: Path, device: str, precision: str) -> bool:
    """A run stopped after its step-8 checkpoint, rerun, against an uninterrupted run."""
    shape = SMOKE
    settings = settings_for(
        shape,
        24,
        architecture={**shape.architecture(dropout=0.1), "sep_layers": 1},
        precision=precision,
        deterministic=True,
        checkpoint_steps=4,
        eval_interval=10,
        log_interval=5,
    )
    whole = work / f"resume_{precision}_whole"
    run(data_dir, whole, settings, device)

    def stop(step: int) -> None:
        if step == 9:  # after step 8's checkpoint, with step 9 done and lost
            raise StopAfter

    stopped = work / f"resume_{precision}_stopped"
    with contextlib.suppress(StopAfter):
        run(data_dir, stopped, settings, device, stop)
    run(data_dir, stopped, settings, device)
    a = load_file(str(whole / "model" / "model.safetensors"))
    b = load_file(str(stopped / "model" / "model.safetensors"))
    same = a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    print(f"  resume, {precision}, deterministic: {'bit for bit' if same else 'DIFFERENT'}")
    return same


def stopped_step(message: str) -> int | None:
    """The step a stopped trainer names ("stopped by signal 15 after checkpointing step 21")."""
    found = re.search(r"step (\d+)", message)
    return int(found.group(1)) if found else None


def send_sigterm(sent: dict) -> None:
    """SIGTERM to this process, as SLURM sends it, once the trainer handles it (the default
    handler would end the bench)."""
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, signal.SIG_IGN, None):
        raise RuntimeError("the trainer installed no SIGTERM handler: SLURM's signal would kill it")
    sent["time"] = time.perf_counter()
    os.kill(os.getpid(), signal.SIGTERM)


def signal_stop(data_dir: Path, work: Path, shape: Shape, device: str, precision: str) -> dict:
    """SIGTERM in the middle of a run at ``shape``: seconds to checkpoint and exit, the checkpoint's
    size, and the rerun's first step and the seconds until it trained it."""
    steps, signal_at = 40, 20
    settings = settings_for(shape, steps, precision=precision, log_interval=5)
    out, sent = work / f"signal_{precision}", {}

    def send(step: int) -> None:
        if step == signal_at and "time" not in sent:
            send_sigterm(sent)

    try:
        run(data_dir, out, settings, device, send)
        return {
            "error": f"the run ended without stopping ({steps} steps, SIGTERM after {signal_at})"
        }
    except SystemExit as stop:
        exit_s, message = time.perf_counter() - sent["time"], str(stop)
    checkpoints = sorted((out / ".work").glob("*.pt"), key=lambda p: p.stat().st_mtime)
    first: dict = {}

    def watch(step: int) -> None:
        first.setdefault("step", step)
        first.setdefault("time", time.perf_counter())
        if step >= first["step"] + 2:
            raise StopAfter

    start = time.perf_counter()
    with contextlib.suppress(StopAfter):
        run(data_dir, out, settings, device, watch)
    result = {
        "signal_after_step": signal_at,
        "message": message,
        "stopped_step": stopped_step(message),
        "exit_s": exit_s,
        "checkpoint_gib": checkpoints[-1].stat().st_size / 2**30 if checkpoints else None,
        "resumed_at_step": first.get("step"),
        "resume_s": first["time"] - start if first else None,
    }
    result["resumed"] = result["stopped_step"] is not None and (
        result["resumed_at_step"] == result["stopped_step"] + 1
    )
    print(
        f"  SIGTERM after step {signal_at}: checkpoint of step {result['stopped_step']} and exit "
        f"in {exit_s:.1f} s; rerun resumed at step {result['resumed_at_step']} after "
        f"{result['resume_s'] or 0:.1f} s",
        flush=True,
    )
    return result


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop_agreement(data_dir: Path, work: Path, shape: Shape, device: str, precision: str) -> dict:
    """Two processes (one GPU each; on the CPU over gloo) of which process 1 gets SIGTERM: both
    must stop after the same step, process 0 having written its checkpoint. A process that
    stopped alone would leave the other waiting in its next all-reduce: the workers are killed
    after ``timeout`` seconds and the check fails."""
    if is_cuda(device) and torch.cuda.device_count() < 2:
        return {"skipped": f"{torch.cuda.device_count()} GPU on this machine; it needs 2"}
    out = work / "two_ranks"
    out.mkdir(parents=True, exist_ok=True)
    spec = {
        "data": str(data_dir),
        "out": str(out),
        "paper": shape is PAPER,
        "device": device,
        "precision": precision,
        "steps": 30,
        "every": 5,
        "signal_at": 7,
    }
    port, timeout = free_port(), 300 if is_cuda(device) else 180
    workers = []
    with open(out / "workers.log", "w") as log:
        for rank in (0, 1):
            env = {
                **os.environ,
                "RANK": str(rank),
                "LOCAL_RANK": str(rank),
                "WORLD_SIZE": "2",
                "LOCAL_WORLD_SIZE": "2",
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(port),
            }
            command = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--stop-worker",
                json.dumps(spec),
            ]
            workers.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT))
        hung = _wait_all(workers, timeout)
    ranks = [_read_json(out / f"rank{rank}.json") for rank in (0, 1)]
    steps = [rank.get("stopped_step") for rank in ranks]
    result = {"ranks": ranks, "hung": hung, "log_tail": (out / "workers.log").read_text()[-2000:]}
    result["agreed"] = not hung and steps[0] is not None and steps[0] == steps[1]
    result["stopped_step"] = steps[0] if result["agreed"] else steps
    print(
        f"  two processes, SIGTERM to process 1 after step {spec['signal_at']}: stopped after "
        f"steps {steps}{' (hung, killed)' if hung else ''}",
        flush=True,
    )
    return result


def _wait_all(workers: list, timeout: float) -> bool:
    """Wait for every worker; kill them all past ``timeout``. Returns whether any hung."""
    deadline = time.monotonic() + timeout
    for worker in workers:
        try:
            worker.wait(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            for other in workers:
                other.kill()
                other.wait()
            return True
    return False


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"error": f"no result ({path.name})"}


def stop_worker(spec_text: str) -> None:
    """One process of :func:`stop_agreement` (torchrun's environment set by the parent)."""
    spec = json.loads(spec_text)
    rank = int(os.environ["RANK"])
    shape = PAPER if spec["paper"] else SMOKE
    cuda = is_cuda(spec["device"])
    settings = settings_for(
        shape,
        spec["steps"],
        precision=spec["precision"],
        log_interval=spec["every"],
        threads=0 if cuda else 1,
    )
    sent: dict = {}

    def send(step: int) -> None:
        if rank == 1 and step == spec["signal_at"] and "time" not in sent:
            send_sigterm(sent)

    result: dict = {"rank": rank}
    start = time.perf_counter()
    try:
        run(
            Path(spec["data"]), Path(spec["out"]), settings, f"cuda:{rank}" if cuda else "cpu", send
        )
        result["error"] = "finished without stopping"
    except SystemExit as stop:
        result["message"] = str(stop)
        result["stopped_step"] = stopped_step(str(stop))
        if "time" in sent:  # the signalled process: how long from its signal to its exit
            result["exit_s"] = time.perf_counter() - sent["time"]
        result["run_s"] = time.perf_counter() - start
    Path(spec["out"], f"rank{rank}.json").write_text(json.dumps(result), encoding="utf-8")


def bert_comparison(device: str, chosen: str) -> dict:
    """bench/pretrain.py at the paper's shape; it measures in bf16, so only where bf16 is native."""
    if chosen != "bf16":
        return {"skipped": f"bench/pretrain.py measures in bf16; this GPU trains in {chosen}"}
    sys.path.insert(0, str(Path(__file__).parent))
    import pretrain as pretrain_bench  # bench/pretrain.py, the side-by-side benchmark

    return pretrain_bench.gpu_benchmark(rounds=3)


def _error_row(name: str, section: dict) -> list[tuple[str, str, str]] | None:
    if "error" in section:
        return [(name, "ERROR", section["error"][:300])]
    if "skipped" in section:
        return [(name, "skipped", section["skipped"])]
    return None


def device_rows(device: dict) -> list[tuple[str, str, str]]:
    if found := _error_row("device", device):
        return found
    software = f"torch {device['torch']}, " + (
        f"CUDA {device['cuda']}" if device["cuda"] else "its CPU build"
    )
    if device["name"] == "cpu":
        return [
            ("device", "CPU (--smoke)", software),
            ("precision (auto)", device["precision"], ""),
        ]
    return [
        (
            "device",
            f"{device['gpus']} x {device['name']}, {device['memory_gib']:.0f} GiB",
            f"{software}; {device['driver']}",
        ),
        (
            "kernels",
            f"{device['capability']}: {device['kernels']}",
            f"the wheel carries {' '.join(device['arch_list'])}; "
            f"the jobs' check: {device['job_check']}",
        ),
        ("precision (auto)", device["precision"], "xling.pretrain.objective.resolve_precision"),
    ]


def throughput_rows(results: dict, chosen: str, memory_gib: float | None) -> list:
    if found := _error_row("throughput", results):
        return found
    rows = []
    for label, row in results.items():
        if not isinstance(row, dict):
            continue
        if found := _error_row(f"throughput {label}", row):
            rows += found
            continue
        mfu = f", MFU {100 * row['mfu']:.1f}%" if row["mfu"] is not None else ""
        memory = f", peak {row['peak_memory_gib']:.1f} GiB" if row["peak_memory_gib"] else ""
        rows.append(
            (
                f"throughput {label}",
                f"{row['tokens_per_s']:,.0f} tok/s{mfu}",
                f"train loss {row['first_train_loss']:.3f} -> {row['last_train_loss']:.3f} "
                f"in {row['steps']} steps, dev ppl {row['dev_ppl']:.1f}{memory}",
            )
        )
    rate = {
        label: row.get("tokens_per_s") for label, row in results.items() if isinstance(row, dict)
    }
    ratios = [
        f"{a} / {b} {rate[a] / rate[b]:.2f}"
        for a, b in (("bf16", "fp32"), ("fp16", "fp32"), (f"{chosen} compiled", chosen))
        if rate.get(a) and rate.get(b)
    ]
    if ratios:
        rows.append(("speed ratios", ", ".join(ratios), "tokens/s"))
    peak = (results.get(chosen) or {}).get("peak_memory_gib")
    if peak:
        total = f" of {memory_gib:.0f} GiB" if memory_gib else ""
        rows.append(
            (
                "peak memory, paper's batch",
                f"{peak:.1f} GiB{total}",
                f"96 x 256 tokens a step in {chosen}, 8 layers x 768",
            )
        )
    return rows


def resume_rows(report: dict) -> list[tuple[str, str, str]]:
    rows = []
    for precision in ("bf16", "fp16"):
        section = report.get(f"resume_{precision}")
        if isinstance(section, dict):
            rows += _error_row(f"resume, {precision}", section) or []
        elif section is not None:
            verdict = "bit for bit" if section else "DIFFERENT"
            detail = "stopped after a checkpoint and rerun, against an uninterrupted run"
            rows.append((f"resume, {precision}", verdict, detail))
    return rows


def signal_rows(signalled: dict | None) -> list[tuple[str, str, str]]:
    if not signalled:
        return []
    if found := _error_row("SIGTERM -> checkpoint -> exit", signalled):
        return found
    size = signalled["checkpoint_gib"] or 0
    size_words = f"{size:.2f} GiB" if size >= 0.1 else f"{size * 1024:.1f} MiB"
    exit_words = f"{signalled['exit_s']:.1f} s (torchrun leaves {SHUTDOWN_SECONDS} s)"
    resumed = "ok" if signalled["resumed"] else "WRONG STEP"
    return [
        (
            "SIGTERM -> checkpoint -> exit",
            exit_words,
            f"SIGTERM after step {signalled['signal_after_step']}; checkpoint of step "
            f"{signalled['stopped_step']}, {size_words}",
        ),
        (
            "resume after SIGTERM",
            resumed,
            f"the rerun trained step {signalled['resumed_at_step']} first, "
            f"{signalled['resume_s'] or 0:.1f} s after it started",
        ),
    ]


def agreement_rows(agreement: dict | None) -> list[tuple[str, str, str]]:
    if not agreement:
        return []
    if found := _error_row("two processes' stop", agreement):
        return found
    exit_s = agreement["ranks"][1].get("exit_s")
    exit_words = f"; process 1 exits {exit_s:.1f} s after it" if exit_s is not None else ""
    if agreement["agreed"]:
        verdict = f"both after step {agreement['stopped_step']}"
    else:
        verdict = "DISAGREE" + (" (hung: killed)" if agreement["hung"] else "")
    detail = f"SIGTERM to process 1 only; stopped after steps {agreement['stopped_step']}"
    return [("two processes' stop", verdict, detail + exit_words)]


def bert_rows(bert: dict | None) -> list[tuple[str, str, str]]:
    if not bert:
        return []
    if found := _error_row("xling / BertForMaskedLM", bert):
        return found
    mfu = f", MFU {100 * bert['mfu']:.1f}%" if bert.get("mfu") else ""
    return [
        (
            "xling / BertForMaskedLM",
            f"{bert['ratio']:.2f}",
            f"{bert['xling']:,.0f} / {bert['bert']:,.0f} tok/s in bf16{mfu}",
        )
    ]


def results_table(report: dict) -> str:
    """One markdown table of every check."""
    device = report.get("device", {})
    chosen = device.get("precision", "fp32")
    rows = [
        *device_rows(device),
        *throughput_rows(report.get("throughput", {}), chosen, device.get("memory_gib")),
        *resume_rows(report),
        *signal_rows(report.get("signal")),
        *agreement_rows(report.get("two_ranks")),
        *bert_rows(report.get("bert")),
        ("time", f"{report.get('seconds', 0):.0f} s", "this whole check"),
    ]
    lines = ["| check | result | detail |", "|---|---|---|"]
    for row in rows:
        cells = (" ".join(str(cell).split()).replace("|", "\\|") for cell in row)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run_checks(args, report: dict, work: Path) -> None:
    """Every check in turn; a failure is reported and the other checks still run."""
    device = "cpu" if args.smoke else "cuda"
    shape = SMOKE if args.smoke else PAPER

    def section(name: str, measure) -> None:
        try:
            report[name] = measure()
        except Exception as error:
            traceback.print_exc()
            report[name] = {"error": f"{type(error).__name__}: {error}"}
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    section("device", lambda: device_check(device))
    print(json.dumps(report["device"], indent=1), flush=True)
    chosen = report["device"].get("precision") or resolve_precision("auto", torch.device(device))
    start = time.perf_counter()
    sentences = {"train": shape.sentences, "valid": 200, "test": 10}
    write_synthetic_vocab_dir(
        work / "paper", sentences=sentences, vocabulary_scale=shape.vocabulary_scale
    )
    write_synthetic_vocab_dir(work / "small", sentences={"train": 500, "valid": 100})
    print(f"synthetic corpora written in {time.perf_counter() - start:.0f} s")
    print(f"engine at {shape.layers} layers x {shape.dim}, batch {shape.batch} x {shape.seq_len}:")
    section("throughput", lambda: throughput(work / "paper", work, shape, device, chosen))
    for precision in ("bf16", "fp16"):
        section(
            f"resume_{precision}",
            lambda p=precision: resume_matches(work / "small", work, device, p),
        )
    section("signal", lambda: signal_stop(work / "paper", work, shape, device, chosen))
    section("two_ranks", lambda: stop_agreement(work / "paper", work, shape, device, chosen))
    if device == "cuda":  # last: it allows TF32 for the rest of the process
        section("bert", lambda: bert_comparison(device, chosen))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes on the CPU")
    parser.add_argument("--out", help="write the table of results here (markdown)")
    parser.add_argument("--json", help="also write every measurement here")
    parser.add_argument("--stop-worker", help=argparse.SUPPRESS)  # a process of two_ranks
    args = parser.parse_args()
    if args.stop_worker:
        stop_worker(args.stop_worker)
        return
    if not args.smoke and not torch.cuda.is_available():
        sys.exit("no GPU visible to torch; run with --smoke to check the script on the CPU")
    # cuBLAS reads its workspace setting when the process first uses it, and a deterministic run
    # needs this one: a pretraining job sets it before its first GPU work, so this process does.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    report: dict = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        run_checks(args, report, Path(tmp))
    report["seconds"] = time.perf_counter() - start
    table = results_table(report)
    print("\n" + table)
    if args.out:
        Path(args.out).write_text(table, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
