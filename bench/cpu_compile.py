"""torch.compile on the CPU for the demo's pretraining step, against eager, side by side.

The demo's models are tiny (config/demo.yaml: 8 layers of width 64, 21 streams of 24 tokens a step),
so about half of a step is spent outside matrix products: layer norms, GELU, attention's small
kernels, the optimizer. Inductor fuses such operations; whether that pays for its compilation in a
job of about a minute is what this measures. Three trainers of the same model on the same batches,
one thread each as the demo's jobs run: eager (what the demo does), each Transformer layer compiled
(``pretrain.compile_layers``, the GPU option) and the whole loss compiled. Printed: the
compilation's wall time, the median milliseconds a step over rounds that alternate the trainers,
the ratio to eager, and the loss after the same steps (inductor rounds differently).

    python bench/cpu_compile.py             # 5 rounds of 40 steps
    python bench/cpu_compile.py --quick     # 3 rounds
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch
import yaml

from xling.model import EncoderConfig, MLMEncoder
from xling.model.optim import EagerAdam
from xling.pretrain.masking import mask_tokens
from xling.pretrain.objective import MaskedLMObjective

DEMO = Path(__file__).resolve().parents[1] / "config" / "demo.yaml"
VOCABULARY = 2_500  # about a demo pair's joint BPE vocabulary


def demo_shape() -> tuple[dict, int, int]:
    """The demo's architecture and its streams a step and tokens a stream."""
    config = yaml.safe_load(DEMO.read_text(encoding="utf-8"))
    return config["model"], config["pretrain"]["batch_size"], config["pretrain"]["seq_len"]


def trainer(architecture: dict, mode: str):
    """A step function on a fresh model (same seed for every mode) and its compile time."""
    torch.manual_seed(0)
    config = EncoderConfig(vocab_size=VOCABULARY, languages=["en", "fr"], **architecture)
    model = MLMEncoder(config)
    objective = MaskedLMObjective(model)
    if mode == "layers compiled":
        for layer in model.shared_layers:
            layer.compile()
    elif mode == "loss compiled":
        objective = torch.compile(objective)
    optimizer = EagerAdam(model.parameters(), lr=1e-3, fused=True)

    def step(batch) -> float:
        loss = objective(batch[0], "en", batch[1], batch[2])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.item()

    return step


def random_batches(streams: int, seq_len: int, count: int, rng: np.random.Generator) -> list:
    """``count`` masked batches of random tokens: (input ids, selected positions, targets)."""
    batches = []
    for _ in range(count):
        tokens = rng.integers(5, VOCABULARY, (streams, seq_len))
        masked = mask_tokens(tokens, rng, np.arange(5, VOCABULARY))
        arrays = (masked.input_ids, masked.selected, masked.targets)
        batches.append([torch.from_numpy(a) for a in arrays])
    return batches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 5")
    args = parser.parse_args()
    torch.set_num_threads(1)
    architecture, streams, seq_len = demo_shape()
    batches = random_batches(streams, seq_len, 40, np.random.default_rng(0))
    modes = ["eager", "layers compiled", "loss compiled"]
    steps, compile_seconds = {}, {}
    for mode in modes:
        steps[mode] = trainer(architecture, mode)
        start = time.perf_counter()
        for batch in batches[:3]:  # the first calls compile
            steps[mode](batch)
        compile_seconds[mode] = time.perf_counter() - start
    times = {mode: [] for mode in modes}
    losses = {}
    for _ in range(3 if args.quick else 5):
        for mode in modes:
            start = time.perf_counter()
            for batch in batches:
                losses[mode] = steps[mode](batch)
            times[mode].append(1000 * (time.perf_counter() - start) / len(batches))
    print(
        f"demo step on one CPU thread ({torch.backends.cpu.get_cpu_capability()}): "
        f"{architecture['layers']} layers, width {architecture['dim']}, "
        f"{streams} x {seq_len} tokens"
    )
    eager = statistics.median(times["eager"])
    for mode in modes:
        median = statistics.median(times[mode])
        print(
            f"{mode:>16}: first 3 steps {compile_seconds[mode]:5.1f} s, {median:5.1f} ms a step, "
            f"ratio to eager {median / eager:.2f}, loss {losses[mode]:.5f}"
        )


if __name__ == "__main__":
    main()
