"""torchrun, two processes (CPU, gloo): DDP with language-specific layers trains, writes once;
on a work directory another trainer holds, both processes stop at once."""

import json
import subprocess
import sys

from xling.model import load_pretrained
from xling.pretrain import PretrainSettings
from xling.pretrain.synthetic import write_synthetic_vocab_dir
from xling.worklock import WorkDirLock


def torchrun_command(tmp_path) -> list[str]:
    write_synthetic_vocab_dir(
        tmp_path / "vocab", sentences={"train": 300, "valid": 60}, anchors=10, vocabulary_scale=0.2
    )
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
        lr=3e-3,
        warmup_steps=5,
        total_steps=12,
        eval_interval=6,
        dev_tokens=1024,
        log_interval=3,
        threads=1,
    )
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
    assert not (out / ".work").exists()


def test_torchrun_on_a_busy_work_dir_stops_every_process(tmp_path):
    command = torchrun_command(tmp_path)
    with WorkDirLock(tmp_path / "out" / ".work", "pretraining"):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "is in use by pretraining" in done.stderr  # process 0
    assert "process 0 could not lock the work directory" in done.stderr  # process 1
    assert not (tmp_path / "out" / "model").exists()
