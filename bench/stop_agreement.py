"""What agreeing on a stop after every step costs a distributed pretraining job (2 gloo processes).

The processes of a job stop together (xling.pretrain.loop._stop_agreed): each step they reduce
their stop requests over the processes. This times DDP training steps of a small model (2 layers
of width 32, 8 streams of 32 tokens per process: a step far shorter than a GPU's, so that the
check weighs the most it can) three ways, in alternating rounds so that a busy machine slows each
alike: no check; an all-reduce read at once (the check as it was, every ``log_interval`` steps);
and the trainer's vote (xling.pretrain.trainer.StopVotes), cast after a step and counted after
the next. It prints the fastest round's seconds per step of each and its ratio to no check, and
the checks alone, back to back.

    python bench/stop_agreement.py [--steps 100] [--rounds 5]
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from xling.model import EncoderConfig, MLMEncoder
from xling.pretrain.distributed import Runtime
from xling.pretrain.loop import _objective
from xling.pretrain.trainer import StopVotes

WAYS = ("no check", "all-reduce read at once", "vote counted a step later")
VOCABULARY, STREAMS, TOKENS = 400, 8, 32


def check(way: str, votes: StopVotes) -> None:
    reading = [0.0, 0.0, -math.inf]  # no signal, time not up, no signal time
    if way == WAYS[1]:
        flags = torch.tensor(reading, dtype=torch.float64)
        dist.all_reduce(flags, op=dist.ReduceOp.MAX)
        flags.tolist()
    elif way == WAYS[2]:
        votes.count()
        votes.cast(reading)


def time_checks(way: str, checks: int) -> float:
    votes = StopVotes(torch.device("cpu"))
    dist.barrier()
    start = time.perf_counter()
    for _ in range(checks):
        check(way, votes)
    votes.count()
    return (time.perf_counter() - start) / checks


def time_steps(way: str, objective, optimizer, steps: int, rank: int) -> float:
    votes = StopVotes(torch.device("cpu"))
    generator = torch.Generator().manual_seed(rank)
    batches = [torch.randint(5, VOCABULARY, (STREAMS, TOKENS), generator=generator)] * 4
    selected = torch.arange(0, STREAMS * TOKENS, 7)
    dist.barrier()
    start = time.perf_counter()
    for step in range(steps):
        ids = batches[step % len(batches)]
        objective(ids, "en", selected, ids.reshape(-1)[selected]).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        check(way, votes)
    votes.count()  # the last vote, so that none is left in flight
    return (time.perf_counter() - start) / steps


def worker(rank: int, rendezvous: str, steps: int, rounds: int, results: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=2)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    config = EncoderConfig(VOCABULARY, ["en", "fr"], dim=32, layers=2, heads=2, ffn_dim=64)
    model = MLMEncoder(config)
    objective = _objective(model, Runtime(rank, rank, 2, torch.device("cpu")), compile_layers=False)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    time_steps(WAYS[0], objective, optimizer, 20, rank)  # warm-up
    seconds: dict[str, list[float]] = {way: [] for way in WAYS}
    alone: dict[str, list[float]] = {way: [] for way in WAYS[1:]}
    for _ in range(rounds):
        for way in WAYS:
            seconds[way].append(time_steps(way, objective, optimizer, steps, rank))
        for way in WAYS[1:]:
            alone[way].append(time_checks(way, 10 * steps))
    if rank == 0:
        seconds["alone"] = alone
        torch.save(seconds, results)
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="steps per way and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "seconds.pt"
        rendezvous = str(Path(folder) / "rendezvous")
        mp.spawn(worker, args=(rendezvous, args.steps, args.rounds, str(results)), nprocs=2)
        seconds = torch.load(results, weights_only=True)
    alone = seconds.pop("alone")
    base = min(seconds[WAYS[0]])
    print(f"{args.rounds} rounds of {args.steps} steps on 2 gloo processes (the fastest round)")
    for way in WAYS:
        per_step = min(seconds[way])
        spread = statistics.median(seconds[way]) / per_step
        print(
            f"{way:28s} {per_step * 1e3:8.3f} ms/step  {per_step / base:6.3f} x no check "
            f"(median round {spread:.2f} x the fastest)"
        )
    for way, values in alone.items():
        print(f"{way:28s} alone: {min(values) * 1e6:8.1f} us a check")


if __name__ == "__main__":
    main()
