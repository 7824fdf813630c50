"""torchrun, two processes (CPU, gloo): DDP with language-specific layers trains, writes once;
on a work directory another trainer holds, both processes stop at once; a signal to one, or the
time limit process 0 watches, stops both after one checkpoint; a run started on one process
continues on two with the same global batch."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

from xling.jobs.worklock import WorkDirLock
from xling.model import load_pretrained
from xling.pretrain import PretrainSettings, pretrain_in_folder
from xling.pretrain.synthetic import write_synthetic_vocab_dir


def torchrun_command(tmp_path, **changes) -> list[str]:
    """torchrun of two processes on a new corpus in ``tmp_path``, with these settings changed."""
    if not (tmp_path / "vocab").exists():
        write_synthetic_vocab_dir(
            tmp_path / "vocab", sentences={"train": 300, "valid": 60}, anchors=10,
            vocabulary_scale=0.2,
        )  # fmt: skip
    settings = PretrainSettings(
        # Separate bottom layers: in every step the other language's layer gets no gradient.
        architecture={
            "dim": 32,
            "layers": 2,
            "heads": 2,
            "ffn_dim": 64,
            "max_positions": 16,
            "sep_layers": 1,
            "dropout": 0.0,
            "attention_dropout": 0.0,
        },
        seq_len=16,
        batch_size=4,
        world_size=2,  # the global batch: two processes of 4
        lr=3e-3,
        warmup_steps=5,
        total_steps=12,
        eval_interval=6,
        dev_tokens=1024,
        log_interval=3,
        threads=1,
    )
    settings = PretrainSettings.from_dict({**settings.to_dict(), **changes})
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        "-m",
        "xling.pretrain",
        "--data-dir",
        str(tmp_path / "vocab"),
        "--languages",
        "en",
        "fr",
        "--out-model",
        str(out / "model"),
        "--work-dir",
        str(out / ".work"),
        "--curve",
        str(out / "curve.csv"),
        "--summary",
        str(out / "summary.json"),
        "--settings-json",
        json.dumps(settings.to_dict()),
        "--device",
        "cpu",
    ]
    return command


def test_torchrun_with_two_processes(tmp_path):
    command, out = torchrun_command(tmp_path), tmp_path / "out"
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["world_size"] == 2
    assert summary["tokens"] == 12 * 2 * 4 * 16  # both processes' windows count
    assert done.stdout.count("done: selected step") == 1, "only process 0 writes"
    model = load_pretrained(out / "model")
    assert set(model.language_layers) == {"en", "fr"}
    assert [p.name for p in (out / ".work").iterdir()] == ["finished"]
    # rerun after Snakemake deleted the outputs: process 0 puts them back, and neither trains
    weights = (out / "model" / "model.safetensors").read_bytes()
    shutil.rmtree(out / "model")
    (out / "summary.json").unlink()
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    own, replayed = again.stdout.split("--- the training of these outputs logged")
    assert own.count("restored") == 1 and "done: selected" not in own
    assert replayed.count("done: selected step") == 1  # the training's log, written once
    assert (out / "model" / "model.safetensors").read_bytes() == weights
    assert json.loads((out / "summary.json").read_text()) == summary


def test_torchrun_on_a_busy_work_dir_stops_every_process(tmp_path):
    command = torchrun_command(tmp_path)
    with WorkDirLock(tmp_path / "out" / ".work", "pretraining"):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "is in use by pretraining" in done.stderr  # process 0
    assert "process 0 could not lock the work directory" in done.stderr  # process 1
    assert not (tmp_path / "out" / "model").exists()


def _descendants(pid: int) -> list[int]:
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _rank_of(pid: int) -> str | None:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    ranks = [item[5:].decode() for item in environ if item.startswith(b"RANK=")]
    return ranks[0] if ranks else None


def test_a_signal_to_one_process_stops_every_process_after_a_checkpoint(tmp_path):
    """SLURM's early signal reaches each process at another point of its step; here only
    process 1 gets it. All stop at the next step they check together, process 0 checkpoints."""
    command = torchrun_command(tmp_path)
    settings = json.loads(command[command.index("--settings-json") + 1])
    settings.update(total_steps=100_000, eval_interval=100_000)  # runs until stopped
    command[command.index("--settings-json") + 1] = json.dumps(settings)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in process.stdout:  # the first progress line: both processes train
            if "step 3/" in line:
                break
        ranks = {_rank_of(pid): pid for pid in _descendants(process.pid)}
        os.kill(ranks["1"], signal.SIGTERM)
        output = process.communicate(timeout=120)[0]
    finally:
        process.kill()
    assert process.returncode != 0
    assert f"stopped by signal {int(signal.SIGTERM)} after checkpointing step" in output  # 1
    assert "stopped by another process's signal after checkpointing step" in output  # 0
    steps = {int(m) for m in re.findall(r"after checkpointing step (\d+)", output)}
    assert len(steps) == 1, "both at the same step"
    (checkpoint,) = (tmp_path / "out" / ".work").glob("checkpoint-step*.pt")
    assert checkpoint.name == f"checkpoint-step{steps.pop()}.pt"


def test_the_time_limit_process_0_watches_stops_every_process_after_one_checkpoint(tmp_path):
    """Under SLURM process 0 reads the job's end and decides; the others stop with it, at the
    same step, after its checkpoint."""
    command = torchrun_command(
        tmp_path, total_steps=100_000, eval_interval=100_000, stop_margin_minutes=0.05
    )
    end = time.time() + 3 + 40  # 40 s after the margin: time to start both and train a while
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["SLURM_JOB_END_TIME"] = str(int(end))
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    stops = re.findall(r"stopped 0\.05 min before the job's time limit after checkpointing "
                       r"step (\d+)", output)  # fmt: skip
    # process 0's log line, and both processes' exits: at the same step
    assert len(stops) == 3 and len(set(stops)) == 1, output[-3000:]
    assert time.time() >= end - 3, "not before its time"
    (checkpoint,) = (tmp_path / "out" / ".work").glob("checkpoint-step*.pt")
    assert checkpoint.name == f"checkpoint-step{stops[0]}.pt"
    assert output.count(f"checkpoint step {stops[0]} ") == 1, "process 0 alone writes it"


def test_a_run_started_on_one_process_continues_on_two_with_the_same_global_batch(tmp_path):
    """One process accumulating 2 micro-batches of 4 for 6 steps, then torchrun on 2 processes of
    4 to step 12: the same blocks (windows, masks, dropout) on other processes, so the same
    weights as 12 steps on one process. Bit for bit here: two processes scale each loss by 2
    and DDP halves the sum of their gradients, which one process accumulates as is."""
    command = torchrun_command(tmp_path, total_steps=12)
    settings = PretrainSettings.from_dict(json.loads(command[command.index("--settings-json") + 1]))
    settings.architecture.update(dropout=0.1, attention_dropout=0.1)  # dropout per micro-batch
    command[command.index("--settings-json") + 1] = json.dumps(settings.to_dict())
    job = (tmp_path / "vocab", ["en", "fr"])
    half = PretrainSettings.from_dict({**settings.to_dict(), "total_steps": 6})
    pretrain_in_folder(tmp_path / "out", *job, half, device="cpu", keep_work_dir=True)
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "at step 6" in done.stdout
    assert "8 streams a step = 2 process(es) x 1 micro-batch(es) of 4" in done.stdout
    log = tmp_path / "whole.log"
    whole = pretrain_in_folder(tmp_path / "whole", *job, settings, device="cpu", log_file=log)
    assert "8 streams a step = 1 process(es) x 2 micro-batch(es) of 4" in log.read_text()
    ours = load_file(tmp_path / "out" / "model" / "model.safetensors")
    theirs = load_file(tmp_path / "whole" / "model" / "model.safetensors")
    assert all(torch.equal(ours[name], weights) for name, weights in theirs.items())
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["world_size"] == 2 and summary["tokens"] == whole["tokens"] == 12 * 8 * 16
