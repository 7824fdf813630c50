"""Kill a pretraining job (SIGKILL, or SLURM's SIGTERM) at a random step and rerun it: the final
weights equal those of an uninterrupted run, bit for bit (CPU, deterministic settings). The same
from the previous checkpoint when the newest is truncated; and a rerun may change the threads."""

import json
import os
import random
import signal
import subprocess
import sys
import textwrap

import pytest
import torch
from safetensors.torch import load_file

from xling.pretrain import PretrainSettings, pretrain_in_folder, read_curve
from xling.pretrain.checkpoint import checkpoint_files
from xling.pretrain.synthetic import write_synthetic_vocab_dir

TOTAL_STEPS, CHECKPOINT_STEPS = 30, 4

# The job runs in a child process so that it can really be killed. It prints every finished step
# and, when asked, sleeps a little after each so that the parent can kill it mid-run.
CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from xling.pretrain import PretrainSettings, pretrain_in_folder

    data_dir, out, settings, delay = sys.argv[1], Path(sys.argv[2]), sys.argv[3], float(sys.argv[4])

    def on_step(step):
        print(f"STEP {step}", flush=True)
        time.sleep(delay)

    settings = PretrainSettings.from_dict(json.loads(settings))
    pretrain_in_folder(out, data_dir, ["en", "fr"], settings, step_callback=on_step)
    """
)


def settings_json(threads: int = 1) -> str:
    settings = PretrainSettings(
        # Dropout on and one separate layer: the dropout RNG and routing must resume exactly too.
        architecture={
            "dim": 32,
            "layers": 2,
            "heads": 2,
            "ffn_dim": 64,
            "max_positions": 16,
            "dropout": 0.1,
            "attention_dropout": 0.1,
            "sep_layers": 1,
        },
        seq_len=16,
        batch_size=4,
        lr=3e-3,
        warmup_steps=5,
        total_steps=TOTAL_STEPS,
        eval_interval=10,
        dev_tokens=1024,
        log_interval=5,
        checkpoint_steps=CHECKPOINT_STEPS,
        checkpoint_minutes=1e6,
        threads=threads,
        deterministic=True,
    )
    return json.dumps(settings.to_dict())


def run_in_process(root, out, step_callback=None, threads=1) -> dict:
    settings = PretrainSettings.from_dict(json.loads(settings_json(threads)))
    return pretrain_in_folder(
        out, root / "vocab", ["en", "fr"], settings, step_callback=step_callback
    )


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    root = tmp_path_factory.mktemp("resume")
    write_synthetic_vocab_dir(
        root / "vocab", sentences={"train": 300, "valid": 60}, anchors=10, vocabulary_scale=0.2
    )
    (root / "child.py").write_text(CHILD)
    reference = root / "reference"  # uninterrupted
    run_in_process(root, reference)
    return root, reference


def assert_same_outcome(reference, resumed):
    ours = load_file(str(resumed / "model" / "model.safetensors"))
    theirs = load_file(str(reference / "model" / "model.safetensors"))
    assert ours.keys() == theirs.keys()
    for name, tensor in theirs.items():
        assert torch.equal(ours[name], tensor), f"{name} differs after resuming"
    drop = lambda rows: [{k: v for k, v in r.items() if k != "elapsed_s"} for r in rows]  # noqa: E731
    assert drop(read_curve(resumed / "curve.csv")) == drop(read_curve(reference / "curve.csv"))
    summaries = [json.loads((d / "summary.json").read_text()) for d in (reference, resumed)]
    for summary in summaries:
        summary.pop("seconds")
    assert summaries[0] == summaries[1]


def test_sigkilled_job_resumes_to_identical_weights(job, tmp_path):
    root, reference = job
    # After the first checkpoint, and early enough that the kill lands before the end even on a
    # busy machine (the child pauses 50 ms after every step).
    step = random.randint(CHECKPOINT_STEPS + 1, TOTAL_STEPS - 5)
    out = tmp_path / "killed"
    # A real process, killed for real once it reports the chosen step.
    command = [sys.executable, str(root / "child.py"), str(root / "vocab"), str(out)]
    child = subprocess.Popen(
        [*command, settings_json(), "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in child.stdout:
        if line.strip() == f"STEP {step}":
            child.send_signal(signal.SIGKILL)
            break
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == -signal.SIGKILL, f"not killed at step {step}: {stderr}"
    assert not (out / "model").exists(), "no model may appear before the end"
    saved = torch.load(checkpoint_files(out / ".work")[0], weights_only=True)
    assert saved["step"] >= CHECKPOINT_STEPS
    run_in_process(root, out)  # the rerun of the same job
    assert_same_outcome(reference, out)


def test_sigterm_checkpoints_the_step_exits_and_resumes_to_identical_weights(job, tmp_path, capsys):
    root, reference = job
    step = random.randint(1, TOTAL_STEPS - 2)
    out = tmp_path / "terminated"
    handler_before = signal.getsignal(signal.SIGTERM)

    def terminate(current: int) -> None:
        if current == step:
            os.kill(os.getpid(), signal.SIGTERM)  # as SLURM warns a job before preemption

    with pytest.raises(SystemExit, match=f"stopped by signal {int(signal.SIGTERM)}"):
        run_in_process(root, out, step_callback=terminate)
    saved = torch.load(checkpoint_files(out / ".work")[0], weights_only=True)
    assert saved["step"] == step + 1, "the job finishes the step it is in, then checkpoints"
    assert signal.getsignal(signal.SIGTERM) == handler_before, "the job restores the handler"
    run_in_process(root, out)
    assert (
        f"resumed from {out / '.work' / f'checkpoint-step{step + 1}.pt'} at step {step + 1}"
        in capsys.readouterr().out
    )
    assert_same_outcome(reference, out)


class Crash(Exception):
    """A trainer dying between checkpoints (raised from the step callback)."""


def crash_after(step: int):
    def callback(current: int) -> None:
        if current == step:
            raise Crash

    return callback


def test_a_truncated_newest_checkpoint_falls_back_to_the_previous_one(job, tmp_path, capsys):
    root, reference = job
    out, work = tmp_path / "truncated", tmp_path / "truncated" / ".work"
    with pytest.raises(Crash):
        run_in_process(root, out, step_callback=crash_after(22))
    # Checkpoints at steps 4, 8, ..., 20: the last two are kept, each with its best model (dev
    # evaluations at steps 10 and 20), because the previous one is the fallback.
    newest, previous = checkpoint_files(work)
    assert (newest.name, previous.name) == ("checkpoint-step20.pt", "checkpoint-step16.pt")
    bests = [torch.load(path, weights_only=True)["best"]["step"] for path in (previous, newest)]
    assert bests == [10, 20]
    assert {p.name for p in work.glob("best-step*")} == {"best-step10", "best-step20"}
    newest.write_bytes(newest.read_bytes()[: newest.stat().st_size // 2])  # a truncated copy
    capsys.readouterr()
    run_in_process(root, out)
    log = capsys.readouterr().out
    assert f"warning: checkpoint {newest} cannot be read" in log
    assert f"resumed from {previous} at step 16" in log
    assert_same_outcome(reference, out)


def test_no_readable_checkpoint_starts_afresh(job, tmp_path, capsys):
    root, reference = job
    out, work = tmp_path / "unreadable", tmp_path / "unreadable" / ".work"
    with pytest.raises(Crash):
        run_in_process(root, out, step_callback=crash_after(10))
    for path in checkpoint_files(work):
        path.write_bytes(b"not a checkpoint")
    capsys.readouterr()
    run_in_process(root, out)
    log = capsys.readouterr().out
    assert "checkpoint-step8.pt, checkpoint-step4.pt); starting this job afresh" in log
    assert "resumed from" not in log
    assert_same_outcome(reference, out)


def test_a_rerun_may_use_another_thread_count(job, tmp_path, capsys):
    """Threads are not part of the resume key: they change speed and the order of float sums,
    not the training (see PretrainSettings.resume_key)."""
    root, reference = job
    out = tmp_path / "threads"
    with pytest.raises(Crash):
        run_in_process(root, out, step_callback=crash_after(14), threads=1)
    capsys.readouterr()
    run_in_process(root, out, threads=2)
    assert "at step 12" in capsys.readouterr().out
    assert torch.get_num_threads() == 1, "the job gives the caller its thread count back"
    # The same training up to float rounding (on 2 threads a sum may run in another order).
    # Adam magnifies rounding in parameters whose true gradient is 0 (the key bias, which
    # softmax ignores), so weights get a tolerance of a fraction of one update (lr 3e-3).
    ours = load_file(str(out / "model" / "model.safetensors"))
    theirs = load_file(str(reference / "model" / "model.safetensors"))
    for name, tensor in theirs.items():
        torch.testing.assert_close(ours[name], tensor, rtol=0, atol=5e-4, msg=name)
    summaries = [json.loads((d / "summary.json").read_text()) for d in (reference, out)]
    assert summaries[0]["best_step"] == summaries[1]["best_step"]
    assert summaries[1]["best_dev_loss"] == pytest.approx(summaries[0]["best_dev_loss"], rel=1e-4)
