"""What a training process pays before its first update: torch's fused Adam against EagerAdam.

torch's optimizers import ``torch._dynamo`` on first use (their compile guards); EagerAdam
(``xling.model.optim``) is the same Adam without them. Each trial is a fresh Python process that
imports
torch, builds a demo-size encoder (8 layers, width 64), its optimizer and schedule, and takes one
step; it prints the seconds from the start of the import to the end of the step. The trials of
the two alternate, so that a busy machine slows both alike; the best of each is compared.

    python bench/optimizer_startup.py [--trials 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap

TRIAL = textwrap.dedent(
    """
    import time
    start = time.perf_counter()
    import torch
    from xling.model import EncoderConfig, MLMEncoder
    from xling.model.optim import EagerAdam

    torch.set_num_threads(1)
    config = EncoderConfig(vocab_size=2000, languages=["en"], layers=8, dim=64, heads=4,
                           ffn_dim=256)
    model = MLMEncoder(config)
    optimizer = {adam}(model.parameters(), lr=1e-3, fused=True)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    ids = torch.randint(5, 2000, (8, 24))
    model(ids, "en").last_hidden_state.pow(2).mean().backward()
    optimizer.step()
    schedule.step()
    print(time.perf_counter() - start)
    """
)
OPTIMIZERS = ("torch.optim.Adam", "EagerAdam")  # the class each trial builds


def trial(adam: str) -> float:
    code = TRIAL.format(adam=adam)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"the trial with {adam} failed:\n{done.stderr}")
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {adam: [] for adam in OPTIMIZERS}
    for _ in range(args.trials):
        for adam in OPTIMIZERS:
            seconds[adam].append(trial(adam))
    for name, values in seconds.items():
        print(f"{name:>17}: import to first update {min(values):.2f} s (best of {args.trials})")
    best = {name: min(values) for name, values in seconds.items()}
    saved = best["torch.optim.Adam"] - best["EagerAdam"]
    ratio = best["torch.optim.Adam"] / best["EagerAdam"]
    print(f"EagerAdam starts {ratio:.2f}x as fast: {saved:.2f} s less a training process")


if __name__ == "__main__":
    main()
