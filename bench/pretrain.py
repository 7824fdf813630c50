"""Training throughput of xling's encoder against transformers' BertForMaskedLM, side by side.

Both models have the same size (layers, width, heads, FFN, vocabulary, positions) and train with the
same optimizer (fused Adam) on identical batches (same corrupted inputs, same predicted positions).
The two alternate round by round, so that machine noise hits both alike. BertForMaskedLM is used as
its users use it, ``model(input_ids, labels=...)``, which scores every position; xling scores only
the selected ones. Printed: tokens per second of each (median over rounds) and their ratio.

On a CUDA machine the script also measures bf16 autocast throughput at the paper's model size and
xling's model FLOPs utilization (MFU) against the GPU's datasheet peak.

    python bench/pretrain.py              # CPU sizes (and the GPU size if a GPU is visible)
    python bench/pretrain.py --quick      # fewer rounds
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import yaml
from transformers import BertConfig, BertForMaskedLM

from xling.model import EncoderConfig, MLMEncoder
from xling.pretrain.flops import peak_flops, training_flops_per_step
from xling.pretrain.masking import mask_tokens
from xling.pretrain.objective import MaskedLMObjective


@dataclass
class Size:
    name: str
    layers: int
    dim: int
    heads: int
    vocab: int
    seq_len: int
    batch: int

    def encoder_config(self) -> EncoderConfig:
        return EncoderConfig(
            vocab_size=self.vocab,
            languages=["en", "fr"],
            dim=self.dim,
            layers=self.layers,
            heads=self.heads,
            ffn_dim=4 * self.dim,
            dropout=0.0,
            attention_dropout=0.0,
            max_positions=self.seq_len,
        )

    def bert_config(self) -> BertConfig:
        return BertConfig(
            vocab_size=self.vocab,
            hidden_size=self.dim,
            num_hidden_layers=self.layers,
            num_attention_heads=self.heads,
            intermediate_size=4 * self.dim,
            max_position_embeddings=self.seq_len,
            type_vocab_size=1,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            hidden_act="gelu",
        )


def demo_size() -> Size:
    """The demo's bilingual model and batch as config/demo.yaml sets them; the vocabulary is the
    size of the demo's en-fr joint BPE (2,133 types in the run of 2026-11-28)."""
    demo = yaml.safe_load((Path(__file__).resolve().parents[1] / "config/demo.yaml").read_text())
    model, batches = demo["model"], demo["pretrain"]
    assert model["ffn_dim"] == 4 * model["dim"], "Size assumes XLM's FFN of 4 x width"
    return Size(
        "demo", model["layers"], model["dim"], model["heads"], 2_133, batches["seq_len"],
        batches["batch_size"],
    )  # fmt: skip


CPU_SIZES = [
    # The machine-speed yardstick that docs/ quote (18,900 tokens/s on 2026-11-24): the demo model
    # of that day, 16 streams of 64 tokens, kept fixed so that its numbers stay comparable.
    Size("yardstick", layers=8, dim=64, heads=4, vocab=2_000, seq_len=64, batch=16),
    demo_size(),  # today's demo: what its pretraining jobs run
    # The paper's shape scaled down 3x in width: vocabulary / width = 125 as 95k / 768.
    Size("paper-shaped", layers=8, dim=256, heads=4, vocab=32_000, seq_len=128, batch=8),
]
# The paper's model (section 3.1) with a joint 80k-merge BPE vocabulary (about 95k types).
GPU_SIZE = Size("paper", layers=8, dim=768, heads=12, vocab=95_000, seq_len=256, batch=96)


def make_batches(size: Size, count: int, device) -> list[tuple]:
    """Masked batches from a Zipfian token stream, as tensors for both models."""
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(count):
        tokens = np.minimum(5 + rng.zipf(1.2, (size.batch, size.seq_len)), size.vocab - 1)
        masked = mask_tokens(tokens, rng, np.arange(5, size.vocab))
        input_ids = torch.from_numpy(masked.input_ids).to(device)
        selected = torch.from_numpy(masked.selected).to(device)
        targets = torch.from_numpy(masked.targets).to(device)
        labels = torch.full((size.batch * size.seq_len,), -100, dtype=torch.long, device=device)
        labels[selected] = targets
        batches.append((input_ids, selected, targets, labels.view(size.batch, size.seq_len)))
    return batches


def trainers(size: Size, device, autocast):
    torch.manual_seed(0)
    ours = MaskedLMObjective(MLMEncoder(size.encoder_config())).to(device).train()
    bert = BertForMaskedLM(size.bert_config()).to(device).train()
    ours_optimizer = torch.optim.Adam(ours.parameters(), lr=1e-4, fused=True)
    bert_optimizer = torch.optim.Adam(bert.parameters(), lr=1e-4, fused=True)

    def step_ours(batch):
        input_ids, selected, targets, _ = batch
        with autocast():
            loss = ours(input_ids, "en", selected, targets)
        loss.backward()
        ours_optimizer.step()
        ours_optimizer.zero_grad(set_to_none=True)

    def step_bert(batch):
        input_ids, _, _, labels = batch
        with autocast():
            loss = bert(input_ids=input_ids, labels=labels).loss
        loss.backward()
        bert_optimizer.step()
        bert_optimizer.zero_grad(set_to_none=True)

    counts = {
        "xling": sum(p.numel() for p in ours.parameters()),
        "bert": sum(p.numel() for p in bert.parameters()),
    }
    return {"xling": step_ours, "bert": step_bert}, counts


def measure(size: Size, device, autocast, rounds: int, steps: int) -> dict[str, float]:
    """Median tokens/s of each model; the two alternate round by round."""
    batches = make_batches(size, steps, device)
    steps_of, counts = trainers(size, device, autocast)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for step in steps_of.values():  # warm-up: allocator, kernels, first optimizer state
        for batch in batches[:2]:
            step(batch)
    rates = {name: [] for name in steps_of}
    for _ in range(rounds):
        for name, step in steps_of.items():
            sync()
            start = time.perf_counter()
            for batch in batches:
                step(batch)
            sync()
            rates[name].append(steps * size.batch * size.seq_len / (time.perf_counter() - start))
    result = {name: statistics.median(values) for name, values in rates.items()}
    print(
        f"{size.name:>13}: {size.layers} layers, width {size.dim}, vocabulary {size.vocab:,}, "
        f"batch {size.batch} x {size.seq_len}; parameters xling {counts['xling']:,}, "
        f"bert {counts['bert']:,}"
    )
    print(
        f"{'':>13}  xling {result['xling']:,.0f} tok/s, BertForMaskedLM {result['bert']:,.0f} "
        f"tok/s -> ratio {result['xling'] / result['bert']:.2f}"
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (noisier)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rounds = 3 if args.quick else 5
    cpu = torch.device("cpu")
    print(f"training throughput, CPU ({args.threads} threads), median of {rounds} rounds")
    for size in CPU_SIZES:
        measure(size, cpu, nullcontext, rounds, steps=8 if size.dim <= 64 else 3)
    if torch.cuda.is_available():
        gpu_benchmark(rounds)


def gpu_benchmark(rounds: int) -> dict[str, float | None]:
    """Tokens/s of both models at the paper's size in bf16, their ratio and xling's MFU."""
    device = torch.device("cuda")
    name = torch.cuda.get_device_name(device)
    torch.backends.cuda.matmul.allow_tf32 = True
    print(f"training throughput, {name}, bf16 autocast, median of {rounds} rounds")
    autocast = lambda: torch.autocast("cuda", dtype=torch.bfloat16)  # noqa: E731
    result = measure(GPU_SIZE, device, autocast, rounds, steps=10)
    config = GPU_SIZE.encoder_config()
    flops = training_flops_per_step(
        config, GPU_SIZE.batch, GPU_SIZE.seq_len, 0.15 * GPU_SIZE.seq_len
    )
    steps_per_second = result["xling"] / (GPU_SIZE.batch * GPU_SIZE.seq_len)
    achieved = flops * steps_per_second
    peak = peak_flops(name, "bf16")
    line = f"{'':>13}  xling model FLOPs {achieved / 1e12:.1f} TFLOP/s"
    if peak:
        line += f" = MFU {100 * achieved / peak:.1f}% of the {peak / 1e12:.0f} TFLOP/s bf16 peak"
    else:
        line += " (peak of this GPU unknown: add it to xling.pretrain.flops.PEAK_FLOPS)"
    print(line)
    return {
        **result,
        "ratio": result["xling"] / result["bert"],
        "mfu": achieved / peak if peak else None,
    }


if __name__ == "__main__":
    main()
