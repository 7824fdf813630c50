"""GPU checks of the pretraining engine at the paper's model size: precision, speed, resume.

What a user would otherwise learn from the first hours of a cluster job, measured on one GPU in one
process, through the engine itself (``xling.pretrain.pretrain``: data sampling and masking on the
host, prefetch, autocast, loss scaling, clipping, the schedule), on a synthetic corpus
(``xling.pretrain.synthetic``) whose vocabulary is about the paper's joint BPE (95k types):

1. throughput and model FLOPs utilization (MFU, ``xling.pretrain.flops``) at Wu et al.'s shape
   (8 layers, width 768, 12 heads, 256-token streams, 96 a step) in bf16, fp16 (loss scaling) and
   fp32, each with its training loss: the ratios bf16 / fp32 and fp16 / fp32;
2. ``pretrain.compile_layers`` (torch.compile of each Transformer layer) against eager, bf16;
3. resume on the GPU: a run stopped after a checkpoint and rerun ends with the same weights as an
   uninterrupted one, bit for bit, with ``deterministic: true`` (bf16 and fp16, dropout on);
4. xling's encoder against transformers' BertForMaskedLM at that shape (``bench/pretrain.py``).

    python bench/gpu_check.py            # on a CUDA machine (about 3 minutes on an H200)
    python bench/gpu_check.py --smoke    # tiny sizes on the CPU: checks the script, not the GPU
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file

from xling.pretrain import PretrainSettings, pretrain_in_folder
from xling.pretrain.flops import peak_flops, training_flops_per_step
from xling.pretrain.inputs import read_vocab_size
from xling.pretrain.synthetic import write_synthetic_vocab_dir

sys.path.insert(0, str(Path(__file__).parent))
import pretrain as pretrain_bench  # bench/pretrain.py, the side-by-side benchmark


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


def throughput(data_dir: Path, work: Path, shape: Shape, device: str) -> dict:
    """Tokens/s, MFU and training loss per precision, and compiled against eager (bf16)."""
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    vocab = read_vocab_size(data_dir / "tokenizer")
    config = settings_for(shape, 1).encoder_config(vocab, ["en", "fr"])
    flops = training_flops_per_step(config, shape.batch, shape.seq_len, 0.15 * shape.seq_len)
    name = torch.cuda.get_device_name() if device.startswith("cuda") else "cpu"
    cases = [("bf16", False), ("fp16", False), ("fp32", False), ("bf16", True)]
    results = {}
    for precision, compiled in cases:
        steps = shape.steps
        if device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats()
        clock = StepClock(min(20, steps // 3), steps - 1, sync)
        settings = settings_for(shape, steps, precision=precision, compile_layers=compiled)
        label = precision + (" compiled" if compiled else "")
        summary = run(data_dir, work / label.replace(" ", "_"), settings, device, clock)
        rate = clock.steps_per_second
        peak = peak_flops(name, precision)
        results[label] = {
            "tokens_per_s": rate * shape.batch * shape.seq_len,
            "mfu": flops * rate / peak if peak else None,
            "first_train_loss": summary["first_train_loss"],
            "last_train_loss": summary["last_train_loss"],
            "dev_ppl": summary["best_dev_ppl"],
            "steps": steps,
            "peak_memory_gib": (
                torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else None
            ),
        }
        row = results[label]
        mfu = f"MFU {100 * row['mfu']:.1f}%" if row["mfu"] is not None else "MFU n/a"
        print(
            f"  {label:>13}: {row['tokens_per_s']:>10,.0f} tok/s, {mfu}, train loss "
            f"{row['first_train_loss']:.3f} -> {row['last_train_loss']:.3f} in {steps} steps, "
            f"dev ppl {row['dev_ppl']:.1f}"
            + (f", peak {row['peak_memory_gib']:.1f} GiB" if row["peak_memory_gib"] else ""),
            flush=True,
        )
    base = results["fp32"]["tokens_per_s"]
    print(
        f"  ratios: bf16 / fp32 {results['bf16']['tokens_per_s'] / base:.2f}, fp16 / fp32 "
        f"{results['fp16']['tokens_per_s'] / base:.2f}, compiled / eager (bf16) "
        f"{results['bf16 compiled']['tokens_per_s'] / results['bf16']['tokens_per_s']:.2f}"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes on the CPU")
    parser.add_argument("--json", help="also write the measurements here")
    args = parser.parse_args()
    if not args.smoke and not torch.cuda.is_available():
        sys.exit("no GPU visible to torch; run with --smoke to check the script on the CPU")
    device = "cpu" if args.smoke else "cuda"
    # cuBLAS reads its workspace setting when the process first uses it, and a deterministic run
    # needs this one: a pretraining job sets it before its first GPU work, so this process does.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    shape = SMOKE if args.smoke else PAPER
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        print(
            f"{props.name}, {props.total_memory / 2**30:.0f} GiB, torch {torch.__version__}, "
            f"CUDA {torch.version.cuda}, bf16 {torch.cuda.is_bf16_supported()}"
        )
    report: dict = {"device": torch.cuda.get_device_name() if device == "cuda" else "cpu"}

    def section(name: str, measure) -> None:
        """Run one check; a failure is reported and the other checks still run."""
        try:
            report[name] = measure()
        except Exception as error:
            traceback.print_exc()
            report[name] = {"error": f"{type(error).__name__}: {error}"}
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        start = time.perf_counter()
        sentences = {"train": shape.sentences, "valid": 200, "test": 10}
        write_synthetic_vocab_dir(
            work / "paper", sentences=sentences, vocabulary_scale=shape.vocabulary_scale
        )
        write_synthetic_vocab_dir(work / "small", sentences={"train": 500, "valid": 100})
        print(f"synthetic corpora written in {time.perf_counter() - start:.0f} s")
        print(
            f"engine at {shape.layers} layers x {shape.dim}, batch {shape.batch} x {shape.seq_len}:"
        )
        section("throughput", lambda: throughput(work / "paper", work, shape, device))
        for precision in ("bf16", "fp16"):
            section(
                f"resume_{precision}",
                lambda p=precision: resume_matches(work / "small", work, device, p),
            )
        if device == "cuda":  # last: it allows TF32 for the rest of the process
            section("bert", lambda: pretrain_bench.gpu_benchmark(rounds=3))


if __name__ == "__main__":
    main()
