"""GPU checks of the pretraining engine at the paper's model size: kernels, precision, speed, stops.

What a user would otherwise learn from the first hours of a cluster job, measured in about ten
minutes on one GPU (two for the cases of two processes), through the engine itself
(``xling.pretrain.pretrain``: data sampling and masking on the host, prefetch, autocast, loss
scaling, clipping, the schedule, checkpoints, stop signals), on a synthetic corpus
(``xling.pretrain.synthetic``) whose vocabulary is about the paper's joint BPE (95k types). The
cases, in the order they run (``CASES``; ``--cases`` picks some), each a row of the table or more:

1. ``device``: the GPU, its driver, the architectures torch's wheel carries against the GPU's
   compute capability (the check every GPU job makes first, ``xling.cluster.gpus``), and the
   precision ``precision: auto`` trains in on it (``xling.pretrain.objective.resolve_precision``);
2. ``throughput``: tokens/s and model FLOPs utilization (MFU, ``xling.pretrain.flops``) at Wu et
   al.'s shape (8 layers, width 768, 12 heads, 256-token streams, 96 a step) in bf16 (on GPUs with
   bf16 tensor cores), fp16 (loss scaling) and fp32, each with its training loss and peak memory,
   the ratios bf16 / fp32 and fp16 / fp32, and ``pretrain.compile_layers`` (torch.compile of each
   Transformer layer) against eager in the precision ``auto`` picks;
3. ``resume_bf16``, ``resume_fp16``: at the paper's shape, a run stopped after a checkpoint and
   rerun ends with the same weights as an uninterrupted one, bit for bit, with
   ``deterministic: true`` (dropout on);
4. ``signal``: SIGTERM (SLURM's warning before the time limit) at the paper's size: how long the
   job takes to checkpoint and exit (the profile leaves it 540 s), and how long the rerun takes to
   resume from the step it stopped at;
5. ``two_ranks``: two processes (DDP, one GPU each) of which one gets the signal: both stop after
   the same step; skipped on a machine with one GPU;
6. ``accumulation``: gradient accumulation under DDP's ``no_sync``, in bf16 and in fp16 (loss
   scaling): the global batch of two processes of one micro-batch each and that of one process
   accumulating both micro-batches end with the same weights (``deterministic: true``); on one
   GPU both processes share it where NCCL allows, else the case is skipped;
7. ``torchrun``: ``python -m torch.distributed.run --standalone --nproc-per-node 2 -m
   xling.pretrain`` as the cluster's jobs start it (``xling.cluster.launch``) ends with a model;
8. ``memory``: peak memory of one process at the paper's micro-batch (96 x 256 tokens), and the
   largest micro-batch that fits (doubled until out of memory, then bisected);
9. ``bert``: xling's encoder against transformers' BertForMaskedLM at that shape
   (``bench/pretrain.py``), on GPUs with bf16.

Steps are chosen by the FLOP model (MFU 0.3) so that no case takes much longer than a minute
(``CASE_SECONDS``). It ends with one table of the results, printed and written to ``--out``
(markdown); ``--json`` writes every measurement.

    python bench/gpu_check.py                        # on a CUDA machine: gpu_check.md
    python bench/gpu_check.py --cases memory,torchrun
    python bench/gpu_check.py --smoke                # tiny sizes on the CPU: checks the script
"""

from __future__ import annotations

import argparse
import contextlib
import gc
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
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file

import xling.pretrain.checkpoint as ckpt
from xling.cluster.gpus import (
    kernel_for,
    kernel_words,
    node_driver,
    require_visible_gpus,
    sm_name,
    torch_cuda,
)
from xling.cluster.launch import SHUTDOWN_TIMEOUT_SECONDS, Launch, torchrun_command
from xling.model import MLMEncoder
from xling.pretrain import PretrainSettings, pretrain_in_folder
from xling.pretrain.data import NUM_SPECIAL
from xling.pretrain.flops import peak_flops, training_flops_per_step
from xling.pretrain.inputs import read_vocab_size
from xling.pretrain.objective import MaskedLMObjective, autocast_for, resolve_precision
from xling.pretrain.optim import build_optimizer
from xling.pretrain.synthetic import write_synthetic_vocab_dir

# Seconds a case may take by the FLOP model at MFU ASSUMED_MFU (fp32 on a V100 would take five
# minutes at 150 steps), and the fewest steps that still measure a throughput.
CASE_SECONDS = 60
ASSUMED_MFU = 0.3
MIN_STEPS = 40
# What the profile leaves a signalled job to checkpoint and exit (xling.cluster.launch).
SHUTDOWN_SECONDS = SHUTDOWN_TIMEOUT_SECONDS
# Resume: checkpoints every RESUME_EVERY steps; the first run stops after step RESUME_STOP (its
# checkpoint of step RESUME_EVERY kept, the step after it lost) and the rerun trains the rest.
RESUME_STEPS, RESUME_EVERY, RESUME_STOP = 8, 3, 4
# Accumulation: steps of each run; the weights of its two runs may differ by this much at most.
# They train the same micro-batches with the same deterministic kernels, each micro-batch's
# backward of the same size on both splits (xling.pretrain.loop._loss_scales), so they agree to
# float rounding and, in fp16, overflow at the same loss scale; a micro-batch lost, counted twice
# or weighed wrongly moves weights by about the learning rate (5e-4 here) in a step. A step
# GradScaler skips in one run only shows as both runs' last loss scales.
ACCUMULATION_STEPS = 6
ACCUMULATION_TOLERANCE = 1e-5
TORCHRUN_STEPS = 10
# Memory: forward, backward and Adam steps of each micro-batch tried (the first makes Adam's state),
# the bisections after the first out-of-memory, and the most seconds a try may take.
MEMORY_STEPS = 3
MEMORY_BISECTIONS = 3
MEMORY_TRY_SECONDS = 20
# Seconds two processes may take before they count as hung and are killed.
WORKER_TIMEOUT = {"cuda": 300, "cpu": 180}
# What NCCL says when two processes of one communicator share a GPU.
NCCL_SHARED_GPU = re.compile(r"[^\n]*Duplicate GPU detected[^\n]*")
REPO = Path(__file__).resolve().parents[1]

Row = tuple[str, str, str]


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

    def describe(self) -> str:
        return f"{self.layers} layers x {self.dim}, {self.batch} x {self.seq_len} tokens a step"


PAPER = Shape(8, 768, 12, 256, 96, vocabulary_scale=52, sentences=10_000, steps=150)
SMOKE = Shape(2, 32, 2, 16, 4, vocabulary_scale=1, sentences=500, steps=12)


@dataclass
class Check:
    """What every case runs with: its work folder (the synthetic corpus ``paper`` in it), the
    shape, the device ("cuda:0", or "cpu" with --smoke) and the precision ``auto`` picks there."""

    work: Path
    shape: Shape
    device: str
    chosen: str = "fp32"

    @property
    def cuda(self) -> bool:
        return is_cuda(self.device)

    @property
    def paper_data(self) -> Path:
        return self.work / "paper"

    def gpu_name(self) -> str:
        return torch.cuda.get_device_name(self.device) if self.cuda else "cpu"

    def flops_per_step(self, streams: int) -> float:
        """Model FLOPs of a training step of ``streams`` streams on the paper corpus."""
        vocab = read_vocab_size(self.paper_data / "tokenizer")
        config = settings_for(self.shape, 1).encoder_config(vocab, ["en", "fr"])
        seq = self.shape.seq_len
        return training_flops_per_step(config, streams, seq, 0.15 * seq)

    def step_seconds(self, streams: int, precision: str) -> float | None:
        """Seconds of a step of ``streams`` streams by the FLOP model at MFU ASSUMED_MFU on this
        GPU; None on the CPU and on GPUs of unknown peak."""
        peak = peak_flops(self.gpu_name(), precision) if self.cuda else None
        return self.flops_per_step(streams) / (ASSUMED_MFU * peak) if peak else None

    def steps_within(self, seconds: float, streams: int, precision: str, most: int) -> int:
        """``most`` steps of ``streams`` streams, fewer where the FLOP model says they would take
        longer than ``seconds`` (never under one)."""
        step = self.step_seconds(streams, precision)
        return most if step is None else max(1, min(most, int(seconds / step)))


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


def run(
    data_dir: Path, out: Path, settings: PretrainSettings, device: str, callback=None, keep=False
) -> dict:
    """One pretraining job; its progress lines go to ``out/log.txt`` only; ``keep``: its last
    checkpoint too."""
    out.mkdir(parents=True, exist_ok=True)
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        return pretrain_in_folder(
            out,
            data_dir,
            ["en", "fr"],
            settings,
            device=device,
            keep_work_dir=keep,
            log_file=out / "log.txt",
            step_callback=callback,
        )


def is_cuda(device: str) -> bool:
    return device.startswith("cuda")


def weights(folder: Path) -> dict[str, torch.Tensor]:
    """The selected model of a job run in ``folder``."""
    return load_file(str(folder / "model" / "model.safetensors"))


def loss_scale(folder: Path) -> float | None:
    """The fp16 loss scale of the last checkpoint of a job run in ``folder`` with ``keep``: each
    step whose gradients overflowed halved it, and the step was skipped."""
    newest = ckpt.checkpoint_files(folder / ".work")[0]
    scaler = ckpt.read_checkpoint(newest)["scaler"]
    return scaler["scale"] if scaler else None


def trained_on(log: str) -> str | None:
    """Where a job's log says it trained ("2 process(es) on NVIDIA H100 80GB HBM3")."""
    found = re.search(r"(\d+ process\(es\) on [^,;]+)", log)
    return found.group(1) if found else None


# ---------------------------------------------------------------------------------- device


def device_check(check: Check) -> dict:
    """The device, its driver, torch's architectures against it, and the precision of ``auto``."""
    device = check.device
    chosen = resolve_precision("auto", torch.device(device))
    if not check.cuda:
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
    props = torch.cuda.get_device_properties(device)
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


def device_rows(device: dict, report: dict) -> list[Row]:
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


# ---------------------------------------------------------------------------------- throughput


def throughput_cases(check: Check) -> list[tuple[str, bool]]:
    """(precision, compiled) of each case: bf16 only on GPUs with bf16 tensor cores (on a V100
    torch emulates it, slower than fp32), and compilation in the precision ``auto`` picks."""
    native_bf16 = not check.cuda or torch.cuda.get_device_capability(check.device) >= (8, 0)
    cases = [(p, False) for p in ("bf16", "fp16", "fp32") if p != "bf16" or native_bf16]
    return [*cases, (check.chosen, True)]


def measure_case(check: Check, precision: str, compiled: bool, flops: float) -> dict:
    """One throughput case: ``precision`` (compiled or not) for its steps at the check's shape,
    priced at ``flops`` a step against the datasheet peak of the GPU."""
    shape, device = check.shape, check.device
    steps = check.steps_within(CASE_SECONDS, shape.batch, precision, shape.steps)
    steps = max(steps, min(MIN_STEPS, shape.steps))
    sync = (lambda: torch.cuda.synchronize(device)) if check.cuda else (lambda: None)
    if check.cuda:
        torch.cuda.reset_peak_memory_stats(device)
    clock = StepClock(min(20, steps // 3), steps - 1, sync)
    settings = settings_for(shape, steps, precision=precision, compile_layers=compiled)
    label = precision + (" compiled" if compiled else "")
    summary = run(check.paper_data, check.work / label.replace(" ", "_"), settings, device, clock)
    rate = clock.steps_per_second
    peak = peak_flops(check.gpu_name(), precision)
    return {
        "tokens_per_s": rate * shape.batch * shape.seq_len,
        "mfu": flops * rate / peak if peak else None,
        "first_train_loss": summary["first_train_loss"],
        "last_train_loss": summary["last_train_loss"],
        "dev_ppl": summary["best_dev_ppl"],
        "steps": steps,
        "peak_memory_gib": torch.cuda.max_memory_allocated(device) / 2**30 if check.cuda else None,
    }


def throughput(check: Check) -> dict:
    """Tokens/s, MFU, training loss and peak memory per precision, and compiled against eager."""
    flops = check.flops_per_step(check.shape.batch)
    results = {}
    for precision, compiled in throughput_cases(check):
        label = precision + (" compiled" if compiled else "")
        try:
            row = measure_case(check, precision, compiled, flops)
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
    results["vocab_size"] = read_vocab_size(check.paper_data / "tokenizer")
    return results


def throughput_rows(results: dict, report: dict) -> list[Row]:
    device = report.get("device", {})
    chosen, memory_gib = device.get("precision", "fp32"), device.get("memory_gib")
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
        shape = Shape(**report["shape"]).describe() if "shape" in report else "the batch"
        rows.append(
            ("peak memory, paper's batch", f"{peak:.1f} GiB{total}", f"{shape} in {chosen}")
        )
    return rows


# ---------------------------------------------------------------------------------- resume


class StopAfter(Exception):
    pass


def resume_matches(check: Check, precision: str) -> dict:
    """At the check's shape, a run stopped after its step-RESUME_EVERY checkpoint (the next step
    done and lost), rerun, against an uninterrupted run."""
    shape = check.shape
    settings = settings_for(
        shape,
        RESUME_STEPS,
        architecture={**shape.architecture(dropout=0.1), "sep_layers": 1},
        precision=precision,
        deterministic=True,
        checkpoint_steps=RESUME_EVERY,
        eval_interval=RESUME_STOP + 1,  # the rerun evaluates and selects again
        log_interval=2,
    )
    whole = check.work / f"resume_{precision}_whole"
    run(check.paper_data, whole, settings, check.device)

    def stop(step: int) -> None:
        if step == RESUME_STOP:
            raise StopAfter

    stopped = check.work / f"resume_{precision}_stopped"
    with contextlib.suppress(StopAfter):
        run(check.paper_data, stopped, settings, check.device, stop)
    run(check.paper_data, stopped, settings, check.device)
    a, b = weights(whole), weights(stopped)
    same = a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    print(f"  resume, {precision}, deterministic: {'bit for bit' if same else 'DIFFERENT'}")
    return {"same": same, "steps": RESUME_STEPS, "shape": shape.describe()}


def resume_rows(section: dict, precision: str) -> list[Row]:
    verdict = "bit for bit" if section["same"] else "DIFFERENT"
    detail = (
        f"at {section['shape']}: stopped after step {RESUME_STOP} (checkpoint of step "
        f"{RESUME_EVERY}) and rerun, against an uninterrupted run of {section['steps']} steps; "
        "deterministic: true, dropout 0.1"
    )
    return [(f"resume, {precision}", verdict, detail)]


# ---------------------------------------------------------------------------------- SIGTERM


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


def signal_stop(check: Check) -> dict:
    """SIGTERM in the middle of a run at the check's shape: seconds to checkpoint and exit, the
    checkpoint's size, and the rerun's first step and the seconds until it trained it."""
    steps, signal_at = 40, 20
    settings = settings_for(check.shape, steps, precision=check.chosen, log_interval=5)
    out, sent = check.work / f"signal_{check.chosen}", {}

    def send(step: int) -> None:
        if step == signal_at and "time" not in sent:
            send_sigterm(sent)

    try:
        run(check.paper_data, out, settings, check.device, send)
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
        run(check.paper_data, out, settings, check.device, watch)
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


def signal_rows(signalled: dict, report: dict) -> list[Row]:
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


# ---------------------------------------------------------------------------------- two processes


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def two_devices(check: Check) -> list[str]:
    """The devices of two processes: a GPU each, or both the one GPU (or the CPU)."""
    if not check.cuda:
        return ["cpu", "cpu"]
    return ["cuda:0", "cuda:1"] if torch.cuda.device_count() >= 2 else ["cuda:0", "cuda:0"]


def start_workers(spec: dict, out: Path, timeout: float) -> dict:
    """Two processes of this script (:func:`worker`) in torchrun's environment that train the
    spec's jobs one after the other, their output in ``out/workers.log``; killed past ``timeout``
    seconds. Returns whether they hung, their exit statuses and the log."""
    out.mkdir(parents=True, exist_ok=True)
    for job in spec["jobs"]:
        job["port"] = free_port()  # a process group of its own: one port each
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
            }
            command = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
            workers.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT))
        hung = _wait_all(workers, timeout)
    log_text = (out / "workers.log").read_text(errors="replace")
    return {"hung": hung, "codes": [w.returncode for w in workers], "log": log_text}


def _wait_all(workers: list, timeout: float) -> bool:
    """Wait for every worker; kill them all past ``timeout`` (with the processes they started,
    where they lead a session of their own). Returns whether any hung."""
    deadline = time.monotonic() + timeout
    for worker in workers:
        try:
            worker.wait(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            for other in workers:
                with contextlib.suppress(ProcessLookupError):
                    if os.getpgid(other.pid) == other.pid:
                        os.killpg(other.pid, signal.SIGKILL)
                other.kill()
                other.wait()
            return True
    return False


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"error": f"no result ({path.name})"}


def shared_gpu_refused(log: str, devices: list[str]) -> dict | None:
    """The skip of a case whose two processes shared the one GPU and NCCL refused that."""
    found = NCCL_SHARED_GPU.search(log)
    if devices[0] != devices[1] or not found:
        return None
    return {"skipped": f"NCCL refuses two processes on one GPU ({found.group(0).strip()[:160]})"}


def stop_agreement(check: Check) -> dict:
    """Two processes (one GPU each; on the CPU over gloo) of which process 1 gets SIGTERM: both
    must stop after the same step, process 0 having written its checkpoint. A process that
    stopped alone would leave the other waiting in its next all-reduce: the workers are killed
    after their timeout and the check fails."""
    if check.cuda and torch.cuda.device_count() < 2:
        return {"skipped": f"{torch.cuda.device_count()} GPU on this machine; it needs 2"}
    out = check.work / "two_ranks"
    settings = settings_for(
        check.shape, 30, precision=check.chosen, log_interval=5, threads=0 if check.cuda else 1
    )
    spec = {
        "kind": "stop",
        "data": str(check.paper_data),
        "jobs": [{"out": str(out), "settings": settings.to_dict()}],
        "devices": two_devices(check),
        "signal_at": 7,
    }
    workers = start_workers(spec, out, WORKER_TIMEOUT["cuda" if check.cuda else "cpu"])
    ranks = [_read_json(out / f"rank{rank}.json") for rank in (0, 1)]
    steps = [rank.get("stopped_step") for rank in ranks]
    result = {"ranks": ranks, "hung": workers["hung"], "log_tail": workers["log"][-2000:]}
    result["agreed"] = not workers["hung"] and steps[0] is not None and steps[0] == steps[1]
    result["stopped_step"] = steps[0] if result["agreed"] else steps
    print(
        f"  two processes, SIGTERM to process 1 after step {spec['signal_at']}: stopped after "
        f"steps {steps}{' (hung, killed)' if workers['hung'] else ''}",
        flush=True,
    )
    return result


def worker(spec_text: str) -> None:
    """One process of :func:`start_workers` (torchrun's environment set by the parent): trains
    the spec's jobs in turn, each into its folder ``out`` (its result in ``rank{RANK}.json``
    there); "stop": process 1 sends itself SIGTERM after step ``signal_at``."""
    spec = json.loads(spec_text)
    for job in spec["jobs"]:
        os.environ["MASTER_PORT"] = str(job["port"])
        worker_job(spec, job)


def worker_job(spec: dict, job: dict) -> None:
    rank = int(os.environ["RANK"])
    settings = PretrainSettings.from_dict(job["settings"])
    sent: dict = {}

    def send(step: int) -> None:
        signalled = spec["kind"] == "stop" and rank == 1 and step == spec["signal_at"]
        if signalled and "time" not in sent:
            send_sigterm(sent)

    result: dict = {"rank": rank}
    start, out = time.perf_counter(), Path(job["out"])
    try:
        run(Path(spec["data"]), out, settings, spec["devices"][rank], send, spec.get("keep", False))
        result["finished"] = True
    except SystemExit as stop:
        result["message"] = str(stop)
        result["stopped_step"] = stopped_step(str(stop))
        if "time" in sent:  # the signalled process: how long from its signal to its exit
            result["exit_s"] = time.perf_counter() - sent["time"]
    result["run_s"] = time.perf_counter() - start
    (out / f"rank{rank}.json").write_text(json.dumps(result), encoding="utf-8")


def agreement_rows(agreement: dict, report: dict) -> list[Row]:
    exit_s = agreement["ranks"][1].get("exit_s")
    exit_words = f"; process 1 exits {exit_s:.1f} s after it" if exit_s is not None else ""
    if agreement["agreed"]:
        verdict = f"both after step {agreement['stopped_step']}"
    else:
        verdict = "DISAGREE" + (" (hung: killed)" if agreement["hung"] else "")
    detail = f"SIGTERM to process 1 only; stopped after steps {agreement['stopped_step']}"
    return [("two processes' stop", verdict, detail + exit_words)]


# ---------------------------------------------------------------------------------- accumulation


def accumulation_matches(check: Check) -> dict:
    """The global batch of two micro-batches, trained by two processes of one micro-batch each
    (DDP) and by one process accumulating both (``no_sync`` until the last), in bf16 and in fp16:
    the same weights after ACCUMULATION_STEPS steps, to ACCUMULATION_TOLERANCE. The two processes
    train both precisions, one after the other (a process's start costs seconds)."""
    devices, jobs = two_devices(check), {}
    for precision in ("bf16", "fp16"):
        streams = 2 * check.shape.batch
        steps = check.steps_within(CASE_SECONDS / 2, streams, precision, ACCUMULATION_STEPS)
        jobs[precision] = settings_for(
            check.shape,
            steps,
            architecture=check.shape.architecture(dropout=0.1),
            world_size=2,  # the global batch: 2 x batch_size streams a step
            precision=precision,
            deterministic=True,
            warmup_steps=0,  # the full rate from the first step: the weights move their most
            threads=0 if check.cuda else 1,
        )
    folders = {p: check.work / f"accumulation_{p}_two" for p in jobs}
    spec = {"kind": "train", "data": str(check.paper_data), "devices": devices, "keep": True}
    spec["jobs"] = [{"out": str(folders[p]), "settings": s.to_dict()} for p, s in jobs.items()]
    timeout = len(jobs) * WORKER_TIMEOUT["cuda" if check.cuda else "cpu"]
    workers = start_workers(spec, check.work / "accumulation", timeout)
    if refused := shared_gpu_refused(workers["log"], devices):
        return refused
    results: dict = {"devices": devices, "micro_batch": check.shape.batch}
    for precision, settings in jobs.items():
        two = folders[precision]
        if not (two / "model" / "model.safetensors").is_file():
            status = "hung: killed" if workers["hung"] else f"exit statuses {workers['codes']}"
            results[precision] = {"error": f"two processes ({status}): {workers['log'][-1500:]}"}
            continue
        try:
            results[precision] = accumulated_against_two(check, settings, two)
        except Exception as error:  # one precision failing must not hide the other
            traceback.print_exc()
            results[precision] = {"error": f"{type(error).__name__}: {error}"}
    return results


def accumulated_against_two(check: Check, settings: PretrainSettings, two: Path) -> dict:
    """One process accumulating the micro-batches of ``settings``' global batch, against the
    weights and loss scale two processes ended with in ``two``."""
    one = two.with_name(two.name.replace("_two", "_one"))
    run(check.paper_data, one, settings, check.device, keep=True)
    a, b = weights(one), weights(two)
    difference = max((a[k].float() - b[k].float()).abs().max().item() for k in a)
    print(
        f"  accumulation, {settings.precision}: 2 processes x 1 micro-batch against 1 x 2: max "
        f"abs difference {difference:.2e} after {settings.total_steps} steps",
        flush=True,
    )
    return {
        "max_abs_difference": difference,
        "same": a.keys() == b.keys() and difference <= ACCUMULATION_TOLERANCE,
        "steps": settings.total_steps,
        "trained_on": trained_on((two / "log.txt").read_text(errors="replace")),
        "loss_scales": [loss_scale(one), loss_scale(two)],  # fp16: of 1 process, of 2
    }


def accumulation_rows(section: dict, report: dict) -> list[Row]:
    rows = []
    for precision in ("bf16", "fp16"):
        result, title = section[precision], f"accumulation, {precision}"
        if found := _error_row(title, result):
            rows += found
            continue
        scaling = " with loss scaling" if precision == "fp16" else ""
        one, two = result["loss_scales"]
        if one != two:  # a step skipped for fp16 overflow in one run and not in the other
            scaling += f" (its last loss scale: {one:g} on 1 process, {two:g} on 2)"
        rows.append(
            (
                title,
                "same weights" if result["same"] else "DIFFERENT",
                f"{result['trained_on']} ({' and '.join(section['devices'])}) x 1 micro-batch "
                f"of {section['micro_batch']} against 1 process x 2 (no_sync){scaling}, "
                f"{result['steps']} steps, deterministic: max abs difference "
                f"{result['max_abs_difference']:.1e} (at most {ACCUMULATION_TOLERANCE:.0e})",
            )
        )
    return rows


# ---------------------------------------------------------------------------------- torchrun


def torchrun_job(check: Check) -> dict:
    """``python -m torch.distributed.run --standalone --nproc-per-node 2 -m xling.pretrain`` as
    ``xling.cluster.launch`` starts a job of two GPUs: it must end with the selected model."""
    devices = two_devices(check)
    settings = settings_for(
        check.shape,
        check.steps_within(CASE_SECONDS / 2, 2 * check.shape.batch, check.chosen, TORCHRUN_STEPS),
        world_size=2,
        precision=check.chosen,
        log_interval=2,
        threads=0 if check.cuda else 1,
    )
    out = check.work / "torchrun"
    module_args = ["--data-dir", str(check.paper_data), "--languages", "en", "fr"]
    module_args += ["--out-model", str(out / "model"), "--work-dir", str(out / ".work")]
    module_args += ["--curve", str(out / "curve.csv"), "--summary", str(out / "summary.json")]
    module_args += ["--settings-json", json.dumps(settings.to_dict())]
    if devices[0] == devices[1] != "cpu":  # one GPU: both processes on it (else cuda:LOCAL_RANK)
        module_args += ["--device", devices[0]]
    command = torchrun_command(Launch(nodes=1, processes_per_node=2), module_args)
    path = os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with open(out / "torchrun.log", "w") as log:
        job = subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        hung = _wait_all([job], WORKER_TIMEOUT["cuda" if check.cuda else "cpu"])
    seconds, text = time.perf_counter() - start, (out / "torchrun.log").read_text(errors="replace")
    if hung or job.returncode or not (out / "model" / "model.safetensors").is_file():
        refused = shared_gpu_refused(text, devices)
        status = "hung: killed" if hung else f"exit status {job.returncode}"
        return refused or {"error": f"torchrun ({status}), no model: {text[-1500:]}"}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    print(f"  torchrun, 2 processes: a model after {settings.total_steps} steps in {seconds:.0f} s")
    return {
        "seconds": seconds,
        "steps": settings.total_steps,
        "global_batch": settings.global_batch,
        "dev_ppl": summary["best_dev_ppl"],
        "command": " ".join(command[: command.index("xling.pretrain") + 1]),
        "trained_on": trained_on(text),
    }


def torchrun_rows(section: dict, report: dict) -> list[Row]:
    command = section["command"].replace(sys.executable, "python")
    return [
        (
            "torchrun, 2 processes",
            "model written",
            f"{command}: {section['trained_on']}, {section['steps']} steps of "
            f"{section['global_batch']} streams in {section['seconds']:.0f} s, dev ppl "
            f"{section['dev_ppl']:.1f}",
        )
    ]


# ---------------------------------------------------------------------------------- memory


def memory_limits(check: Check) -> dict:
    """Peak memory of one process training the paper's micro-batch, and the largest micro-batch
    that fits: doubled until out of memory, then MEMORY_BISECTIONS bisections."""
    if not check.cuda:
        return {"skipped": "the CPU has no device memory to fill (--smoke)"}
    vocab = read_vocab_size(check.paper_data / "tokenizer")
    settings = settings_for(check.shape, MEMORY_STEPS, precision=check.chosen)
    config = settings.encoder_config(vocab, ["en", "fr"])
    # The FLOP model's limit: a try of more streams would take longer than MEMORY_TRY_SECONDS.
    per_stream = check.step_seconds(1, check.chosen)
    most = int(MEMORY_TRY_SECONDS / MEMORY_STEPS / per_stream) if per_stream else 1 << 16
    peaks: dict[int, float | None] = {}
    gc.collect()  # what the cases before left cached goes back to the GPU
    torch.cuda.empty_cache()

    def fits(streams: int) -> bool:
        if streams not in peaks:
            peaks[streams] = peak_memory(config, settings, streams, check.device)
            print(f"  micro-batch {streams}: {_gib(peaks[streams])}", flush=True)
        return peaks[streams] is not None

    largest, too_big = None, None
    if fits(check.shape.batch):
        largest = check.shape.batch
        while too_big is None and 2 * largest <= most:
            if fits(2 * largest):
                largest *= 2
            else:
                too_big = 2 * largest
        for _ in range(MEMORY_BISECTIONS if too_big else 0):
            middle = (largest + too_big) // 2
            if middle in (largest, too_big):
                break
            largest, too_big = (middle, too_big) if fits(middle) else (largest, middle)
    return {
        "micro_batch": check.shape.batch,
        "peak_gib": peaks[check.shape.batch],
        "largest": largest,
        "largest_peak_gib": peaks.get(largest),
        "out_of_memory_at": too_big,
        "memory_gib": torch.cuda.get_device_properties(check.device).total_memory / 2**30,
        "precision": check.chosen,
        "seq_len": check.shape.seq_len,
        "vocab_size": vocab,
        "tries": {str(streams): peak for streams, peak in peaks.items()},
    }


def peak_memory(config, settings: PretrainSettings, streams: int, device: str) -> float | None:
    """Peak GiB of MEMORY_STEPS training steps of ``streams`` streams; None: out of memory. The
    memory is freed after (the try's tensors go with its frames; collected, any in cycles)."""
    torch.cuda.reset_peak_memory_stats(device)
    out_of_memory = False
    try:
        train_a_few_steps(config, settings, streams, device)
    except torch.cuda.OutOfMemoryError:
        out_of_memory = True  # the tensors of the try go with its frames, after this block
    gc.collect()
    torch.cuda.empty_cache()
    return None if out_of_memory else torch.cuda.max_memory_allocated(device) / 2**30


def train_a_few_steps(config, settings: PretrainSettings, streams: int, device: str) -> None:
    """The engine's model, objective, optimizer, autocast and loss scaler on random batches."""
    torch.manual_seed(settings.seed)
    model = MLMEncoder(config).to(device)
    objective = MaskedLMObjective(model).train()
    optimizer, _ = build_optimizer(model, **settings.optimizer_options())
    autocast = autocast_for(settings.precision, torch.device(device))
    scaler = torch.amp.GradScaler("cuda", enabled=settings.precision == "fp16")
    tokens = streams * settings.seq_len
    selected_count = int(settings.mask_prob * tokens)
    for _ in range(MEMORY_STEPS):
        input_ids = torch.randint(
            NUM_SPECIAL, config.vocab_size, (streams, settings.seq_len), device=device
        )
        selected = torch.randperm(tokens, device=device)[:selected_count]
        targets = torch.randint(NUM_SPECIAL, config.vocab_size, (selected_count,), device=device)
        with autocast():
            loss = objective(input_ids, "en", selected, targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize(device)


def _gib(value: float | None) -> str:
    return "out of memory" if value is None else f"peak {value:.1f} GiB"


def memory_rows(section: dict, report: dict) -> list[Row]:
    total = f" of {section['memory_gib']:.0f} GiB"
    what = (
        f"one process in {section['precision']}, {section['micro_batch']} x "
        f"{section['seq_len']} tokens, vocabulary "
        f"{section['vocab_size']:,}: weights, Adam, activations"
    )
    rows = [(f"memory, micro-batch {section['micro_batch']}", _gib(section["peak_gib"]), what)]
    if section["largest"] is None:
        return rows
    limit = (
        f"out of memory at {section['out_of_memory_at']}"
        if section["out_of_memory_at"]
        else "none out of memory (the largest tried in the time budget)"
    )
    tried = ", ".join(section["tries"])
    rows.append(
        (
            "memory, largest micro-batch",
            f"{section['largest']} ({_gib(section['largest_peak_gib'])}{total})",
            f"{limit}; tried {tried}",
        )
    )
    return rows


# ---------------------------------------------------------------------------------- BERT


def bert_comparison(check: Check) -> dict:
    """bench/pretrain.py at the paper's shape; it measures in bf16, so only where bf16 is native."""
    if not check.cuda:
        return {"skipped": "on GPUs only"}
    if check.chosen != "bf16":
        return {"skipped": f"bench/pretrain.py measures in bf16; this GPU trains in {check.chosen}"}
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        import pretrain as pretrain_bench  # bench/pretrain.py, the side-by-side benchmark
    finally:
        sys.path.remove(str(Path(__file__).parent))
    return pretrain_bench.gpu_benchmark(rounds=3)


def bert_rows(bert: dict, report: dict) -> list[Row]:
    mfu = f", MFU {100 * bert['mfu']:.1f}%" if bert.get("mfu") else ""
    return [
        (
            "xling / BertForMaskedLM",
            f"{bert['ratio']:.2f}",
            f"{bert['xling']:,.0f} / {bert['bert']:,.0f} tok/s in bf16{mfu}",
        )
    ]


# ---------------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Case:
    """One check: its entry of the report (and of --cases), the first words of its rows in the
    table, what measures it and the rows it makes of its measurement."""

    key: str
    title: str
    measure: Callable[[Check], dict]
    rows: Callable[[dict, dict], list[Row]]


CASES = (
    Case("device", "device", device_check, device_rows),
    Case("throughput", "throughput", throughput, throughput_rows),
    *(
        Case(
            f"resume_{p}",
            f"resume, {p}",
            lambda check, p=p: resume_matches(check, p),
            lambda section, report, p=p: resume_rows(section, p),
        )
        for p in ("bf16", "fp16")
    ),
    Case("signal", "SIGTERM -> checkpoint -> exit", signal_stop, signal_rows),
    Case("two_ranks", "two processes' stop", stop_agreement, agreement_rows),
    Case("accumulation", "accumulation", accumulation_matches, accumulation_rows),
    Case("torchrun", "torchrun, 2 processes", torchrun_job, torchrun_rows),
    Case("memory", "memory", memory_limits, memory_rows),
    # Last: bench/pretrain.py allows TF32 for the rest of the process.
    Case("bert", "xling / BertForMaskedLM", bert_comparison, bert_rows),
)


def _error_row(name: str, section: dict) -> list[Row] | None:
    if "error" in section:
        return [(name, "ERROR", section["error"][:300])]
    if "skipped" in section:
        return [(name, "skipped", section["skipped"])]
    return None


def case_rows(case: Case, report: dict) -> list[Row]:
    """The rows of ``case``: ERROR with the error where it failed (its rows too)."""
    section = report.get(case.key)
    if section is None:
        return []
    if found := _error_row(case.title, section):
        return found
    try:
        return case.rows(section, report)
    except Exception as error:  # a measurement the rows cannot read is the case's failure
        traceback.print_exc()
        return [(case.title, "ERROR", f"its rows: {type(error).__name__}: {error}"[:300])]


def results_table(report: dict) -> str:
    """One markdown table of every check."""
    rows = [row for case in CASES for row in case_rows(case, report)]
    rows.append(("time", f"{report.get('seconds', 0):.0f} s", "this whole check"))
    lines = ["| check | result | detail |", "|---|---|---|"]
    for row in rows:
        cells = (" ".join(str(cell).split()).replace("|", "\\|") for cell in row)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run_checks(args, report: dict, work: Path) -> None:
    """Every case in turn (those of --cases); a failure is reported and the others still run."""
    shape = SMOKE if args.smoke else PAPER
    check = Check(work, shape, "cpu" if args.smoke else "cuda:0")
    chosen = set(args.cases.split(",")) if args.cases else {case.key for case in CASES}

    def section(case: Case) -> None:
        start = time.perf_counter()
        try:
            report[case.key] = case.measure(check)
        except Exception as error:
            traceback.print_exc()
            report[case.key] = {"error": f"{type(error).__name__}: {error}"}
        seconds = report.setdefault("case_seconds", {})
        seconds[case.key] = time.perf_counter() - start
        print(f"[{case.key}: {seconds[case.key]:.0f} s]", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    section(CASES[0])  # the device, always: the other cases need its precision
    print(json.dumps(report["device"], indent=1), flush=True)
    check.chosen = report["device"].get("precision") or resolve_precision(
        "auto", torch.device(check.device)
    )
    start = time.perf_counter()
    sentences = {"train": shape.sentences, "valid": 200, "test": 10}
    write_synthetic_vocab_dir(
        check.paper_data, sentences=sentences, vocabulary_scale=shape.vocabulary_scale
    )
    print(f"synthetic corpus written in {time.perf_counter() - start:.0f} s")
    print(f"engine at {shape.describe()}:")
    for case in CASES[1:]:
        if case.key in chosen:
            section(case)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes on the CPU")
    parser.add_argument(
        "--out",
        help="write the table of results here (markdown; default: gpu_check.md, none with --smoke)",
    )
    parser.add_argument("--json", help="also write every measurement here")
    keys = ",".join(case.key for case in CASES[1:])
    parser.add_argument("--cases", help=f"run only these, comma-separated (of {keys})")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # a process of start_workers
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    unknown = set(args.cases.split(",")) - set(keys.split(",")) if args.cases else set()
    if unknown:
        parser.error(f"--cases: no case {', '.join(sorted(unknown))}; the cases: {keys}")
    if not args.smoke and not torch.cuda.is_available():
        sys.exit("no GPU visible to torch; run with --smoke to check the script on the CPU")
    # cuBLAS reads its workspace setting when the process first uses it, and a deterministic run
    # needs this one: a pretraining job sets it before its first GPU work, so this process does.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    report: dict = {"shape": asdict(SMOKE if args.smoke else PAPER)}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        run_checks(args, report, Path(tmp))
    report["seconds"] = time.perf_counter() - start
    table = results_table(report)
    print("\n" + table)
    out = args.out or (None if args.smoke else "gpu_check.md")
    if out:
        Path(out).write_text(table, encoding="utf-8")
        print(f"the table: {out}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
